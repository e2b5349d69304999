package llm

import (
	"regexp"
	"strings"
)

// reasoningName matches the names of models that reason before they
// answer: OpenAI's o-series and gpt-5, DeepSeek R1 and its distillations,
// QwQ, and models named for thinking.
var reasoningName = regexp.MustCompile(`(^|[/:_-])(o[1-9]([-:]|$)|gpt-5|r1([-:]|$)|deepseek-reasoner|qwq|.*thinking|.*reasoning)`)

// ReasoningModel reports whether a model reasons on its own, judged by its
// name; earlier answers keep their thinking blocks only for such a model.
func ReasoningModel(name string) bool {
	return reasoningName.MatchString(strings.ToLower(name))
}
