package extreme

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/run"
	"github.com/sova-ai/sova/internal/store"
	"github.com/sova-ai/sova/internal/store/storetest"
)

// A node of the test: the run service with the extreme mode on a store.
func extremeNode(t *testing.T, e *env, st store.Store, id string, exclusive bool) *run.Service {
	t.Helper()
	reg, err := mode.NewRegistry(e.newMode(t))
	if err != nil {
		t.Fatal(err)
	}
	svc := run.NewService(run.Options{Store: st, Modes: reg, NodeID: id, Lease: time.Hour, Exclusive: exclusive})
	t.Cleanup(func() { _ = svc.Close(context.Background()) })
	return svc
}

var errEnough = errors.New("enough of the stream")

// An extreme run whose node stops mid-run is continued by the next node
// from its checkpoint: the embedded single node restarted on SQLite, or
// another node on PostgreSQL. The model is asked, the code run and the
// web searched only for what the checkpoint does not hold; the run's log,
// read from its start, numbers its events without a gap, has one start
// and one finish, shows the answer once and every query and code cell
// completed; the answer, its report and chart are kept.
func TestTakeOverContinuesExtremeRun(t *testing.T) {
	type nodes struct {
		a      *run.Service
		st     store.Store
		second func() (*run.Service, store.Store) // after a has stopped
	}
	backends := []struct {
		name string
		open func(t *testing.T, e *env) nodes
	}{
		{"sqlite, the one node restarted", func(t *testing.T, e *env) nodes {
			path := filepath.Join(t.TempDir(), "sova.db")
			st, err := store.OpenSQLite(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			return nodes{a: extremeNode(t, e, st, "node-1", true), st: st, second: func() (*run.Service, store.Store) {
				_ = st.Close()
				st2, err := store.OpenSQLite(t.Context(), path)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = st2.Close() })
				return extremeNode(t, e, st2, "node-1", true), st2
			}}
		}},
		{"postgres, another node", func(t *testing.T, e *env) nodes {
			dsn := storetest.PostgresDSN(t)
			open := func() store.Store {
				st, err := store.OpenPostgres(t.Context(), dsn)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = st.Close() })
				return st
			}
			st := open()
			return nodes{a: extremeNode(t, e, st, "node-a", false), st: st, second: func() (*run.Service, store.Store) {
				stB := open()
				return extremeNode(t, e, stB, "node-b", false), stB
			}}
		}},
	}
	cuts := []struct {
		name   string
		code   bool // the node stops while the code runs, else while the answer streams
		anew   bool // the answer asked again is another text
		counts counts
	}{
		{"while the code runs", true, false, counts{plan: 1, agent: 3, answer: 1, cells: 2, cellsDone: 1, searches: 1}},
		{"while the answer streams", false, false, counts{plan: 1, agent: 3, answer: 2, cells: 1, cellsDone: 1, searches: 1}},
		{"while the answer streams, written anew", false, true, counts{plan: 1, agent: 3, answer: 2, cells: 1, cellsDone: 1, searches: 1}},
	}
	for _, b := range backends {
		for _, c := range cuts {
			t.Run(b.name+"/"+c.name, func(t *testing.T) {
				e := newEnv(t)
				var mu sync.Mutex
				got := counts{}
				e.model.Handle(func(r *llmtest.Request) llmtest.Reply {
					reply := e.model.Respond(r)
					mu.Lock()
					defer mu.Unlock()
					switch stepKind(r) {
					case "plan":
						got.plan++
					case "agent":
						got.agent++
					case "answer":
						got.answer++
						if !c.code && got.answer == 1 {
							reply.ChunkDelay = 15 * time.Millisecond // time to stop the node mid-answer
						}
						if c.anew && got.answer == 2 {
							reply.Content = "Written anew. " + reply.Content
						}
					}
					return reply
				})
				reached := make(chan struct{})
				var once sync.Once
				if c.code {
					e.sb.hook = func(ctx context.Context) error {
						first := false
						once.Do(func() { first = true })
						if !first {
							return nil
						}
						close(reached)
						<-ctx.Done() // the cell runs until the node stops
						return ctx.Err()
					}
				}
				n := b.open(t, e)
				ctx := sova.WithUser(t.Context(), sova.User{ID: "ann"})
				ctx, cancelFollow := context.WithTimeout(ctx, time.Minute) // a Follow that fails ends, not hangs
				defer cancelFollow()
				p, err := n.a.Prepare(ctx, run.Request{Mode: ID, Persist: true,
					Messages: []llm.Message{{Role: llm.RoleUser, Content: "Compare GDP growth decade by decade since the 1930s and plot it"}}})
				if err != nil {
					t.Fatal(err)
				}
				n.a.Start(p)
				if c.code {
					select {
					case <-reached:
					case <-time.After(30 * time.Second):
						t.Fatal("the code did not run")
					}
				} else {
					deltas := 0
					if err := n.a.Follow(ctx, p.RunID, 0, func(ev event.Event) error {
						if ev.Type == event.TypeTextDelta {
							if deltas++; deltas == 3 {
								return errEnough
							}
						}
						return nil
					}); !errors.Is(err, errEnough) {
						t.Fatalf("following the answer: %v", err)
					}
				}
				if err := n.a.Close(ctx); err != nil { // hands the run back
					t.Fatal(err)
				}
				if r, err := n.st.GetRun(ctx, "ann", p.RunID); err != nil || r.State != sova.RunRunning {
					t.Fatalf("the run after its node stopped: %+v %v", r, err)
				}

				b2, st2 := n.second()
				if k, err := b2.Recover(ctx); err != nil || k != 1 {
					t.Fatalf("recover: %d runs, %v", k, err)
				}
				var r *sova.Run
				for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
					if r, err = st2.GetRun(ctx, "ann", p.RunID); err == nil && r.State != sova.RunRunning {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("the run did not end: %+v %v", r, err)
					}
				}
				if r.State != sova.RunCompleted {
					t.Fatalf("the continued run ended %s: %s", r.State, r.Error)
				}
				mu.Lock()
				got.cells, got.cellsDone, got.searches = len(e.sb.codes), e.sb.done, len(e.sx.Queries())
				mu.Unlock()
				if got != c.counts {
					t.Errorf("asked and ran %+v, want %+v", got, c.counts)
				}

				var evs []event.Event
				if err := b2.Follow(ctx, p.RunID, 0, func(ev event.Event) error { evs = append(evs, ev); return nil }); err != nil {
					t.Fatal(err)
				}
				starts, continued, text, restarts := 0, false, "", 0
				var shown strings.Builder // the answer as Sova's web UI folds it
				for i, ev := range evs {
					if ev.Seq != int64(i+1) {
						t.Fatalf("event %d is numbered %d", i+1, ev.Seq)
					}
					switch {
					case ev.Type == event.TypeStart:
						starts++
					case ev.Type == event.TypeStatus && ev.Status.Stage == "continue":
						continued = true
					case ev.Type == event.TypeTextDelta:
						text += ev.Text
						shown.WriteString(ev.Text)
					case ev.Type == event.TypeData && ev.Data.Name == run.TextRestartData:
						restarts++
						shown.Reset()
					}
				}
				if starts != 1 || !continued || evs[len(evs)-1].Type != event.TypeFinish {
					t.Errorf("%d starts, continue status %v, last event %s", starts, continued, evs[len(evs)-1].Type)
				}
				if got := partStates(t, evs); got != "plan:Research completed query:completed code:completed" {
					t.Errorf("parts the client saw: %s", got)
				}
				msgs, err := st2.ListMessages(ctx, "ann", p.ChatID)
				if err != nil || len(msgs) != 2 {
					t.Fatalf("messages %+v %v", msgs, err)
				}
				answer := msgs[1].Content
				if shown.String() != answer || !strings.Contains(answer, "Growth was uneven") || !strings.Contains(answer, "/api/runs/"+p.RunID+"/files/charts/") {
					t.Errorf("the client holds\n%q\nthe stored answer is\n%q", shown.String(), answer)
				}
				// The same answer is sent once; another replaces the part shown.
				if c.anew {
					if restarts != 1 || !strings.HasPrefix(answer, "Written anew.") || text == answer {
						t.Errorf("%d restarts of the text; streamed %q, answer %q", restarts, text, answer)
					}
				} else if restarts != 0 || text != answer {
					t.Errorf("%d restarts of the text; streamed %q, answer %q", restarts, text, answer)
				}
				if md, err := st2.RunFile(ctx, p.RunID, fileReport); err != nil || md != r.Report || !strings.Contains(md, answer[:40]) {
					t.Errorf("report.md: %v", err)
				}
				if pdf, _, err := st2.RunFileBytes(ctx, p.RunID, fileReportPDF); err != nil || pdfImageCount(t, pdf) != 1 {
					t.Errorf("the report's PDF and its chart: %v", err)
				}
			})
		}
	}
}
