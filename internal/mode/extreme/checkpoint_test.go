package extreme

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/mode"
)

// counts are what a run asked of the fake model and the sandbox, and
// searched.
type counts struct {
	plan, agent, answer int
	cells, cellsDone    int
	searches            int
}

// stepKind says which step of the mode sent a request.
func stepKind(r *llmtest.Request) string {
	switch {
	case r.SchemaName() == "ExtremePlan":
		return "plan"
	case strings.Contains(r.System(), "You are Sova's research agent"):
		return "agent"
	case strings.Contains(r.System(), "Write the final answer"):
		return "answer"
	}
	return "other"
}

// chartURL is where a chart is served; its code id differs from run to run.
var chartURL = regexp.MustCompile(`/files/charts/[^/]+/`)

// A run cut short at any of its steps and continued (mode.Input.Continued)
// ends with the answer an uninterrupted run gives, without asking the
// model again for what its checkpoint holds, running no finished code
// cell again and searching no finished query again; its stream shows the
// plan once and every query and cell ends completed, the one cut short
// replaced in place by its run again.
func TestContinuedRunGoesOnFromCheckpoint(t *testing.T) {
	type cut struct {
		name string
		// model is called for each model request, sandbox as each cell
		// starts: true cuts the run there. ended: the run ends, and the
		// node stops before the run engine has kept its end (the
		// follow-up questions, the stored answer).
		model   func(kind string, n map[string]int) bool
		sandbox bool
		ended   bool
		// extra is what the cut costs: the request or cell under way
		// when the node stopped is asked again.
		extra counts
		// noneAfter: the continued run asks the model nothing.
		noneAfter bool
	}
	cuts := []cut{
		{name: "after the plan", model: func(k string, n map[string]int) bool { return k == "agent" && n["agent"] == 1 },
			extra: counts{agent: 1}},
		{name: "while the code runs", sandbox: true, extra: counts{cells: 1}},
		{name: "after the code ran", model: func(k string, n map[string]int) bool { return k == "agent" && n["agent"] == 3 },
			extra: counts{agent: 1}},
		{name: "while the answer is asked for", model: func(k string, n map[string]int) bool { return k == "answer" },
			extra: counts{answer: 1}},
		{name: "after the answer", ended: true, noneAfter: true},
	}

	// The uninterrupted run.
	e := newEnv(t)
	want, wantRec, err := e.run(t, mode.Input{Workspace: newMemFiles()})
	if err != nil {
		t.Fatal(err)
	}
	base := counts{cells: len(e.sb.codes), cellsDone: e.sb.done, searches: len(e.sx.Queries())}
	for _, r := range e.model.Requests() {
		switch stepKind(r) {
		case "plan":
			base.plan++
		case "agent":
			base.agent++
		case "answer":
			base.answer++
		}
	}
	if base != (counts{plan: 1, agent: 3, answer: 1, cells: 1, cellsDone: 1, searches: 1}) {
		t.Fatalf("the uninterrupted run: %+v", base)
	}
	wantKinds := partStates(t, wantRec.Events())

	for _, c := range cuts {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			ctx, cut := context.WithCancel(t.Context())
			defer cut()
			var mu sync.Mutex
			n := map[string]int{}
			got := counts{}
			e.model.Handle(func(r *llmtest.Request) llmtest.Reply {
				k := stepKind(r)
				mu.Lock()
				n[k]++
				switch k {
				case "plan":
					got.plan++
				case "agent":
					got.agent++
				case "answer":
					got.answer++
				}
				stop := c.model != nil && c.model(k, n)
				mu.Unlock()
				if stop {
					cut() // the node stops while the model is asked
				}
				return e.model.Respond(r)
			})
			if c.sandbox {
				e.sb.hook = func(context.Context) error { cut(); return context.Canceled }
			}
			ws := newMemFiles()
			_, rec1, err := e.runCtx(ctx, t, mode.Input{Workspace: ws})
			if (err == nil) != c.ended {
				t.Fatalf("the first run ended with %v", err)
			}
			first := e.model.Count()
			var cp checkpoint
			if doc, err := ws.Read(t.Context(), fileCheckpoint); err != nil || json.Unmarshal([]byte(doc), &cp) != nil {
				t.Fatalf("no checkpoint: %v", err)
			}

			e.sb.hook = nil
			res, rec2, err := e.run(t, mode.Input{Workspace: ws, Continued: true})
			if err != nil {
				t.Fatal(err)
			}
			got.cells, got.cellsDone, got.searches = len(e.sb.codes), e.sb.done, len(e.sx.Queries())
			wantCounts := base
			wantCounts.plan += c.extra.plan
			wantCounts.agent += c.extra.agent
			wantCounts.answer += c.extra.answer
			wantCounts.cells += c.extra.cells
			if got != wantCounts {
				t.Errorf("asked and ran %+v, want %+v (checkpoint phase %s)", got, wantCounts, cp.Phase)
			}
			if c.noneAfter && e.model.Count() != first {
				t.Errorf("the continued run asked the model %d times, want none", e.model.Count()-first)
			}
			if chartURL.ReplaceAllString(res.Text, "/files/charts/*/") != chartURL.ReplaceAllString(want.Text, "/files/charts/*/") {
				t.Errorf("answer after continuing:\n%s\nwant\n%s", res.Text, want.Text)
			}
			// The continued run streams its whole answer (from the done
			// phase, the answer it kept): the run engine leaves out what
			// the client had, and a client that had none of it needs it all.
			streamed := ""
			for _, ev := range rec2.Events() {
				if ev.Type == event.TypeTextDelta {
					streamed += ev.Text
				}
			}
			if streamed != res.Text {
				t.Errorf("the continued run streamed %d characters of its %d-character answer (checkpoint phase %s)", len(streamed), len(res.Text), cp.Phase)
			}
			if len(res.Sources) != len(want.Sources) || res.Report == "" || !strings.Contains(res.Text, "/api/runs/run_1/files/charts/") {
				t.Errorf("sources %+v, report %d bytes, answer %q", res.Sources, len(res.Report), res.Text)
			}
			if md, err := ws.Read(t.Context(), fileReport); err != nil || md != res.Report {
				t.Errorf("report.md after continuing: %v", err)
			}
			if pdf, _, err := ws.ReadBytes(t.Context(), fileReportPDF); err != nil || pdfImageCount(t, pdf) != 1 {
				t.Errorf("the report's PDF lost its chart: %v", err)
			}
			// What the client saw over both parts, each part by its last
			// state: what it sees of an uninterrupted run.
			all := append(rec1.Events(), rec2.Events()...)
			if got := partStates(t, all); got != wantKinds {
				t.Errorf("parts the client saw:\n%s\nwant\n%s", got, wantKinds)
			}
			var recd record
			if err := json.Unmarshal(res.Steps, &recd); err != nil {
				t.Fatal(err)
			}
			var stored []event.Event
			for _, p := range recd.Parts {
				stored = append(stored, event.Event{Type: event.TypeData, Data: &event.Data{Name: DataName, ID: partKey(p), Value: p}})
			}
			if got := partStates(t, stored); got != wantKinds {
				t.Errorf("the stored record:\n%s\nwant\n%s", got, wantKinds)
			}
			plans, continued := 0, false
			for _, ev := range rec2.Events() {
				if ev.Type == event.TypeStatus && ev.Status.Stage == "continue" {
					continued = true
				}
				if ev.Type == event.TypeStatus && (ev.Status.Stage == "plan" || ev.Status.Stage == "tools") {
					t.Errorf("the continued run reported %q again", ev.Status.Message)
				}
			}
			for _, ev := range all {
				if ev.Type == event.TypeData && ev.Data.ID == "plan" && strings.Contains(string(ev.Data.Value), "Planning the research") {
					plans++
				}
			}
			if !continued || plans != 1 {
				t.Errorf("continue status %v, plan begun %d times", continued, plans)
			}
		})
	}
}

