package run

import (
	"context"
	"errors"
	"strings"

	"github.com/sova-ai/sova/internal/lang"
	"github.com/sova-ai/sova/internal/llm"
)

// ModelTitler titles chats with a (fast) model.
type ModelTitler struct{ Model llm.Model }

// Title implements Titler.
func (t ModelTitler) Title(ctx context.Context, question, answer string) (string, error) {
	l := lang.Detect(question)
	resp, err := t.Model.Complete(ctx, llm.Request{Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "Write a short title (at most 6 words) for this conversation, in " + l.Name +
			". Reply with the title only: no quotes, no final period."},
		{Role: llm.RoleUser, Content: "Question: " + question + "\n\nAnswer: " + clipRunes(answer, 1000)},
	}, MaxTokens: 30})
	if err != nil {
		return "", err
	}
	title := strings.Trim(strings.TrimSpace(resp.Content), "\"'«»“”.")
	if line, _, ok := strings.Cut(title, "\n"); ok {
		title = line
	}
	if title == "" {
		return "", errors.New("the model returned an empty title")
	}
	return clipRunes(title, 80), nil
}

func clipRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}
