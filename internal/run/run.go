// Package run executes questions as runs. A run is one execution of a mode:
// it is validated and stored before it starts, it runs detached from the
// request that started it (so a client may leave and come back), its events
// are numbered and logged so a stream can resume from any point, it can be
// cancelled, and a run cut short by a restart is marked interrupted and can
// be started again. Questions and answers are kept as chat messages. The
// HTTP server and the CLI both go through a Service, so they behave alike.
package run

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/sova-ai/sova"

	"github.com/google/uuid"

	"github.com/sova-ai/sova/internal/errtext"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/metrics"
	"github.com/sova-ai/sova/internal/mode"
)

// Errors a caller maps to a 4xx answer.
var (
	ErrUnknownMode    = errors.New("unknown mode")
	ErrEmptyQuestion  = errors.New("no question: the last message must be a non-empty user message")
	ErrTooLong        = errors.New("question too long")
	ErrNotRestartable = errors.New("only an interrupted, failed or cancelled run can be restarted")
	ErrNotRunning     = errors.New("the run is not running")
	ErrInvalidChatID  = errors.New("invalid chat id")
	// ErrRunInProgress refuses a question to a chat while one of its runs
	// is running: answers would interleave and nothing would say which
	// answers which. The client waits for the run to end (or cancels it).
	ErrRunInProgress = errors.New("a run of this chat is in progress")
	// ErrNoUser reports a context that carries no user (sova.WithUser):
	// every run acts for someone, and no user is ever assumed.
	ErrNoUser = errors.New("no user: the context names no user to act for")
	// ErrDecision is a structured decision (approve, decline) that names
	// no waiting run or an action the run does not hold.
	ErrDecision = errors.New("invalid decision")
)

// MaxChatIDLen is the longest chat id a client may choose.
const MaxChatIDLen = 128