// partKey is the id a recorded part is sent under.
func partKey(raw json.RawMessage) string {
	var p struct {
		Kind    string `json:"kind"`
		QueryID string `json:"queryId"`
		CodeID  string `json:"codeId"`
	}
	_ = json.Unmarshal(raw, &p)
	switch p.Kind {
	case KindPlan:
		return "plan"
	case KindQuery:
		return "query-" + p.QueryID
	case KindCode:
		return "code-" + p.CodeID
	}
	return string(raw)
}

// partStates lists the last state of each plan, query and code part, in
// order of first appearance: "plan:Research completed query:completed
// code:completed".
func partStates(t *testing.T, evs []event.Event) string {
	t.Helper()
	var order []string
	last := map[string]string{}
	for _, ev := range evs {
		if ev.Type != event.TypeData || ev.Data.Name != DataName {
			continue
		}
		var p struct {
			Kind   string          `json:"kind"`
			Status json.RawMessage `json:"status"`
		}
		if err := json.Unmarshal(ev.Data.Value, &p); err != nil {
			t.Fatal(err)
		}
		state := strings.Trim(string(p.Status), `"`)
		switch p.Kind {
		case KindPlan:
			var ps PlanStatus
			_ = json.Unmarshal(p.Status, &ps)
			state = ps.Title
		case KindQuery, KindCode:
		default:
			continue
		}
		if _, ok := last[ev.Data.ID]; !ok {
			order = append(order, ev.Data.ID)
		}
		last[ev.Data.ID] = p.Kind + ":" + state
	}
	var out []string
	for _, id := range order {
		out = append(out, last[id])
	}
	return strings.Join(out, " ")
}
