package extreme

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/sova-ai/sova/internal/event"
)

// DataName is the name of the mode's stream parts: data-extreme_search
// (seed 000 §5.2). Each part is an object with a kind; parts with the same
// id replace each other in a client, so a query or a code cell updates in
// place from started to completed.
const DataName = "extreme_search"

// Kinds of parts (000 §5.2).
const (
	KindPlan    = "plan"
	KindQuery   = "query"
	KindSource  = "source"
	KindContent = "content"
	KindCode    = "code"
	KindX       = "x_search"
)

// PlanPart is the plan: first its title alone while it is written, then
// the themes, then "Research completed" at the end.
type PlanPart struct {
	Kind   string      `json:"kind"`
	Status PlanStatus  `json:"status"`
	Plan   []PlanTheme `json:"plan,omitempty"`
}

// PlanStatus titles the stage the plan is at.
type PlanStatus struct {
	Title string `json:"title"`
}

// PlanTheme is one theme of the plan with its todos.
type PlanTheme struct {
	Title string   `json:"title"`
	Todos []string `json:"todos"`
}

// QueryPart is one webSearch: started, reading_content, completed (or
// error). Sources repeats the source parts of the query so far, so that a
// client that keeps only the latest part of each id can show the query
// with what it found.
type QueryPart struct {
	Kind           string       `json:"kind"`
	QueryID        string       `json:"queryId"`
	Query          string       `json:"query"`
	Status         string       `json:"status"`
	Category       string       `json:"category,omitempty"`
	IncludeDomains []string     `json:"includeDomains,omitempty"`
	Sources        []SourceInfo `json:"sources"`
	Error          string       `json:"error,omitempty"`
}

// Query statuses.
const (
	QueryStarted   = "started"
	QueryReading   = "reading_content"
	QueryCompleted = "completed"
	QueryError     = "error"
)

// SourceInfo is a source as the stream shows it; Number is its citation
// number.
type SourceInfo struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Favicon string `json:"favicon,omitempty"`
	Number  int    `json:"number,omitempty"`
}

// SourcePart is a source a query found.
type SourcePart struct {
	Kind    string     `json:"kind"`
	QueryID string     `json:"queryId"`
	Source  SourceInfo `json:"source"`
}

// ContentPart is the text read from a source.
type ContentPart struct {
	Kind    string      `json:"kind"`
	QueryID string      `json:"queryId"`
	Content ContentInfo `json:"content"`
}

// ContentInfo is what was read of a source, clipped for the stream.
type ContentInfo struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Text    string `json:"text"`
	Favicon string `json:"favicon,omitempty"`
}

// CodePart is one codeRunner cell: running, then completed or error with
// its output and the charts it drew (names, sizes and where to fetch them;
// never their bytes).
type CodePart struct {
	Kind     string      `json:"kind"`
	CodeID   string      `json:"codeId"`
	Title    string      `json:"title"`
	Code     string      `json:"code"`
	Status   string      `json:"status"`
	Result   *CodeOutput `json:"result,omitempty"`
	Charts   []Chart     `json:"charts,omitempty"`
	LimitHit string      `json:"limitHit,omitempty"`
	Error    string      `json:"error,omitempty"`
}

// Code statuses.
const (
	CodeRunning   = "running"
	CodeCompleted = "completed"
	CodeError     = "error"
)

// CodeOutput is what a cell printed and how it ended.
type CodeOutput struct {
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	ExitCode int    `json:"exitCode"`
}

// Chart is a chart a cell drew: a run file served at URL.
type Chart struct {
	Type   string `json:"type"`   // "chart"
	Format string `json:"format"` // "png"
	Name   string `json:"name"`
	Title  string `json:"title,omitempty"`
	Size   int64  `json:"size"`
	// Path is the run file (charts/<codeId>/<name>); URL where it is
	// served. Both are empty when the run keeps no files.
	Path string `json:"path,omitempty"`
	URL  string `json:"url,omitempty"`
}

// XPart is one xSearch: started, then completed (or error) with the posts.
type XPart struct {
	Kind      string   `json:"kind"`
	XSearchID string   `json:"xSearchId"`
	Query     string   `json:"query"`
	StartDate string   `json:"startDate,omitempty"`
	EndDate   string   `json:"endDate,omitempty"`
	Handles   []string `json:"handles,omitempty"`
	Status    string   `json:"status"`
	Result    *XResult `json:"result,omitempty"`
	Error     string   `json:"error,omitempty"`
}

// XResult is what an X search found.
type XResult struct {
	Content   string    `json:"content"`
	Citations []string  `json:"citations"`
	Sources   []XSource `json:"sources"`
}

// XSource is a post, with its citation number.
type XSource struct {
	Text   string `json:"text"`
	Link   string `json:"link"`
	Title  string `json:"title"`
	Number int    `json:"number,omitempty"`
}

// parts emits the run's parts and keeps the last of each id, in order of
// first emission: the record the stored answer keeps, so that a reopened
// chat shows what the stream showed.
type parts struct {
	sink event.Sink

	mu    sync.Mutex
	last  map[string]json.RawMessage
	order []string
}

func newParts(sink event.Sink) *parts {
	return &parts{sink: sink, last: map[string]json.RawMessage{}}
}

// emit sends v (one of the part types above) as data-extreme_search with
// the id. Content parts are left out of the record: the sources they
// belong to are in it, and their text is the bulk of a run.
func (p *parts) emit(id string, v any) {
	raw, err := json.Marshal(v)
	if err != nil {
		return // the part types always marshal
	}
	if _, isContent := v.(ContentPart); !isContent {
		p.mu.Lock()
		if _, seen := p.last[id]; !seen {
			p.order = append(p.order, id)
		}
		p.last[id] = raw
		p.mu.Unlock()
	}
	p.sink.Emit(event.Event{Type: event.TypeData, Time: time.Now(), Data: &event.Data{Name: DataName, ID: id, Value: raw}})
}

// saved returns the ids and the last parts kept, in order, for a
// checkpoint.
func (p *parts) saved() ([]string, []json.RawMessage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	raws := make([]json.RawMessage, 0, len(p.order))
	for _, id := range p.order {
		raws = append(raws, p.last[id])
	}
	return append([]string(nil), p.order...), raws
}

// restore keeps a part of a checkpoint as shown already: in the record,
// not sent again.
func (p *parts) restore(id string, raw json.RawMessage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, seen := p.last[id]; !seen {
		p.order = append(p.order, id)
	}
	p.last[id] = raw
}

// record is the last part of each id, in order.
func (p *parts) record() []json.RawMessage {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]json.RawMessage, 0, len(p.order))
	for _, id := range p.order {
		out = append(out, p.last[id])
	}
	return out
}
