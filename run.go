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
	// RetryOf is the run this one restarts; a run is restarted at most
	// once (a second restart finds this one). OriginID is the first run of
	// the chain of restarts, where state kept under a run's id lives.
	RetryOf  string `json:"retryOf,omitempty"`
	OriginID string `json:"originId,omitempty"`
	// NodeID names the node executing a running run, which holds it until
	// LeaseUntil and renews the lease while the run goes on; a run whose
	// lease has passed lost its node and is taken over by another.
	NodeID     string    `json:"nodeId,omitempty"`
	LeaseUntil time.Time `json:"-"`
	CreatedAt  time.Time `json:"createdAt"`
	UpdatedAt  time.Time `json:"updatedAt"`
}

// RunEvent is one event of a run's log, as JSON, numbered from 1. RunID
// names the run where events of several runs travel together
// (AppendEvents).
type RunEvent struct {
	RunID string
	Seq   int64
	Event json.RawMessage
}

// RunFile describes one workspace file of a run.
type RunFile struct {
	Path string `json:"path"`
	Size int    `json:"size"`
	// ContentType is the file's media type: text files written as text
	// are "text/markdown; charset=utf-8", files written as bytes (charts,
	// PDFs) carry the type they were written with.
	ContentType string    `json:"contentType"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// TextFileType is the content type of run files written as text.
const TextFileType = "text/markdown; charset=utf-8"

// RunStore keeps runs, their event logs and their workspace files.
type RunStore interface {
	// CreateRun saves a new run; an empty ID is generated.
	CreateRun(ctx context.Context, r *Run) error
	// UpdateRun saves a run's state, pause, error, report, message id,
	// usage, last event number, node and lease.
	UpdateRun(ctx context.Context, r *Run) error
	// ResumeRun saves a run paused for the person as UpdateRun does, but
	// only while it still waits (RunWaiting): ErrConflict when another
	// request, on any node, resumed or ended it first.
	ResumeRun(ctx context.Context, r *Run) error
	// GetRun returns one of the user's runs.
	GetRun(ctx context.Context, userID, runID string) (*Run, error)
	// LatestRun returns the newest run of one of the user's chats.
	LatestRun(ctx context.Context, userID, chatID string) (*Run, error)
	// RestartOf returns the run that restarts one of the user's runs
	// (the run whose RetryOf is runID), or ErrNotFound.
	RestartOf(ctx context.Context, userID, runID string) (*Run, error)
	// RunsInState returns every user's runs in a state, oldest first (for
	// recovery at start-up).
	RunsInState(ctx context.Context, state string) ([]Run, error)
	// AppendRunEvents adds events to a run's log.
	AppendRunEvents(ctx context.Context, runID string, events []RunEvent) error
	// AppendEvents adds events of any number of runs (each names its run)
	// in one transaction: all are stored or none. It is how one writer
	// commits the events of many runs at once.
	AppendEvents(ctx context.Context, events []RunEvent) error
	// RunEvents returns a run's events with Seq > after, in order.
	RunEvents(ctx context.Context, runID string, after int64) ([]RunEvent, error)
	// PutRunFile creates or replaces a workspace file.
	PutRunFile(ctx context.Context, runID, path, content string) error
	// RunFile returns a workspace file's content (ErrNotFound if absent).
	RunFile(ctx context.Context, runID, path string) (string, error)
	// PutRunFileBytes creates or replaces a file of bytes (a chart, a
	// PDF) with its content type.
	PutRunFileBytes(ctx context.Context, runID, path, contentType string, data []byte) error
	// RunFileBytes returns a file's bytes and content type, whether it
	// was written as text or as bytes (ErrNotFound if absent).
	RunFileBytes(ctx context.Context, runID, path string) ([]byte, string, error)
	// RunFiles lists a run's workspace files by path.
	RunFiles(ctx context.Context, runID string) ([]RunFile, error)
	// DeleteRunFiles removes a run's workspace.
	DeleteRunFiles(ctx context.Context, runID string) error

	// RenewLeases moves the lease of each of runIDs (the runs the node
	// executes) that is running and held by the node to until, and returns
	// their ids: a run missing from them was taken over. A running run the
	// node holds and does not name is not renewed: nothing executes it.
	RenewLeases(ctx context.Context, nodeID string, runIDs []string, until time.Time) ([]string, error)
	// ClaimRun gives a running run to the node until the given time when
	// its lease has passed (before now) or the node holds it already;
	// ErrConflict when another node holds it, ErrNotFound when it is not
	// running. Of several nodes claiming one run, one gets it.
	ClaimRun(ctx context.Context, runID, nodeID string, now, until time.Time) error
	// ReleaseRun ends the node's lease of a running run at once, so that
	// another node takes it over (a node handing its runs back as it stops).
	ReleaseRun(ctx context.Context, runID, nodeID string) error
	// OrphanedRuns returns the running runs whose lease has passed (before
	// now) or that the node held in an earlier life, oldest first.
	OrphanedRuns(ctx context.Context, nodeID string, now time.Time) ([]Run, error)
}
