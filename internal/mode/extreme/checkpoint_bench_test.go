package extreme

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/store"
	"github.com/sova-ai/sova/internal/store/storetest"
	"github.com/sova-ai/sova/internal/tools"
)

// storeFiles is a run's workspace on the store, as the run engine keeps it.
type storeFiles struct {
	st  store.Store
	run string
}

func (w storeFiles) Write(ctx context.Context, p, c string) error {
	return w.st.PutRunFile(ctx, w.run, p, c)
}
func (w storeFiles) Append(ctx context.Context, p, c string) error {
	old, _ := w.Read(ctx, p)
	return w.Write(ctx, p, old+c)
}
func (w storeFiles) Read(ctx context.Context, p string) (string, error) {
	s, err := w.st.RunFile(ctx, w.run, p)
	if err != nil {
		return "", mode.ErrNoFile
	}
	return s, nil
}
func (w storeFiles) List(context.Context) ([]string, error) { return nil, nil }
func (w storeFiles) WriteBytes(ctx context.Context, p, ct string, data []byte) error {
	return w.st.PutRunFileBytes(ctx, w.run, p, ct, data)
}
func (w storeFiles) ReadBytes(ctx context.Context, p string) ([]byte, string, error) {
	return w.st.RunFileBytes(ctx, w.run, p)
}

// BenchmarkCheckpoint is the checkpoint an extreme run saves after the
// last of 15 searches at the limits (8 results of 3000 characters each,
// in Russian: two bytes a character), on the store: the new messages and
// checkpoint.json. It reports the bytes of checkpoint.json and of the
// conversation.
//
//	SOVA_TEST_DATABASE_URL=postgres://… go test ./internal/mode/extreme -run '^$' -bench Checkpoint -benchtime 20x
func BenchmarkCheckpoint(b *testing.B) {
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run(backend, func(b *testing.B) {
			var st store.Store
			var err error
			if backend == "sqlite" {
				st, err = store.OpenSQLite(b.Context(), filepath.Join(b.TempDir(), "sova.db"))
			} else {
				st, err = store.OpenPostgres(b.Context(), storetest.PostgresDSN(b))
			}
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			r := &sova.Run{UserID: "ann", Mode: ID, State: sova.RunRunning, Question: "q", Input: json.RawMessage(`{}`)}
			if err := st.CreateRun(b.Context(), r); err != nil {
				b.Fatal(err)
			}
			ws := storeFiles{st: st, run: r.ID}
			s := &session{cfg: Config{}.withDefaults(), in: mode.Input{RunID: r.ID, Question: "q"}, sink: event.Discard,
				parts: newParts(event.Discard), ws: ws, byNum: map[int]*found{}, charts: map[string][]byte{}}
			s.cite = tools.NewCitations(nil)
			text := strings.Repeat("Экономика росла неравномерно. ", 100) // 3000 characters
			msgs := []llm.Message{{Role: llm.RoleSystem, Content: "prompt"}, {Role: llm.RoleUser, Content: "q"}}
			var steps []agent.Step
			for i := range 15 {
				var results []webResult
				for j := range 8 {
					src := sova.Source{URL: fmt.Sprintf("https://example.com/%d/%d", i, j), Title: "Title", Kind: sova.SourceWeb}
					n := s.addSource(src, text)
					results = append(results, webResult{Number: n, Title: src.Title, URL: src.URL, Content: text})
				}
				out, _ := json.Marshal(map[string]any{"query": "q", "results": results})
				call := llm.ToolCall{ID: fmt.Sprintf("call_%d", i), Name: WebSearchName, Arguments: `{"query":"q"}`}
				msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call}},
					llm.Message{Role: llm.RoleTool, ToolCallID: call.ID, Name: WebSearchName, Content: string(out)})
				steps = append(steps, agent.Step{Calls: []agent.Call{{ID: call.ID, Name: WebSearchName, Step: i + 1}},
					Results: []agent.Result{{CallID: call.ID, Name: WebSearchName, Output: string(out), Step: i + 1}}})
			}
			// All but the last step's messages are saved already.
			if err := s.saveCheckpoint(b.Context(), phaseResearch, steps[:14], msgs[:len(msgs)-2], "", nil); err != nil {
				b.Fatal(err)
			}
			saved := s.cpMessages
			for b.Loop() {
				s.cpMessages = saved
				if err := s.saveCheckpoint(b.Context(), phaseResearch, steps, msgs, "", nil); err != nil {
					b.Fatal(err)
				}
			}
			doc, _ := ws.Read(b.Context(), fileCheckpoint)
			conv := 0
			for i := range msgs {
				m, _ := ws.Read(b.Context(), messageFile(i))
				conv += len(m)
			}
			b.ReportMetric(float64(len(doc)), "checkpoint-bytes")
			b.ReportMetric(float64(conv), "conversation-bytes")
		})
	}
}