// ValidChatID reports whether a client may name a chat id: 1 to
// MaxChatIDLen characters from A–Z, a–z, 0–9, '_' and '-'. That covers the
// ids Sova generates (UUIDs) and those clients do (the AI SDK's 16
// alphanumerics, UUIDs), and keeps ids safe in paths, headers and markup.
func ValidChatID(id string) bool {
	if len(id) == 0 || len(id) > MaxChatIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Causes of a run's context ending, which decide the state it ends in.
var (
	errShutdown = errors.New("server shutting down")
	errCancel   = errors.New("cancelled on request")
	errDeleted  = errors.New("the run's chat was deleted")
)

// Titler writes a short chat title from the first exchange.
type Titler interface {
	Title(ctx context.Context, question, answer string) (string, error)
}

// Store is what the run service keeps: the chats with the question and the
// answer, and the runs with their event logs and workspaces.
type Store interface {
	sova.ChatStore
	sova.RunStore
}

// Options configure a Service.
type Options struct {
	Store  Store
	Modes  *mode.Registry
	Titler Titler // nil disables titles
	// FollowUps suggests questions under a finished answer (the
	// data-followups part); nil disables them.
	FollowUps FollowUpper
	Logger    *slog.Logger
	Timeout   time.Duration // per run; 0 means none
	// ModeTimeouts overrides Timeout for modes that take longer by design
	// (deep_research runs for minutes).
	ModeTimeouts     map[string]time.Duration
	MaxQuestionChars int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Notifier connects the nodes sharing the store: the event writer
	// publishes which runs have new events, and a follower of a run that
	// runs on another node waits for them. Nil: one node, and a follower
	// of a run this process does not run polls the store.
	Notifier Notifier
	// NodeID names this node among those sharing the store; empty: a
	// random one. Lease is how long a run stays this node's without the
	// node renewing it (0: DefaultLease); the node renews every third of
	// it, and takes over the runs of nodes that stopped renewing.
	NodeID string
	Lease  time.Duration
	// Exclusive says this node is the only one on its store (the embedded
	// SQLite database): every run left running at start-up is its own from
	// before a restart, whatever its lease says.
	Exclusive bool
	// Limiter admits each run under the person's limits (nil: none).
	Limiter Limiter
	// Settings are each person's settings, read when a run starts: their
	// custom instructions and language go to the mode, their time zone
	// replaces the request's, their model SOVA_MODEL (nil: none).
	Settings sova.SettingsStore
	// ProFeatures makes custom instructions a pro feature (000 §6.2,
	// SOVA_PRO_FEATURES): a free account's are not used (pro.go).
	ProFeatures bool
	// Prune cuts the chat history a mode gets (seed 000 §7.3; the zero
	// value keeps it whole). Model is SOVA_MODEL, which with the person's
	// choice decides whether thinking blocks are kept.
	Prune mode.PruneOptions
	Model string
	// Usage keeps what each run used, per user and UTC day: "runs",
	// "tokens" and "searches" (the queries sent to search providers), for
	// `sova users usage` and GET /api/admin/usage (nil: not kept).
	Usage UsageRecorder
	// Metrics, when set, counts the runs this node executes and the
	// events waiting to be stored.
	Metrics *metrics.Metrics
	// MaxRunning is the most runs this node executes at once
	// (SOVA_MAX_RUNNING; 0: no bound); more wait in a queue after their
	// start event (admission.go).
	MaxRunning int
}

// DefaultLease is how long a run stays with a node that stops renewing it.
const DefaultLease = 15 * time.Second

// Notifier carries notices between the nodes sharing the store
// (internal/cluster): which runs have new events stored, and which runs a
// person asked to stop. Notices may be lost; the service reads the store
// and repeats cancels, so a lost one costs time only.
type Notifier interface {
	Publish(ctx context.Context, runIDs []string) error
	// Subscribe returns a channel that gets a token when the run has new
	// events, and the function that ends the subscription.
	Subscribe(runID string) (<-chan struct{}, func())
	// RequestCancel asks every node to stop the run; the one executing it
	// does.
	RequestCancel(ctx context.Context, runID string) error
	// OnCancel sets the function called with the id of each run a node
	// asked to stop (nil: none); it must not block.
	OnCancel(fn func(runID string))
}

// UsageRecorder adds to a user's counters of a day (sova.AccountStore).
type UsageRecorder interface {
	AddUsage(ctx context.Context, subject, counter, period string, n, limit int64) (int64, bool, error)
}

// Limiter counts a run against its user's limits before it is stored,
// or refuses it (limits.Limiter; the error tells a caller the status).
// release is called once the run has ended.
type Limiter interface {
	Admit(ctx context.Context, u sova.User, modeID string) (release func(), err error)
}

// Service runs questions. Close cancels detached runs (they end as
// interrupted) and waits for all background work.
type Service struct {
	opt    Options
	bg     sync.WaitGroup
	bgCtx  context.Context
	cancel context.CancelCauseFunc

	writer *eventWriter // stores every run's events
	slots  *admission   // the runs executing at once (admission.go)

	mu   sync.Mutex
	live map[string]*liveRun
	// cancelling holds the runs executing on other nodes whose cancel
	// this node repeats until they end (cancel.go).
	cancelling map[string]bool

	leases leaseState // renewal and take-over (lease.go)
}

// NewService returns a Service.
func NewService(opt Options) *Service {
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.NodeID == "" {
		opt.NodeID = uuid.NewString()
	}
	if opt.Lease <= 0 {
		opt.Lease = DefaultLease
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	s := &Service{opt: opt, bgCtx: ctx, cancel: cancel, live: map[string]*liveRun{}, cancelling: map[string]bool{},
		writer: newEventWriter(opt.Store, opt.Notifier, opt.Logger), slots: &admission{limit: opt.MaxRunning}}
	if opt.Notifier != nil {
		opt.Notifier.OnCancel(s.cancelRequested) // cancel.go
	}
	if err := opt.Metrics.Gauge("sova_run_events_waiting", "Run events emitted on this node and not yet stored (the event writer's backlog).",
		func() float64 { return float64(s.writer.waiting.Load()) }); err != nil {
		opt.Logger.Warn("run event metric not registered", "err", err)
	}
	s.startLeases()
	return s
}

// NodeID names this node.
func (s *Service) NodeID() string { return s.opt.NodeID }

// Close interrupts detached runs and waits for them and for chat titles,
// at most until ctx ends.
func (s *Service) Close(ctx context.Context) error {
	if s.opt.Notifier != nil {
		s.opt.Notifier.OnCancel(nil)
	}
	s.cancel(errShutdown)
	done := make(chan struct{})
	go func() { s.bg.Wait(); close(done) }()
	select {
	case <-done:
		// The runs have ended, their events stored: the writer stops.
		return s.writer.close(ctx)
	case <-ctx.Done():
		_ = s.writer.close(ctx)
		return ctx.Err()
	}
}

// Modes returns the mode registry.
func (s *Service) Modes() *mode.Registry { return s.opt.Modes }

// Request is one question, asked by the user of the context it is
// prepared in.
type Request struct {
	// ChatID names the chat; empty starts a new one. A chat id the store
	// does not know yet is created with that id (AI SDK clients choose ids).
	ChatID string
	// Mode is a mode id, or the id of a run waiting for the person's answer
	// (the OpenAI-compatible continuation of a paused run).
	Mode string
	// Messages is the conversation as the client sent it; the last one is
	// the question.
	Messages []llm.Message
	Timezone string
	// Persist keeps the chat and its messages in the store. The run itself
	// is always kept, so that it can be followed, cancelled and continued.
	Persist bool
	// Spaces are IDs of the user's document spaces to search as well;
	// WebSearch turns the docs mode's web search on or off (nil: default).
	Spaces    []string
	WebSearch *bool
	// Approve and Decline are a structured decision about the actions a
	// waiting run holds, by id (mode.Resume); the last message may then
	// be empty.
	Approve, Decline []string
	// Internal allows a mode that is not listed (mode.Unlisted): only
	// the endpoint that stands for it asks for one.
	Internal bool
	// Regenerate answers the chat's last stored question again instead of
	// storing the question anew: the new answer is another version of the
	// last one, and the one later questions go on from (regenerate.go).
	Regenerate bool
	// Edit rewrites the chat's last stored question: the question is
	// stored as a new version of it (replyTo the old one), answered from
	// the conversation before it; the old one and its answers stay stored
	// and leave the history.
	Edit bool
}

// runInput is what a run needs to be executed again.
type runInput struct {
	// QuestionID is the stored question the run's answer replies to.
	QuestionID string        `json:"questionId,omitempty"`
	History    []llm.Message `json:"history,omitempty"`
	Timezone   string        `json:"timezone,omitempty"`
	Persist    bool          `json:"persist"`
	Spaces     []string      `json:"spaces,omitempty"`
	WebSearch  *bool         `json:"webSearch,omitempty"`
	// MessageID is the answer's id, and Resume the person's answer to a
	// paused run: a node that takes the run over needs both.
	MessageID string       `json:"messageId,omitempty"`
	Resume    *mode.Resume `json:"resume,omitempty"`
	// UserName and Role are whom the run acts for as the request that
	// started (or resumed, or restarted) it knew them: what a mode may
	// offer (an MCP server granted to some, memories) depends on them,
	// also on a node that takes the run over.
	UserName string `json:"userName,omitempty"`
	Role     string `json:"role,omitempty"`
}

// actFor records whom the run acts for.
func (in *runInput) actFor(u sova.User) { in.UserName, in.Role = u.Name, u.Role }

// user is whom the run acts for.
func (in *runInput) user(id string) sova.User {
	return sova.User{ID: id, Name: in.UserName, Role: in.Role}
}

// pauseState is kept with a run waiting for the person.
type pauseState struct {
	Questions []string        `json:"questions"`
	State     json.RawMessage `json:"state,omitempty"`
	Actions   []string        `json:"actions,omitempty"`
}

// Outcome is what a finished run leaves.
type Outcome struct {
	RunID     string
	ChatID    string
	MessageID string // the stored assistant message
	Result    *mode.Result
	Usage     sova.Usage
	State     string
	Err       error
}

// Prepared is a validated request ready to run: handlers validate before
// they answer with a stream, so bad input gets a plain JSON error.
type Prepared struct {
	mode     mode.Mode
	userID   string
	question string
	history  []llm.Message
	input    runInput
	run      *sova.Run
	resume   *mode.Resume
	startSeq int64
	// continued: the run is executed again after its node stopped; its
	// start event was emitted then. shown is the text of its answer the
	// client was shown before (shownText).
	continued bool
	shown     string
	RunID     string
	ChatID    string
	// MessageID is the id the assistant message will be stored under.
	MessageID string
	// Resumed reports that the question answers a paused run.
	Resumed bool
	// release frees what the Limiter holds for the run (its place under
	// the cap on long runs) when the run ends.
	release func()
}

// ModeID is the id of the mode the run executes.
func (p *Prepared) ModeID() string { return p.mode.ID() }

// Persisted reports whether the chat and its messages are kept.
func (p *Prepared) Persisted() bool { return p.input.Persist }

// StartSeq is the number of the run's last event before this part of it:
// the stream of this request is the events after it (non-zero when a paused
// run continues).
func (p *Prepared) StartSeq() int64 { return p.startSeq }

// Prepare validates a request of the context's user (sova.UserFrom),
// stores the chat and the question (when persisted) and the run. Nothing is
// written if validation fails.
func (s *Service) Prepare(ctx context.Context, req Request) (_ *Prepared, err error) {
	user, ok := sova.UserFrom(ctx)
	if !ok {
		return nil, ErrNoUser
	}
	userID := user.ID
	if req.ChatID != "" && !ValidChatID(req.ChatID) {
		why := "it has other characters"
		if len(req.ChatID) > MaxChatIDLen {
			why = fmt.Sprintf("it is %d bytes long", len(req.ChatID))
		}
		return nil, fmt.Errorf("%w: a chat id is 1 to %d characters from A-Z, a-z, 0-9, \"_\" and \"-\", and %s; omit it to have one generated",
			ErrInvalidChatID, MaxChatIDLen, why)
	}
	m, ok := s.opt.Modes.Get(req.Mode)
	if u, unlisted := m.(mode.Unlisted); ok && unlisted && u.Unlisted() && !req.Internal {
		// An internal mode runs only behind the endpoint that stands for
		// it (assistant_task: POST /api/tasks/execute).
		ok = false
	}
	var waiting *sova.Run
	if !ok {
		// A paused run continues when it is named as the model.
		if r, err := s.opt.Store.GetRun(ctx, userID, req.Mode); err == nil && r.State == sova.RunWaiting {
			if m, ok = s.opt.Modes.Get(r.Mode); ok {
				waiting = r
			}
		}
		if !ok {
			return nil, fmt.Errorf("%w %q; valid modes: %s", ErrUnknownMode, req.Mode, strings.Join(s.opt.Modes.Listed(), ", "))
		}
	}
	decided := len(req.Approve) > 0 || len(req.Decline) > 0
	if decided && (len(req.Messages) == 0 || strings.TrimSpace(req.Messages[len(req.Messages)-1].Content) == "") {
		// A decision needs no words; the stored question says what it was.
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: decisionText(req.Approve, req.Decline)})
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
	release, err := s.admit(ctx, user, m.ID())
	if err != nil {
		return nil, err
	}
	p := &Prepared{
		mode: m, userID: userID, question: question,
		history: req.Messages[:len(req.Messages)-1],
		ChatID:  req.ChatID, MessageID: uuid.NewString(), release: release,
	}
	defer func() {
		if err != nil {
			release() // the run does not start
		}
	}()
	regenerates, edits := "", "" // the stored question answered again, or rewritten
	if req.Persist {
		chat, err := s.chatFor(ctx, userID, req.ChatID, m.ID())
		if err != nil {
			return nil, err
		}
		if req.Regenerate || req.Edit {
			if chat.MessageCount == 0 {
				return nil, ErrNothingToRegenerate
			}
			var last string
			if last, p.history, err = s.lastQuestion(ctx, userID, chat.ID, question, req.Regenerate); err != nil {
				return nil, err
			}
			if req.Regenerate {
				regenerates = last
			} else {
				edits = last
			}
		} else if chat.MessageCount > 0 {
			if waiting == nil {
				// The person's next message answers a run paused for them.
				if r, err := s.opt.Store.LatestRun(ctx, userID, chat.ID); err == nil && r.State == sova.RunWaiting && r.Mode == m.ID() {
					waiting = r
				}
			}
			// A client that sends only the new question continues the
			// stored conversation.
			if len(p.history) == 0 {
				if p.history, err = s.storedHistory(ctx, userID, chat.ID); err != nil {
					return nil, err
				}
			}
		}
		p.ChatID = chat.ID
	}
	// The run is stored before the question: the store holds one running
	// run per chat, so a question asked while another runs is refused here
	// and leaves nothing behind.
	questionID := regenerates
	if req.Persist && questionID == "" {
		questionID = uuid.NewString()
	}
	if decided && waiting == nil {
		return nil, fmt.Errorf("%w: approve and decline answer a run that waits for the person's decision; name the run (as the model or group) or its chat", ErrDecision)
	}
	if waiting != nil {
		var ps pauseState
		_ = json.Unmarshal(waiting.Pause, &ps)
		if err := checkDecision(ps.Actions, req.Approve, req.Decline); err != nil {
			return nil, err
		}
		p.resume = &mode.Resume{State: ps.State, Answer: question, Approve: req.Approve, Decline: req.Decline}
		p.Resumed = true
		p.run = waiting
		p.RunID = waiting.ID
		if p.ChatID == "" {
			p.ChatID = waiting.ChatID
		}
		_ = json.Unmarshal(waiting.Input, &p.input)
		p.question = waiting.Question
		p.history = p.input.History
		p.startSeq = waiting.LastSeq
		if questionID != "" {
			p.input.QuestionID = questionID // the answer replies to the person's answers
		}
		p.input.MessageID, p.input.Resume = p.MessageID, p.resume
		p.input.actFor(user)
		p.run.Input, _ = json.Marshal(p.input)
		p.run.State, p.run.Pause = sova.RunRunning, nil
		p.run.NodeID, p.run.LeaseUntil = s.opt.NodeID, s.leaseEnd()
		// Only while it still waits: of two answers at once (a client
		// retrying on another node), one resumes the run and the other is
		// refused before it touches the run or its log.
		if err := s.opt.Store.ResumeRun(ctx, p.run); err != nil {
			if errors.Is(err, sova.ErrConflict) {
				return nil, ErrRunInProgress
			}
			return nil, fmt.Errorf("resuming run %s: %w", waiting.ID, err)
		}
	} else {
		p.input = runInput{QuestionID: questionID, History: p.history, Timezone: req.Timezone, Persist: req.Persist, Spaces: req.Spaces, WebSearch: req.WebSearch,
			MessageID: p.MessageID}
		p.input.actFor(user)
		in, _ := json.Marshal(p.input)
		p.run = &sova.Run{UserID: userID, ChatID: p.ChatID, Mode: m.ID(), State: sova.RunRunning, Question: question, Input: in,
			NodeID: s.opt.NodeID, LeaseUntil: s.leaseEnd()}
		if err := s.opt.Store.CreateRun(ctx, p.run); err != nil {
			if errors.Is(err, sova.ErrConflict) {
				return nil, ErrRunInProgress
			}
			return nil, fmt.Errorf("storing the run: %w", err)
		}
		p.RunID = p.run.ID
	}
	if req.Persist && regenerates == "" {
		userMsg := &sova.Message{ID: questionID, ChatID: p.ChatID, Role: llm.RoleUser, Content: question, Mode: m.ID(), ReplyTo: edits}
		userMsg.Parts, _ = json.Marshal([]map[string]string{{"type": "text", "text": question}})
		if err := s.opt.Store.AddMessage(ctx, userID, userMsg); err != nil {
			// The run never starts: end it, so the chat takes questions again.
			p.run.State, p.run.Error = sova.RunFailed, "the question could not be stored"
			if err2 := s.opt.Store.UpdateRun(context.WithoutCancel(ctx), p.run); err2 != nil {
				s.opt.Logger.Error("ending a run whose question was not stored failed", "run", p.RunID, "err", err2)
			}
			return nil, fmt.Errorf("storing the question: %w", err)
		}
	}
	return p, nil
}

// chatFor returns the user's chat id, creating it when id is empty or not
// stored yet (clients choose ids). Two first questions to a new id at once
// both get the one chat.
func (s *Service) chatFor(ctx context.Context, userID, id, modeID string) (*sova.Chat, error) {
	if id != "" {
		chat, err := s.opt.Store.GetChat(ctx, userID, id)
		if err == nil {
			return chat, nil
		}
		if !errors.Is(err, sova.ErrNotFound) {
			return nil, fmt.Errorf("loading chat: %w", err)
		}
	}
	chat := &sova.Chat{ID: id, UserID: userID, Mode: modeID}
	err := s.opt.Store.CreateChat(ctx, chat)
	if errors.Is(err, sova.ErrConflict) && id != "" {
		// Created meanwhile by a concurrent request (of this user: another
		// user's chat stays not found).
		if chat, err := s.opt.Store.GetChat(ctx, userID, id); err == nil {
			return chat, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("creating chat: %w", err)
	}
	return chat, nil
}

// admit counts a run against the user's limits: the one place every run
// (API, OpenAI-compatible endpoint, agents, restarts, the CLI) passes.
// The local user (an installation without accounts, the CLI) owns the
// installation and has no limits, as an admin has none.
func (s *Service) admit(ctx context.Context, u sova.User, modeID string) (func(), error) {
	if s.opt.Limiter == nil || u.ID == sova.LocalUserID {
		return func() {}, nil
	}
	return s.opt.Limiter.Admit(ctx, u, modeID)
}

func (s *Service) storedHistory(ctx context.Context, userID, chatID string) ([]llm.Message, error) {
	msgs, err := s.opt.Store.ListMessages(ctx, userID, chatID)
	if err != nil {
		return nil, fmt.Errorf("loading chat history: %w", err)
	}
	return historyOf(msgs), nil
}

// Start runs a prepared request detached from the caller: it goes on when
// the client disconnects, and ends at its time limit, on Cancel, or as
// interrupted when the service closes. Follow streams its events.
func (s *Service) Start(p *Prepared) {
	ctx, cancel := context.WithCancelCause(s.bgCtx)
	lr := newLiveRun(p.userID, p.ChatID, p.run.LastSeq, cancel)
	lr.durable = isDurable(p.mode)
	s.mu.Lock()
	s.live[p.RunID] = lr
	s.mu.Unlock()
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		defer cancel(nil)
		s.execute(ctx, p, lr, event.Discard)
	}()
}

// Execute runs a prepared request in the caller's context, emitting its
// events to sink as well as to the run's log. It always emits start and
// then either finish or error+finish. The Outcome carries the run's error.
func (s *Service) Execute(ctx context.Context, p *Prepared, sink event.Sink) *Outcome {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	lr := newLiveRun(p.userID, p.ChatID, p.run.LastSeq, cancel)
	lr.durable = isDurable(p.mode)
	s.mu.Lock()
	s.live[p.RunID] = lr
	s.mu.Unlock()
	return s.execute(ctx, p, lr, sink)
}

func (s *Service) execute(ctx context.Context, p *Prepared, lr *liveRun, sink event.Sink) *Outcome {
	modeID := p.mode.ID()
	s.opt.Metrics.RunStarted(modeID, p.continued)
	outcome := "panicked"
	defer func() { s.opt.Metrics.RunFinished(modeID, outcome) }()
	o := s.executeRun(ctx, p, lr, sink)
	outcome = string(o.State)
	if o.State == sova.RunRunning { // handed back on drain: another node goes on with it
		outcome = "handed_back"
	}
	return o
}

func (s *Service) executeRun(ctx context.Context, p *Prepared, lr *liveRun, sink event.Sink) *Outcome {
	log := newEventLog(s.writer, p.RunID, p.run.LastSeq, lr, s.opt.Logger)
	defer func() {
		log.close(drainTimeout) // at once on the usual paths, where it was closed already
		s.mu.Lock()
		delete(s.live, p.RunID)
		s.mu.Unlock()
		lr.finish()
		if p.release != nil {
			p.release()
		}
	}()
	started := s.opt.Now()
	rec := newCollector()
	rec.b.WriteString(p.shown)
	meter := &llm.Meter{}
	if p.run.Usage != nil { // a resumed run keeps counting
		meter.Add(llm.Usage{PromptTokens: p.run.Usage.InputTokens, CompletionTokens: p.run.Usage.OutputTokens, TotalTokens: p.run.Usage.TotalTokens})
	}
	// A resumed run's earlier part was recorded by the node that ran it,
	// and the run itself was counted when it first started.
	used := s.newTally(p.run.UserID, started, meter)
	s.mu.Lock()
	lr.tally = used
	s.mu.Unlock()
	if !p.continued {
		s.countRun(context.WithoutCancel(ctx), p.run.UserID, started)
	}
	early := s.newEarlyFollowUps(ctx, p)
	defer early.stop()
	out := event.SinkFunc(func(e event.Event) {
		if e.Time.IsZero() {
			e.Time = s.opt.Now()
		}
		if e.Type == event.TypeQuery && e.Query != nil && e.Query.Status == event.QueryStarted {
			used.searches.Add(1)
		}
		if e.Type == event.TypeTextDelta {
			early.text(e.Text)
		}
		e = log.add(e)
		rec.Emit(e)
		sink.Emit(e)
	})
	modeOut := event.Sink(out)
	var filter *textFilter
	start := event.Event{Type: event.TypeStart, Start: &event.Start{
		RunID: p.RunID, ChatID: p.ChatID, MessageID: p.MessageID, Mode: p.mode.ID(),
	}}
	if p.continued {
		if p.run.LastSeq == 0 {
			// Its node stopped before any of its events were stored (they
			// are written in batches): for every follower the run begins here.
			out.Emit(start)
		}
		mode.Status(out, "continue", "Continuing the run from its last checkpoint", "its node stopped; node "+s.opt.NodeID+" took it over")
		if p.shown != "" {
			filter = &textFilter{next: out, shown: p.shown, runID: p.RunID}
			modeOut = filter
		}
	} else {
		out.Emit(start)
	}

	// Modes and tools read whom they act for from the context: the run's
	// user, also when the run is detached from the request that started it.
	runCtx := llm.WithMeter(sova.WithUser(ctx, p.input.user(p.run.UserID)), meter)
	settings := s.userSettings(ctx, p.run.UserID)
	runCtx = llm.WithModel(runCtx, settings.Model)
	tz := cmp.Or(settings.TimeZone, p.input.Timezone)
	prune := s.opt.Prune
	prune.Reasoning = llm.ReasoningModel(cmp.Or(settings.Model, s.opt.Model))
	var cancelTimeout context.CancelFunc = func() {}
	limit := s.opt.Timeout
	if d, ok := s.opt.ModeTimeouts[p.mode.ID()]; ok {
		limit = d
	}
	if limit > 0 {
		runCtx, cancelTimeout = context.WithTimeout(runCtx, limit)
	}
	// Beyond SOVA_MAX_RUNNING the run waits here, after its start event,
	// and its stream says where it is in the queue (admission.go).
	var res *mode.Result
	freeSlot, err := s.slots.acquire(runCtx, func(ahead int) {
		mode.Status(out, "queue", fmt.Sprintf("Waiting for a free slot: %d runs ahead", ahead), "the server runs at most SOVA_MAX_RUNNING runs at once")
	})
	if err == nil {
		res, err = p.mode.Run(runCtx, mode.Input{
			RunID: p.RunID, OriginRunID: p.run.OriginID, ChatID: p.ChatID, UserID: userOf(runCtx), Question: p.question,
			// The one place a chat's history is handed to the modes.
			History:  mode.PruneHistory(p.history, p.question, prune),
			Timezone: tz, Now: started,
			Instructions: s.instructions(p.input.user(p.run.UserID), settings.CustomInstructions), Language: settings.Language, Preferences: settings.Preferences,
			Workspace: &workspace{store: s.opt.Store, runID: p.RunID},
			Resume:    p.resume,
			Spaces:    p.input.Spaces, WebSearch: p.input.WebSearch,
			Continued: p.continued,
		}, modeOut)
		freeSlot()
	}
	if err == nil && filter != nil {
		filter.end()
	}
	timedOut := errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	cancelTimeout()
	if err != nil && s.handBack(ctx, p, log, used, err) {
		lr.handedBack.Store(true)
		return &Outcome{RunID: p.RunID, ChatID: p.ChatID, MessageID: p.MessageID, State: sova.RunRunning, Err: err}
	}

	u := meter.Total()
	usage := sova.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	o := &Outcome{RunID: p.RunID, ChatID: p.ChatID, MessageID: p.MessageID, Result: res, Usage: usage}
	used.flush(context.WithoutCancel(ctx))
	out.Emit(event.Event{Type: event.TypeUsage, Usage: &usage})
	run := p.run
	run.Usage = &usage
	if err != nil {
		// A failure's message reaches the stream, the stored answer and
		// /v1: the person's part of it, never SQL, an address or Go's
		// words, with an error id the log line below carries too.
		errID := errtext.NewID()
		failed := errtext.ForPerson(err)
		if failed == "" {
			// What the text says before its internal part, if anything.
			failed = errtext.Cut(errtext.Scrub(err.Error()))
		}
		if failed == "" {
			failed = "the run failed"
		}
		state, reason, msg := sova.RunFailed, event.FinishError, failed+" (error id "+errID+")"
		switch cause := context.Cause(ctx); {
		case timedOut:
			msg = fmt.Sprintf("the run took longer than its limit of %s and was stopped (SOVA_RUN_TIMEOUT, SOVA_DEEP_RESEARCH_TIMEOUT)", limit)
		case errors.Is(cause, errShutdown):
			state, reason, msg = sova.RunInterrupted, event.FinishCancelled, "the server stopped while this ran; restart it with POST /api/runs/"+p.RunID+"/restart"
		case ctx.Err() != nil:
			state, reason, msg = sova.RunCancelled, event.FinishCancelled, "the run was cancelled"
		}
		o.Err, o.State = errors.New(msg), state
		if state != sova.RunCancelled {
			if state == sova.RunFailed {
				s.opt.Logger.Error("run failed", "run", p.RunID, "mode", p.mode.ID(), "error_id", errID, "err", errtext.Detail(err))
			}
			out.Emit(event.Event{Type: event.TypeError, Error: &event.Error{Message: msg}})
		}
		out.Emit(event.Event{Type: event.TypeFinish, Finish: &event.Finish{Reason: reason, Usage: usage}})
		keepCtx, cancelKeep := s.endEvents(ctx, log)
		defer cancelKeep()
		// The workspace is kept only for runs that succeed (seed 001 §4).
		if err := s.opt.Store.DeleteRunFiles(keepCtx, p.RunID); err != nil {
			s.opt.Logger.Error("removing workspace failed", "run", p.RunID, "err", err)
		}
		run.State, run.Error = state, msg
		run.MessageID = s.storeAnswer(keepCtx, p, rec, nil, reason, msg, usage, nil)
		s.saveRun(keepCtx, run, log)
		return o
	}
	if res.Pause != nil {
		out.Emit(event.Event{Type: event.TypeData, Data: dataOf("clarification", "clarification-"+p.RunID,
			map[string]any{"runId": p.RunID, "questions": res.Pause.Questions})})
	}
	var followUps []string
	if res.Pause == nil {
		followUps = early.result(res.Text)
	}
	if len(followUps) > 0 {
		out.Emit(event.Event{Type: event.TypeData, Data: dataOf("followups", "followups-"+p.RunID, map[string]any{"questions": followUps})})
	}
	if res.Report != "" {
		// The same part the stored message carries, so a live client shows
		// the download card without reading the chat again.
		out.Emit(event.Event{Type: event.TypeData, Data: dataOf("report", "report-"+p.RunID, reportPart(p.RunID))})
	}
	out.Emit(event.Event{Type: event.TypeFinish, Finish: &event.Finish{
		Reason: res.FinishReason, Sources: res.Sources, Usage: usage, Model: res.Model,
	}})
	keepCtx, cancelKeep := s.endEvents(ctx, log)
	defer cancelKeep()
	o.State = sova.RunCompleted
	run.State, run.Error, run.Report = sova.RunCompleted, "", res.Report
	if res.Pause != nil {
		o.State, run.State = sova.RunWaiting, sova.RunWaiting
		run.Pause, _ = json.Marshal(pauseState{Questions: res.Pause.Questions, State: res.Pause.State, Actions: res.Pause.Actions})
	}
	run.MessageID = s.storeAnswer(keepCtx, p, rec, res, res.FinishReason, "", usage, followUps)
	s.saveRun(keepCtx, run, log)
	// A run that pauses for the person's answers (sgr_agent and
	// deep_research ask before they start) titles its chat too: many such
	// chats are left at the questions.
	if p.input.Persist && s.opt.Titler != nil {
		s.titleInBackground(p, res.Text)
	}
	return o
}

// userSettings are the person's settings; a store that fails leaves the
// run with the defaults (logged), rather than failing it.
func (s *Service) userSettings(ctx context.Context, userID string) sova.UserSettings {
	if s.opt.Settings == nil {
		return sova.UserSettings{}
	}
	us, err := s.opt.Settings.UserSettings(ctx, userID)
	if err != nil {
		s.opt.Logger.Error("reading user settings failed", "user", userID, "err", err)
		return sova.UserSettings{}
	}
	return us
}

// userOf is the id of the user ctx acts for ("" if none).
func userOf(ctx context.Context) string {
	u, _ := sova.UserFrom(ctx)
	return u.ID
}

// endEvents closes the run's event log after its last event, waiting until
// its events are stored, so that a replay after a restart has every event
// the final state written next counts (unless the store stays unreachable
// for all of drainTimeout; see eventLog). It returns
// the context for what the run leaves: the request may be gone, and what
// the run produced is kept regardless.
func (s *Service) endEvents(ctx context.Context, log *eventLog) (context.Context, context.CancelFunc) {
	log.close(drainTimeout)
	return context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
}

func (s *Service) saveRun(ctx context.Context, run *sova.Run, log *eventLog) {
	run.LastSeq = log.last()
	if err := s.opt.Store.UpdateRun(ctx, run); err != nil {
		s.opt.Logger.Error("storing run state failed", "run", run.ID, "err", err)
	}
}

// reportPart is the data of a data-report part: where the run's report is.
func reportPart(runID string) map[string]any {
	return map[string]any{
		"runId": runID, "markdownUrl": "/api/runs/" + runID + "/report.md", "pdfUrl": "/api/runs/" + runID + "/report.pdf",
	}
}

func dataOf(name, id string, v any) *event.Data {
	b, _ := json.Marshal(v)
	return &event.Data{Name: name, ID: id, Value: b}
}

// storeAnswer keeps the assistant message, also when the run failed or was
// cancelled (with what had streamed), so the chat shows what happened. It
// returns the message id, or "" when nothing was stored.
func (s *Service) storeAnswer(ctx context.Context, p *Prepared, rec *collector, res *mode.Result, reason, errMsg string, usage sova.Usage, followUps []string) string {
	if !p.input.Persist || p.ChatID == "" {
		return ""
	}
	msg := &sova.Message{
		ID: p.MessageID, ChatID: p.ChatID, Role: llm.RoleAssistant, Mode: p.mode.ID(),
		FinishReason: reason, Error: errMsg, Usage: &usage, ReplyTo: p.input.QuestionID,
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
	if res == nil {
		// A run stopped or failed part way: the work it showed (steps,
		// sources found, cited sources) stays with the message, so the chat
		// shows after a reload what it showed live.
		var progress []map[string]any
		msg.Sources, progress = rec.progress()
		parts = append(parts, progress...)
	}
	if res != nil && res.Reasoning != "" {
		parts = append(parts, map[string]any{"type": "reasoning", "text": res.Reasoning})
	}
	if text != "" {
		parts = append(parts, map[string]any{"type": "text", "text": text})
	}
	for _, src := range msg.Sources {
		parts = append(parts, map[string]any{"type": "source-url", "sourceId": fmt.Sprint(src.Number), "url": src.URL, "title": src.Title})
	}
	if res != nil && res.Pause != nil {
		parts = append(parts, map[string]any{"type": "data-clarification", "data": map[string]any{"runId": p.RunID, "questions": res.Pause.Questions}})
	}
	if len(followUps) > 0 {
		parts = append(parts, map[string]any{"type": "data-followups", "data": map[string]any{"questions": followUps}})
	}
	if res != nil && res.Report != "" {
		parts = append(parts, map[string]any{"type": "data-report", "data": reportPart(p.RunID)})
	}
	msg.Parts, _ = json.Marshal(parts)
	if err := s.opt.Store.AddMessage(ctx, p.userID, msg); err != nil {
		s.opt.Logger.Error("storing answer failed", "run", p.RunID, "chat", p.ChatID, "err", err)
		return ""
	}
	return msg.ID
}

// titleInBackground names a chat that has no title yet after its first
// answer, with the fast model, without holding up the answer.
func (s *Service) titleInBackground(p *Prepared, answer string) {
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		// Not tied to the service's context: a title in flight is worth
		// finishing while the server shuts down, and Close waits for it.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		chat, err := s.opt.Store.GetChat(ctx, p.userID, p.ChatID)
		if err != nil || chat.Title != "" {
			return
		}
		title, err := s.opt.Titler.Title(ctx, p.question, answer)
		if err != nil {
			s.opt.Logger.Warn("chat title generation failed", "chat", p.ChatID, "err", err)
			title = fallbackTitle(p.question)
		}
		// The person may have named the chat (PATCH /api/chats/{id}) while
		// the model wrote: their title stays.
		if chat, err := s.opt.Store.GetChat(ctx, p.userID, p.ChatID); err != nil || chat.Title != "" {
			return
		}
		if err := s.opt.Store.SetChatTitle(ctx, p.userID, p.ChatID, title); err != nil && !errors.Is(err, sova.ErrNotFound) {
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
