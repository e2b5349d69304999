// Package chat is the chat mode (seed 001 §1): the model alone, no search,
// a structured answer {reasoning, answer, key_points} streamed as it is
// written.
package chat

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/lang"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
)

// Config tunes the chat mode (seed 001 §1).
type Config struct {
	HistoryLimit int     // SOVA_CHAT_HISTORY_LIMIT
	MaxTokens    int     // SOVA_CHAT_MAX_TOKENS (seed: 16384)
	Temperature  float64 // SOVA_TEMPERATURE
}

// Mode answers from the model alone: no search, no sources.
type Mode struct {
	cfg   Config
	model *llm.Client
}

// New returns the chat mode.
func New(cfg Config, model *llm.Client) *Mode {
	return &Mode{cfg: cfg, model: model}
}

// ID implements mode.Mode.
func (c *Mode) ID() string { return "chat" }

// Description implements mode.Mode.
func (c *Mode) Description() string {
	return "Conversation with the model alone: no web search, no sources."
}

// SynthesizedAnswer is the structured answer of seed 001 §1.
type SynthesizedAnswer struct {
	Reasoning string   `json:"reasoning" jsonschema:"brief reasoning behind the answer"`
	Answer    string   `json:"answer" jsonschema:"the answer in Markdown"`
	KeyPoints []string `json:"key_points" jsonschema:"the main points of the answer"`
}

// Validate rejects an empty answer so that it is asked for again.
func (a SynthesizedAnswer) Validate() error {
	if strings.TrimSpace(a.Answer) == "" {
		return errors.New("answer must not be empty")
	}
	return nil
}

// Run implements mode.Mode.
func (c *Mode) Run(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
	language := mode.LanguageOf(in)
	sys := fmt.Sprintf("You are a helpful AI assistant. Provide clear, accurate, and helpful responses.\n"+
		"Return JSON with fields reasoning, answer, key_points.\n"+
		"Write the answer and key points in %s, the language of the user's question.\n"+
		"Current date: %s", language.Name, mode.DateIn(in.Now, in.Timezone)) + mode.Personal(in)
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: sys}}
	msgs = append(msgs, mode.LastMessages(in.History, c.cfg.HistoryLimit)...)
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: in.Question})
	temp := c.cfg.Temperature

	mode.Status(sink, "answer", "Thinking", "")
	// The answer field is streamed as the model writes it. A re-ask after a
	// validation failure starts a new attempt; only text that extends what
	// was already shown is sent, so the person never sees text twice.
	var shown string
	raw := map[int]*strings.Builder{}
	onDelta := func(attempt int, delta string) {
		b := raw[attempt]
		if b == nil {
			b = &strings.Builder{}
			raw[attempt] = b
		}
		b.WriteString(delta)
		cur := partialField(b.String(), "answer")
		if len(cur) > len(shown) && strings.HasPrefix(cur, shown) {
			sink.Emit(mode.TextDelta(cur[len(shown):]))
			shown = cur
		}
	}
	ans, resp, err := llm.Structured[SynthesizedAnswer](ctx, c.model, llm.Request{
		Messages:    msgs,
		Temperature: &temp,
		MaxTokens:   c.cfg.MaxTokens,
	}, llm.WithSchemaName("SynthesizedAnswer"), llm.WithStreamDeltas(onDelta))
	if err != nil {
		return nil, fmt.Errorf("chat answer: %w", err)
	}
	text := ans.Answer
	if len(text) > len(shown) && strings.HasPrefix(text, shown) {
		sink.Emit(mode.TextDelta(text[len(shown):]))
	} else if shown == "" {
		sink.Emit(mode.TextDelta(text))
	} else if text != shown {
		// The final attempt diverged from what was streamed; what the person
		// saw stays the answer of record so the stored chat matches the screen.
		text = shown
	}
	if len(ans.KeyPoints) > 0 {
		var kp strings.Builder
		kp.WriteString("\n\n**" + keyPointsHeading(language) + "**\n")
		for _, p := range ans.KeyPoints {
			kp.WriteString("- " + strings.TrimSpace(p) + "\n")
		}
		sink.Emit(mode.TextDelta(kp.String()))
		text += kp.String()
	}
	return &mode.Result{
		Text:         text,
		Model:        resp.Model,
		FinishReason: mode.FinishReason(resp.FinishReason),
		Reasoning:    ans.Reasoning,
		KeyPoints:    ans.KeyPoints,
	}, nil
}

func keyPointsHeading(l lang.Language) string {
	switch l {
	case lang.Russian:
		return "Главное"
	case lang.Ukrainian:
		return "Головне"
	case lang.German:
		return "Das Wichtigste"
	case lang.French:
		return "Points clés"
	case lang.Spanish:
		return "Puntos clave"
	case lang.Italian:
		return "Punti chiave"
	case lang.Portuguese:
		return "Pontos principais"
	case lang.Polish:
		return "Najważniejsze"
	}
	return "Key points"
}
