package tools

import (
	"context"
	"errors"
	"strings"

	"github.com/sova-ai/sova/internal/agent"
)

// TextTranslateName is the web group's translation tool (seed 000 §1.2).
const TextTranslateName = "text_translate"

// TextTranslateArgs are text_translate's arguments.
type TextTranslateArgs struct {
	Text string `json:"text" jsonschema:"the text to translate"`
	To   string `json:"to" jsonschema:"the language to translate into, as a name or an ISO 639-1 code (en, ru, de, …)"`
	From string `json:"from,omitempty" jsonschema:"the text's language when known; detected otherwise"`
}

// TextTranslateResult is text_translate's output.
type TextTranslateResult struct {
	TranslatedText   string `json:"translatedText"`
	To               string `json:"to"`
	DetectedLanguage string `json:"detectedLanguage,omitempty"`
}

// TextTranslate is the text_translate tool: the run's (fast) model
// translates the text; there is no translation service to configure.
func TextTranslate(run *Run) agent.Tool {
	call := func(ctx context.Context, a TextTranslateArgs) (agent.Output, error) {
		if run.p.Model == nil {
			return agent.Output{}, errors.New("translation is not available")
		}
		if strings.TrimSpace(a.Text) == "" || strings.TrimSpace(a.To) == "" {
			return agent.Output{}, errors.New("give the text and the language to translate into")
		}
		sys := "You are a translator. Translate the user's text into " + a.To + ". Keep its meaning, tone, formatting, names and numbers. " +
			"Reply with the translation only: no quotes, notes or explanations."
		if a.From != "" {
			sys += " The text is in " + a.From + "."
		}
		out, err := Condense(ctx, run.p.Model, sys, a.Text)
		if err != nil {
			return agent.Output{}, err
		}
		return jsonOutput(TextTranslateResult{TranslatedText: out, To: a.To, DetectedLanguage: a.From}, "Translated into "+a.To)
	}
	return agent.NewTool(TextTranslateName, "Translate a text into another language.", call,
		agent.WithTitle(func(a TextTranslateArgs) string { return "Translating into " + a.To }))
}
