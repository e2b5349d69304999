package run

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/sova-ai/sova"
	"github.com/sova-ai/sova/internal/event"
)

// collector keeps what a run streamed, for runs that end without a
// result (stopped, failed): the text, and the progress the person saw —
// statuses, queries, pages, sources, tool calls, non-transient data — as
// the UI message parts a stored message carries, in the form the stream
// sent them.
type collector struct {
	mu sync.Mutex
	b  strings.Builder
	// parts are keyed like the stream's parts with ids: a later part with
	// the same key replaces the earlier one (a query started, then done).
	parts map[string]int
	order []map[string]any
	cited map[int]sova.Source
}

func newCollector() *collector {
	return &collector{parts: map[string]int{}, cited: map[int]sova.Source{}}
}

func (c *collector) Emit(e event.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case e.Type == event.TypeTextDelta:
		c.b.WriteString(e.Text)
	case e.Type == event.TypeData && e.Data != nil && e.Data.Name == TextRestartData:
		c.b.Reset()
	case e.Type == event.TypeData && e.Data != nil && !e.Data.Transient && e.Data.Name != "":
		var v any = e.Data.Value
		if len(e.Data.Value) == 0 {
			v = nil
		}
		key := ""
		if e.Data.ID != "" {
			key = "data-" + e.Data.Name + "\x00" + e.Data.ID
		}
		c.put(key, map[string]any{"type": "data-" + e.Data.Name, "id": e.Data.ID, "data": v})
	case e.Type == event.TypeStatus && e.Status != nil:
		st := e.Status
		d := map[string]any{"stage": st.Stage, "message": cmpOr(st.Message, st.Stage), "detail": st.Detail, "level": st.Level}
		c.put("status-"+st.Stage, map[string]any{"type": "data-status", "id": "status-" + st.Stage, "data": d})
	case e.Type == event.TypeQuery && e.Query != nil:
		q := e.Query
		id := "query-" + strconv.Itoa(q.Iteration) + "-" + strconv.Itoa(q.Index)
		c.put(id, map[string]any{"type": "data-query_completion", "id": id, "data": q})
	case e.Type == event.TypePage && e.Page != nil:
		id := "page-" + e.Page.URL
		c.put(id, map[string]any{"type": "data-page", "id": id, "data": e.Page})
	case e.Type == event.TypeSource && e.Source != nil:
		if e.Source.Number > 0 {
			if c.cited == nil {
				c.cited = map[int]sova.Source{}
			}
			c.cited[e.Source.Number] = *e.Source
			return
		}
		id := "source-" + e.Source.URL
		c.put(id, map[string]any{"type": "data-source", "id": id, "data": e.Source})
	case e.Type == event.TypeToolCall && e.ToolCall != nil && e.ToolCall.ID != "":
		tc := e.ToolCall
		var input any = map[string]any{}
		if len(tc.Input) > 0 {
			input = json.RawMessage(tc.Input)
		}
		c.put("tool\x00"+tc.ID, map[string]any{"type": "tool-" + tc.Name, "toolCallId": tc.ID, "state": "input-available", "input": input})
	case e.Type == event.TypeToolResult && e.ToolResult != nil:
		tr := e.ToolResult
		i, ok := c.parts["tool\x00"+tr.ID]
		if !ok {
			return
		}
		p := c.order[i]
		if tr.Error != "" {
			p["state"], p["errorText"] = "output-error", tr.Error
			return
		}
		var output any = tr.Text
		if len(tr.Output) > 0 {
			output = json.RawMessage(tr.Output)
		}
		p["state"], p["output"] = "output-available", output
	}
}

// put adds a part, or replaces the part with the same key ("" adds).
func (c *collector) put(key string, part map[string]any) {
	if c.parts == nil { // a zero collector works too
		c.parts = map[string]int{}
	}
	if key != "" {
		if i, ok := c.parts[key]; ok {
			c.order[i] = part
			return
		}
		c.parts[key] = len(c.order)
	}
	c.order = append(c.order, part)
}

// progress returns the cited sources in number order and the parts of
// the progress that streamed, in the order it first showed.
func (c *collector) progress() ([]sova.Source, []map[string]any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var cited []sova.Source
	for _, n := range slices.Sorted(maps.Keys(c.cited)) {
		cited = append(cited, c.cited[n])
	}
	return cited, append([]map[string]any(nil), c.order...)
}

func (c *collector) text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.String()
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
