package research

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/mode"
)

// failingWorkspace is a workspace whose writes to some files fail, as a
// full disk or a lost database would make them.
type failingWorkspace struct {
	*MemWorkspace
	fail     func(op, path string) bool
	failures atomic.Int32
}

var errDiskFull = errors.New("disk full")

func (w *failingWorkspace) Write(ctx context.Context, path, content string) error {
	if w.fail("write", path) {
		w.failures.Add(1)
		return errDiskFull
	}
	return w.MemWorkspace.Write(ctx, path, content)
}

func (w *failingWorkspace) Append(ctx context.Context, path, content string) error {
	if w.fail("append", path) {
		w.failures.Add(1)
		return errDiskFull
	}
	return w.MemWorkspace.Append(ctx, path, content)
}

// A workspace that cannot be written ends the run with an error that
// names the file, wherever the write happens: in an agent's note, in a
// supervisor's tool (inside the tool loop), or on the board.
func TestWorkspaceFailureEndsTheRun(t *testing.T) {
	tests := []struct {
		name string
		fail func(op, path string) bool
		want string
	}{
		{"an agent's note", func(_, p string) bool { return strings.HasPrefix(p, "items/") }, "writing items/item_"},
		{"a supervisor's tool", func(op, p string) bool { return op == "append" && p == fileSupervisor }, "writing supervisor.md"},
		{"the draft from a supervisor's tool", func(op, p string) bool { return op == "append" && p == fileDraft }, "writing draft_report.md"},
		{"an agent's file", func(_, p string) bool { return strings.HasPrefix(p, "agents/") }, "writing agents/agent_"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.initial = false
			e.cfg.ClarifyingQuestions = false
			ws := &failingWorkspace{MemWorkspace: NewMemWorkspace(), fail: tt.fail}
			var rec eventtest.Recorder
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := e.mode(t).Run(ctx, mode.Input{Question: question, Workspace: ws, Now: time.Now()}, &rec)
			if err == nil || !errors.Is(err, errDiskFull) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("result %v, err %v; want the run ended by %q", res != nil, err, tt.want)
			}
			if ctx.Err() != nil {
				t.Fatal("the run did not end by itself")
			}
			// Nothing after the failure: no report, no further reviews.
			if n := e.sc.count("FinalReport"); n != 0 {
				t.Errorf("%d report calls after the workspace failed", n)
			}
			if rec.Text() != "" {
				t.Errorf("a report was streamed: %q", rec.Text())
			}
		})
	}
}

// Without a plan from the model, the research goes on with one theme:
// the request, its key aspects the tasks.
func TestFallbackPlan(t *testing.T) {
	e := newEnv(t)
	e.initial = false
	e.cfg.ClarifyingQuestions = false
	e.sc.failPlan = true
	res, rec := e.run(t, mode.Input{Question: question})
	plans := dataEvents[PlanData](t, rec, DataPlan)
	if len(plans) == 0 {
		t.Fatal("no plan event")
	}
	p := plans[0]
	if p.Goal != question || len(p.Themes) != 1 || p.Themes[0].Title != question || len(p.Themes[0].Tasks) != 3 ||
		p.Themes[0].Tasks[0].Title != "banking" || p.Themes[0].Tasks[2].Objective != "recovery" {
		t.Errorf("fallback plan %+v", p)
	}
	var told bool
	for _, ev := range rec.Filter(event.TypeStatus) {
		if ev.Status.Stage == "plan" && strings.Contains(ev.Status.Message, "Could not write a plan") && strings.Contains(ev.Status.Detail, "the plan is beyond me") {
			told = true
		}
	}
	if !told {
		t.Error("the failed plan was not reported")
	}
	if res.Report == "" {
		t.Error("no report after the fallback plan")
	}

	// Without key aspects, the request itself is the one task.
	long := strings.Repeat("word ", 30)
	fp := fallbackPlan(long, QueryAnalysis{})
	if len(fp.Themes) != 1 || len(fp.Themes[0].Tasks) != 1 || fp.Themes[0].Tasks[0].Objective != long ||
		len([]rune(fp.Themes[0].Tasks[0].Title)) > 81 || fp.Goal != long {
		t.Errorf("plan without aspects %+v", fp)
	}
}

