package run

import (
	"context"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/sova-ai/sova/internal/lang"
	"github.com/sova-ai/sova/internal/llm"
)

// FollowUpper suggests questions a person may ask next, shown under an
// answer as one-click follow-ups.
type FollowUpper interface {
	FollowUps(ctx context.Context, question, answer string) ([]string, error)
}

// maxFollowUps is how many suggestions an answer gets at most.
const maxFollowUps = 3

// followUpTimeout bounds the wait for suggestions: the run's finish waits
// for them (they are asked for while the answer streams, see
// earlyFollowUps), so they must not hold it up for long.
const followUpTimeout = 15 * time.Second

// ModelFollowUps suggests follow-up questions with a (fast) model.
type ModelFollowUps struct{ Model llm.Model }

// FollowUps implements FollowUpper.
func (f ModelFollowUps) FollowUps(ctx context.Context, question, answer string) ([]string, error) {
	l := lang.Detect(question)
	resp, err := f.Model.Complete(ctx, llm.Request{Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "Suggest three short follow-up questions the person might ask next about this conversation, in " + l.Name +
			". Each must make sense on its own and go beyond what the answer already says. Reply with the questions only, one per line, without numbers."},
		{Role: llm.RoleUser, Content: "Question: " + question + "\n\nAnswer: " + clipRunes(answer, 3000)},
	}, MaxTokens: 200})
	if err != nil {
		return nil, err
	}
	return parseFollowUps(resp.Content), nil
}

// parseFollowUps reads the model's lines: list markers and quotes
// dropped, empty and repeated lines skipped, at most maxFollowUps.
func parseFollowUps(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimLeftFunc(line, func(r rune) bool {
			return unicode.IsSpace(r) || unicode.IsDigit(r) || strings.ContainsRune("-*•.)", r)
		})
		line = strings.Trim(strings.TrimSpace(line), "\"'«»“”")
		line = strings.Join(strings.Fields(line), " ")
		if line == "" || seen[strings.ToLower(line)] {
			continue
		}
		seen[strings.ToLower(line)] = true
		out = append(out, clipRunes(line, 200))
		if len(out) == maxFollowUps {
			break
		}
	}
	return out
}

// followUps asks for suggestions under an answer; failures are logged and
// leave none.
func (s *Service) followUps(ctx context.Context, p *Prepared, answer string) []string {
	if s.opt.FollowUps == nil || strings.TrimSpace(answer) == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, followUpTimeout)
	defer cancel()
	qs, err := s.opt.FollowUps.FollowUps(ctx, p.question, answer)
	if err != nil {
		s.opt.Logger.Warn("follow-up suggestions failed", "run", p.RunID, "err", err)
		return nil
	}
	return qs
}

// followUpStart is how much of the answer is enough to suggest what to ask
// next: the suggestions are asked for once the answer has this many
// bytes, while the rest of it streams, so they are ready when the answer
// ends instead of adding a model call after its last token.
const followUpStart = 600

// earlyFollowUps asks for suggestions while the answer is still being
// written. It is owned by one Execute: text is fed from the run's sink
// (modes may emit from several goroutines), result waits for the call or
// makes it, stop cancels it and waits.
type earlyFollowUps struct {
	s *Service
	p *Prepared

	mu      sync.Mutex
	answer  strings.Builder
	started bool
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{}
	qs      []string
}

func (s *Service) newEarlyFollowUps(ctx context.Context, p *Prepared) *earlyFollowUps {
	ctx, cancel := context.WithCancel(ctx)
	return &earlyFollowUps{s: s, p: p, ctx: ctx, cancel: cancel}
}

// text adds a piece of the answer and starts the call once there is
// enough of it.
func (f *earlyFollowUps) text(delta string) {
	if f.s.opt.FollowUps == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.started {
		return
	}
	f.answer.WriteString(delta)
	if f.answer.Len() < followUpStart {
		return
	}
	f.started = true
	f.done = make(chan struct{})
	answer := f.answer.String()
	go func() {
		defer close(f.done)
		f.qs = f.s.followUps(f.ctx, f.p, answer)
	}()
}

// result is the suggestions for the finished answer: those asked for
// while it streamed, or, for a short answer, asked for now.
func (f *earlyFollowUps) result(answer string) []string {
	f.mu.Lock()
	started, done := f.started, f.done
	f.started = true // a late delta starts nothing now
	f.mu.Unlock()
	if !started {
		return f.s.followUps(f.ctx, f.p, answer)
	}
	<-done // bounded by followUpTimeout
	return f.qs
}

// stop cancels a call still under way and waits for it.
func (f *earlyFollowUps) stop() {
	f.cancel()
	f.mu.Lock()
	done := f.done
	f.started = true
	f.mu.Unlock()
	if done != nil {
		<-done
	}
}
