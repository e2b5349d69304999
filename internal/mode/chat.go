package mode

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/lang"
	"github.com/sova-ai/sova/internal/llm"
)

// ChatConfig tunes the chat mode (seed 001 §1).
type ChatConfig struct {
	HistoryLimit int     // SOVA_CHAT_HISTORY_LIMIT
	MaxTokens    int     // SOVA_CHAT_MAX_TOKENS (seed: 16384)
	Temperature  float64 // SOVA_TEMPERATURE
}

// Chat answers from the model alone: no search, no sources.
type Chat struct {
	cfg   ChatConfig
	model *llm.Client
}

// NewChat returns the chat mode.
func NewChat(cfg ChatConfig, model *llm.Client) *Chat {
	return &Chat{cfg: cfg, model: model}
}

// ID implements Mode.
func (c *Chat) ID() string { return "chat" }

// Description implements Mode.
func (c *Chat) Description() string {
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

// Run implements Mode.
func (c *Chat) Run(ctx context.Context, in Input, sink event.Sink) (*Result, error) {
	language := lang.Detect(in.Question)
	sys := fmt.Sprintf("You are a helpful AI assistant. Provide clear, accurate, and helpful responses.\n"+
		"Return JSON with fields reasoning, answer, key_points.\n"+
		"Write the answer and key points in %s, the language of the user's question.\n"+
		"Current date: %s", language.Name, dateIn(in.Now, in.Timezone))
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: sys}}
	msgs = append(msgs, lastMessages(in.History, c.cfg.HistoryLimit)...)
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: in.Question})
	temp := c.cfg.Temperature

	status(sink, "answer", "Thinking", "")
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
			sink.Emit(textDelta(cur[len(shown):]))
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
		sink.Emit(textDelta(text[len(shown):]))
	} else if shown == "" {
		sink.Emit(textDelta(text))
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
		sink.Emit(textDelta(kp.String()))
		text += kp.String()
	}
	return &Result{
		Text:         text,
		Model:        resp.Model,
		FinishReason: finishReason(resp.FinishReason),
		Reasoning:    ans.Reasoning,
		KeyPoints:    ans.KeyPoints,
	}, nil
}

func keyPointsHeading(l lang.Language) string {
	if l == lang.Russian {
		return "Главное"
	}
	return "Key points"
}

func textDelta(s string) event.Event {
	return event.Event{Type: event.TypeTextDelta, Time: time.Now(), Text: s}
}

func finishReason(r string) string {
	switch r {
	case "length":
		return event.FinishLength
	default:
		return event.FinishStop
	}
}

// dateIn formats the current date in the person's time zone when it is
// known, so "today" means their today.
func dateIn(now time.Time, tz string) string {
	if now.IsZero() {
		now = time.Now()
	}
	if tz != "" {
		if loc, err := time.LoadLocation(tz); err == nil {
			now = now.In(loc)
		}
	}
	return now.Format("Monday, 2 January 2006")
}