// Without a structured report from the model, the report is the
// material itself under the question: the draft when it is long enough,
// else the findings, else the initial search.
func TestFallbackReport(t *testing.T) {
	t.Run("from the draft", func(t *testing.T) {
		e := newEnv(t)
		e.initial = false
		e.cfg.ClarifyingQuestions = false
		e.sc.failReport = true
		res, rec := e.run(t, mode.Input{Question: question})
		if !strings.HasPrefix(res.Report, "# "+question+"\n\n") || !strings.Contains(res.Report, "In review 1 the team confirmed") ||
			res.Text != res.Report || rec.Text() != res.Text {
			t.Errorf("report:\n%s", res.Report)
		}
		// Its citations are checked like a structured report's.
		if strings.Contains(res.Report, "[99]") || len(res.Sources) == 0 || !strings.Contains(res.Report, "## Sources") {
			t.Errorf("citations: %d sources in\n%s", len(res.Sources), res.Report)
		}
		if n := e.sc.count("FinalReport"); n != 1 {
			t.Errorf("%d report calls, want 1 (a failure is not re-asked)", n)
		}
	})
	t.Run("from the findings", func(t *testing.T) {
		e := newEnv(t)
		e.initial = false
		e.cfg.ClarifyingQuestions = false
		e.sc.failReport = true
		e.sc.emptyDraft = true
		res, _ := e.run(t, mode.Input{Question: question})
		if !strings.HasPrefix(res.Report, "# "+question+"\n\n") || !strings.Contains(res.Report, "Roosevelt reopened sound banks") ||
			strings.Contains(res.Report, "In review 1") {
			t.Errorf("report:\n%s", res.Report)
		}
	})
	t.Run("each source in turn", func(t *testing.T) {
		s := &session{question: "## What\nhappened?", initial: "The initial answer."}
		for _, tc := range []struct {
			draft, findings string
			fromDraft       bool
			want            string
		}{
			{"# Draft\n\nText.", "Findings.", true, "# What happened?\n\n### Draft\n\nText.\n\n"},
			{"Short draft.", "Findings.", false, "# What happened?\n\nFindings.\n\n"},
			{"Short draft.", "", false, "# What happened?\n\nShort draft.\n\n"},
			{"", "", false, "# What happened?\n\nThe initial answer.\n\n"},
		} {
			if got := s.fallbackReport(tc.draft, tc.fromDraft, tc.findings); got != tc.want {
				t.Errorf("fallbackReport(%q, %v, %q) = %q, want %q", tc.draft, tc.fromDraft, tc.findings, got, tc.want)
			}
		}
	})
}

// With search down the agents read nothing, and the report comes from the
// model's own knowledge: it says so first, in the question's language,
// and a status says so too. A report from pages read has no such note.
func TestUnverifiedReportWithoutSources(t *testing.T) {
	for _, tt := range []struct {
		name, question, note string
	}{
		{"english", question, "> **No sources.** The web search turned up no page that could be read"},
		{"russian", "Как президенты описывали экономику в 1930-е?", "> **Без источников.** Веб-поиск не дал ни одной страницы"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.cfg.ClarifyingQuestions = false
			e.sx.Fail.Store(503)
			res, rec := e.run(t, mode.Input{Question: tt.question})
			if !strings.HasPrefix(res.Text, tt.note) || res.Report != res.Text || rec.Text() != res.Text || len(res.Sources) != 0 {
				t.Errorf("report (%d sources):\n%s", len(res.Sources), clip(res.Text, 600))
			}
			var said bool
			for _, ev := range rec.Filter(event.TypeStatus) {
				if ev.Status.Stage == mode.StageUnverified {
					said = true
				}
			}
			if !said {
				t.Error("no status says the report is unverified")
			}
		})
	}
	e := newEnv(t)
	e.cfg.ClarifyingQuestions = false
	res, rec := e.run(t, mode.Input{Question: question})
	if strings.Contains(res.Text, "No sources.") || len(res.Sources) == 0 {
		t.Errorf("report from pages read:\n%s", clip(res.Text, 600))
	}
	for _, ev := range rec.Filter(event.TypeStatus) {
		if ev.Status.Stage == mode.StageUnverified {
			t.Errorf("status %+v for a report from pages read", ev.Status)
		}
	}
}
