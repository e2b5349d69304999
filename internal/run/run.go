// Package run executes one question as a run: it checks the request, keeps
// the chat and its messages in the store, runs the mode with a time limit
// and token accounting, turns the outcome into start/usage/finish events,
// and titles new chats in the background. The HTTP server and the CLI both
// ask through a Service, so they behave the same.
package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/store"
)

// Errors a caller maps to a 4xx answer.
var (
	ErrUnknownMode   = errors.New("unknown mode")
	ErrEmptyQuestion = errors.New("no question: the last message must be a non-empty user message")
	ErrTooLong       = errors.New("question too long")
)

// Titler writes a short chat title from the first exchange.
type Titler interface {
	Title(ctx context.Context, question, answer string) (string, error)
}

// Options configure a Service.
type Options struct {
	Store            store.Store
	Modes            *mode.Registry
	Titler           Titler // nil disables titles
	Logger           *slog.Logger
	Timeout          time.Duration // per run; 0 means none
	MaxQuestionChars int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Service runs questions. Close waits for its background work.
type Service struct {
	opt    Options
	bg     sync.WaitGroup
	bgCtx  context.Context
	cancel context.CancelFunc
}

// NewService returns a Service.
func NewService(opt Options) *Service {
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Service{opt: opt, bgCtx: ctx, cancel: cancel}
}

// Close stops background work (chat titles) and waits for it, at most
// until ctx ends.
func (s *Service) Close(ctx context.Context) error {
	done := make(chan struct{})
	go func() { s.bg.Wait(); close(done) }()
	select {
	case <-done:
		s.cancel()
		return nil
	case <-ctx.Done():
		s.cancel()
		<-done
		return ctx.Err()
	}
}

// Modes returns the mode registry.
func (s *Service) Modes() *mode.Registry { return s.opt.Modes }

// Request is one question.
type Request struct {
	UserID string
	// ChatID names the chat; empty starts a new one. A chat id the store
	// does not know yet is created with that id (AI SDK clients choose ids).
	ChatID string
	Mode   string
	// Messages is the conversation as the client sent it; the last one is
	// the question.
	Messages []llm.Message
	Timezone string
	// Persist keeps the chat and its messages in the store.
	Persist bool
}

// Outcome is what a finished run leaves.
type Outcome struct {
	RunID     string
	ChatID    string
	MessageID string // the stored assistant message
	Result    *mode.Result
	Usage     event.Usage
	Err       error
}

// Prepared is a validated request ready to run: handlers validate before
// they answer with a stream, so bad input gets a plain JSON error.
type Prepared struct {
	req      Request
	mode     mode.Mode
	question string
	history  []llm.Message
	RunID    string
	ChatID   string
	// MessageID is the id the assistant message will be stored under.
	MessageID string
}

// Prepare validates a request and, when it is to be persisted, stores the
// chat and the question. Nothing is written if validation fails.
func (s *Service) Prepare(ctx context.Context, req Request) (*Prepared, error) {
	m, ok := s.opt.Modes.Get(req.Mode)
	if !ok {
		return nil, fmt.Errorf("%w %q; valid modes: %s", ErrUnknownMode, req.Mode, strings.Join(s.opt.Modes.IDs(), ", "))
	}
	if len(req.Messages) == 0 {
		return nil, ErrEmptyQuestion
	}
	last := req.Messages[len(req.Messages)-1]
	question := strings.TrimSpace(last.Content)
	if last.Role != llm.RoleUser || question == "" {
		return nil, ErrEmptyQuestion
	}
	if s.opt.MaxQuestionChars > 0 && len([]rune(question)) > s.opt.MaxQuestionChars {
		return nil, fmt.Errorf("%w: %d characters, the limit is %d (SOVA_MAX_QUESTION_CHARS)", ErrTooLong, len([]rune(question)), s.opt.MaxQuestionChars)
	}
	if req.UserID == "" {
		req.UserID = store.LocalUserID
	}
	p := &Prepared{
		req: req, mode: m, question: question,
		history: req.Messages[:len(req.Messages)-1],
		RunID:   uuid.NewString(), ChatID: req.ChatID, MessageID: uuid.NewString(),
	}
	if !req.Persist {
		return p, nil
	}
	chat, err := s.opt.Store.GetChat(ctx, req.UserID, req.ChatID)
	switch {
	case req.ChatID == "" || errors.Is(err, store.ErrNotFound):
		chat = &store.Chat{ID: req.ChatID, UserID: req.UserID, Mode: req.Mode}
		if err := s.opt.Store.CreateChat(ctx, chat); err != nil {
			return nil, fmt.Errorf("creating chat: %w", err)
		}
	case err != nil:
		return nil, fmt.Errorf("loading chat: %w", err)
	default:
		// A client that sends only the new question continues the stored
		// conversation.
		if len(p.history) == 0 {
			msgs, err := s.opt.Store.ListMessages(ctx, req.UserID, chat.ID)
			if err != nil {
				return nil, fmt.Errorf("loading chat history: %w", err)
			}
			for _, m := range msgs {
				if (m.Role == llm.RoleUser || m.Role == llm.RoleAssistant) && m.Content != "" {
					p.history = append(p.history, llm.Message{Role: m.Role, Content: m.Content})
				}
			}
		}
	}
	p.ChatID = chat.ID
	userMsg := &store.Message{ChatID: chat.ID, Role: llm.RoleUser, Content: question, Mode: req.Mode}
	userMsg.Parts, _ = json.Marshal([]map[string]string{{"type": "text", "text": question}})
	if err := s.opt.Store.AddMessage(ctx, req.UserID, userMsg); err != nil {
		return nil, fmt.Errorf("storing the question: %w", err)
	}
	return p, nil
}

// Execute runs a prepared request, emitting its events to sink, and stores
// the answer when the request is persisted. It always emits start and then
// either finish or error+finish. The returned Outcome carries the run's
// error, if any.
func (s *Service) Execute(ctx context.Context, p *Prepared, sink event.Sink) *Outcome {
	started := s.opt.Now()
	rec := &collector{}
	out := event.SinkFunc(func(e event.Event) { rec.Emit(e); sink.Emit(e) })
	out.Emit(event.Event{Type: event.TypeStart, Time: started, Start: &event.Start{
		RunID: p.RunID, ChatID: p.ChatID, MessageID: p.MessageID, Mode: p.mode.ID(),
	}})

	meter := &llm.Meter{}
	runCtx := llm.WithMeter(ctx, meter)
	var cancel context.CancelFunc = func() {}
	if s.opt.Timeout > 0 {
		runCtx, cancel = context.WithTimeout(runCtx, s.opt.Timeout)
	}
	res, err := p.mode.Run(runCtx, mode.Input{
		RunID: p.RunID, ChatID: p.ChatID, History: p.history, Question: p.question,
		Timezone: p.req.Timezone, Now: started,
	}, out)
	timedOut := errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	cancel()

	u := meter.Total()
	usage := event.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	o := &Outcome{RunID: p.RunID, ChatID: p.ChatID, MessageID: p.MessageID, Result: res, Usage: usage}
	out.Emit(event.Event{Type: event.TypeUsage, Time: s.opt.Now(), Usage: &usage})
	if err != nil {
		reason := event.FinishError
		msg := err.Error()
		switch {
		case timedOut:
			msg = fmt.Sprintf("the run took longer than %s (SOVA_RUN_TIMEOUT) and was stopped", s.opt.Timeout)
		case ctx.Err() != nil:
			reason, msg = event.FinishCancelled, "the run was cancelled"
		}
		o.Err = errors.New(msg)
		if reason == event.FinishError {
			s.opt.Logger.Error("run failed", "run", p.RunID, "mode", p.mode.ID(), "err", err)
			out.Emit(event.Event{Type: event.TypeError, Time: s.opt.Now(), Error: &event.Error{Message: msg}})
		}
		out.Emit(event.Event{Type: event.TypeFinish, Time: s.opt.Now(), Finish: &event.Finish{Reason: reason, Usage: usage}})
		s.storeAnswer(ctx, p, rec, nil, reason, msg, usage)
		return o
	}
	out.Emit(event.Event{Type: event.TypeFinish, Time: s.opt.Now(), Finish: &event.Finish{
		Reason: res.FinishReason, Sources: res.Sources, Usage: usage, Model: res.Model,
	}})
	s.storeAnswer(ctx, p, rec, res, res.FinishReason, "", usage)
	return o
}

// storeAnswer keeps the assistant message, also when the run failed or was
// cancelled (with what had streamed), so the chat shows what happened.
func (s *Service) storeAnswer(ctx context.Context, p *Prepared, rec *collector, res *mode.Result, reason, errMsg string, usage event.Usage) {
	if !p.req.Persist {
		return
	}
	// The request may be gone; the answer is kept regardless.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	msg := &store.Message{
		ID: p.MessageID, ChatID: p.ChatID, Role: llm.RoleAssistant, Mode: p.mode.ID(),
		FinishReason: reason, Error: errMsg, Usage: &usage,
	}
	text := rec.text()
	if res != nil {
		text = res.Text
		msg.Sources = res.Sources
		msg.Model = res.Model
		msg.ToolCalls = res.Steps
	}
	msg.Content = text
	parts := []map[string]any{}
	if res != nil && res.Reasoning != "" {
		parts = append(parts, map[string]any{"type": "reasoning", "text": res.Reasoning})
	}
	if text != "" {
		parts = append(parts, map[string]any{"type": "text", "text": text})
	}
	for _, src := range msg.Sources {
		parts = append(parts, map[string]any{"type": "source-url", "sourceId": fmt.Sprint(src.Number), "url": src.URL, "title": src.Title})
	}
	msg.Parts, _ = json.Marshal(parts)
	if err := s.opt.Store.AddMessage(ctx, p.req.UserID, msg); err != nil {
		s.opt.Logger.Error("storing answer failed", "run", p.RunID, "chat", p.ChatID, "err", err)
		return
	}
	if res != nil && s.opt.Titler != nil {
		s.titleInBackground(p, res.Text)
	}
}

