package sova

import (
	"context"
	"encoding/json"
	"time"
)

// Run states.
const (
	RunRunning     = "running"     // executing now
	RunWaiting     = "waiting"     // paused for the person (clarifying questions)
	RunCompleted   = "completed"   // answered
	RunFailed      = "failed"      // ended with an error
	RunCancelled   = "cancelled"   // stopped on request
	RunInterrupted = "interrupted" // the server stopped while it ran; it can be restarted
)

// Run is one execution of a mode. A run belongs to a chat, except runs
// started through the OpenAI-compatible endpoint, whose ChatID is empty.
type Run struct {
	ID       string `json:"id"`
	UserID   string `json:"userId"`
	ChatID   string `json:"chatId,omitempty"`
	Mode     string `json:"mode"`
	State    string `json:"state"`
	Question string `json:"question"`
	// Input is what the run engine needs to run it again (history, time
	// zone, clarification answer).
	Input json.RawMessage `json:"-"`
	// Pause is the mode's state while the run waits for the person.
	Pause     json.RawMessage `json:"pause,omitempty"`
	Error     string          `json:"error,omitempty"`
	Report    string          `json:"-"`
	HasReport bool            `json:"hasReport"`
	MessageID string          `json:"messageId,omitempty"`
	Usage     *Usage          `json:"usage,omitempty"`
	LastSeq   int64           `json:"lastSeq"`
	CreatedAt time.Time       `json:"createdAt"`
	UpdatedAt time.Time       `json:"updatedAt"`
}

// RunEvent is one event of a run's log, as JSON, numbered from 1.
type RunEvent struct {
	Seq   int64
	Event json.RawMessage
}

// RunFile describes one workspace file of a run.
type RunFile struct {
	Path      string    `json:"path"`
	Size      int       `json:"size"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// RunStore keeps runs, their event logs and their workspace files.
type RunStore interface {
	// CreateRun saves a new run; an empty ID is generated.
	CreateRun(ctx context.Context, r *Run) error
	// UpdateRun saves a run's state, pause, error, report, message id,
	// usage and last event number.
	UpdateRun(ctx context.Context, r *Run) error
	// GetRun returns one of the user's runs.
	GetRun(ctx context.Context, userID, runID string) (*Run, error)
	// LatestRun returns the newest run of one of the user's chats.
	LatestRun(ctx context.Context, userID, chatID string) (*Run, error)
	// RunsInState returns every user's runs in a state, oldest first (for
	// recovery at start-up).
	RunsInState(ctx context.Context, state string) ([]Run, error)
	// AppendRunEvents adds events to a run's log.
	AppendRunEvents(ctx context.Context, runID string, events []RunEvent) error
	// RunEvents returns a run's events with Seq > after, in order.
	RunEvents(ctx context.Context, runID string, after int64) ([]RunEvent, error)
	// PutRunFile creates or replaces a workspace file.
	PutRunFile(ctx context.Context, runID, path, content string) error
	// RunFile returns a workspace file's content (ErrNotFound if absent).
	RunFile(ctx context.Context, runID, path string) (string, error)
	// RunFiles lists a run's workspace files by path.
	RunFiles(ctx context.Context, runID string) ([]RunFile, error)
	// DeleteRunFiles removes a run's workspace.
	DeleteRunFiles(ctx context.Context, runID string) error
}
