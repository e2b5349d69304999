package llm

import "testing"

func TestReasoningModel(t *testing.T) {
	for name, want := range map[string]bool{
		"o1": true, "o3-mini": true, "o4-mini-2025-04-16": true, "gpt-5": true, "gpt-5-mini": true,
		"deepseek-reasoner": true, "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B": true, "deepseek-r1:14b": true, "Qwen/QwQ-32B": true,
		"claude-3-7-sonnet-thinking": true, "gpt-4o-mini": false, "gpt-4o": false, "llama3.1:8b": false,
		"qwen2.5:32b": false, "mistral-large": false, "omni-moderation": false, "": false,
	} {
		if got := ReasoningModel(name); got != want {
			t.Errorf("ReasoningModel(%q) = %v, want %v", name, got, want)
		}
	}
}