// titleInBackground names a chat that has no title yet after its first
// answer, with the fast model, without holding up the answer.
func (s *Service) titleInBackground(p *Prepared, answer string) {
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		ctx, cancel := context.WithTimeout(s.bgCtx, time.Minute)
		defer cancel()
		chat, err := s.opt.Store.GetChat(ctx, p.req.UserID, p.ChatID)
		if err != nil || chat.Title != "" {
			return
		}
		title, err := s.opt.Titler.Title(ctx, p.question, answer)
		if err != nil {
			s.opt.Logger.Warn("chat title generation failed", "chat", p.ChatID, "err", err)
			title = fallbackTitle(p.question)
		}
		if err := s.opt.Store.SetChatTitle(ctx, p.req.UserID, p.ChatID, title); err != nil && !errors.Is(err, store.ErrNotFound) {
			s.opt.Logger.Warn("storing chat title failed", "chat", p.ChatID, "err", err)
		}
	}()
}

func fallbackTitle(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	if r := []rune(q); len(r) > 60 {
		return string(r[:57]) + "…"
	}
	return q
}

// collector keeps the text that streamed, for runs that end without a result.
type collector struct {
	mu sync.Mutex
	b  strings.Builder
}

func (c *collector) Emit(e event.Event) {
	if e.Type == event.TypeTextDelta {
		c.mu.Lock()
		c.b.WriteString(e.Text)
		c.mu.Unlock()
	}
}

func (c *collector) text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.String()
}
