package store_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/store"
)

// TestSQLiteOpensLandedDatabase opens a database file written by the store
// before it was one implementation for both engines (testdata, made at
// commit a0be84f) and reads every kind of row back unchanged: the on-disk
// format (Unix-millisecond INTEGER times, JSON as TEXT) is the same.
func TestSQLiteOpensLandedDatabase(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "sqlite-a0be84f.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sova.db")
	if err := os.WriteFile(path, src, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := store.OpenSQLite(t.Context(), path)
	if err != nil {
		t.Fatalf("OpenSQLite: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	ctx := t.Context()
	t0 := time.Date(2025, 3, 1, 10, 0, 0, 123_000_000, time.UTC)

	c, err := s.GetChat(ctx, "local", "chat-1")
	if err != nil {
		t.Fatal(err)
	}
	if c.Title != "Москва" || c.Mode != "search" || !c.CreatedAt.Equal(t0) || !c.UpdatedAt.Equal(t0.Add(2*time.Second)) || c.MessageCount != 2 {
		t.Errorf("chat = %+v", c)
	}
	msgs, err := s.ListMessages(ctx, "local", "chat-1")
	if err != nil || len(msgs) != 2 {
		t.Fatalf("ListMessages = %+v, %v", msgs, err)
	}
	m := msgs[1]
	if m.ID != "m-2" || m.Role != sova.RoleAssistant || m.Content != "A journal [1]." || !m.CreatedAt.Equal(t0.Add(2*time.Second)) ||
		m.Model != "m" || m.FinishReason != "stop" || *m.Usage != (sova.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15}) ||
		len(m.Sources) != 1 || m.Sources[0].URL != "https://sqlite.org/wal.html" {
		t.Errorf("message = %+v", m)
	}
	assertJSONEqual(t, "parts", m.Parts, json.RawMessage(`[{"type":"text","text":"A journal [1]."}]`))
	assertJSONEqual(t, "tool calls", m.ToolCalls, json.RawMessage(`[{"id":"c1","name":"web_search"}]`))

	r, err := s.GetRun(ctx, "local", "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if r.State != sova.RunCompleted || r.Report != "# Report" || !r.HasReport || r.LastSeq != 2 || r.ChatID != "chat-1" ||
		r.Usage.TotalTokens != 15 || !r.CreatedAt.Equal(t0) {
		t.Errorf("run = %+v", r)
	}
	evs, err := s.RunEvents(ctx, "run-1", 0)
	if err != nil || len(evs) != 2 || evs[1].Seq != 2 {
		t.Fatalf("RunEvents = %+v, %v", evs, err)
	}
	assertJSONEqual(t, "event", evs[1].Event, json.RawMessage(`{"seq":2,"type":"finish"}`))
	files, err := s.RunFiles(ctx, "run-1")
	if err != nil || len(files) != 1 || files[0].Path != "main.md" || files[0].Size != len("# Main") || files[0].ContentType != sova.TextFileType || files[0].UpdatedAt.IsZero() {
		t.Errorf("RunFiles = %+v, %v", files, err)
	}

	a, err := s.GetAgent(ctx, "local", "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if a.State != sova.AgentCompleted || a.Iteration != 3 || a.SearchesUsed != 2 || a.Result != "done" || a.ChatID != "chat-1" ||
		!reflect.DeepEqual(a.Sources, []sova.Source{{Number: 1, URL: "https://a.example", Title: "A"}}) || !a.CreatedAt.Equal(t0) {
		t.Errorf("agent = %+v", a)
	}
	assertJSONEqual(t, "agent context", a.Context, json.RawMessage(`{"k":1}`))

	sp, err := s.GetSpaceByName(ctx, "local", "Notes")
	if err != nil {
		t.Fatal(err)
	}
	if sp.ID != "space-1" || sp.DocumentCount != 1 || sp.ChunkCount != 3 || sp.TotalBytes != 42 || !sp.CreatedAt.Equal(t0) {
		t.Errorf("space = %+v", sp)
	}
	d, err := s.GetDocument(ctx, "local", "space-1", "doc-1")
	if err != nil || d.Name != "a.md" || d.SHA256 != "abc" || d.Version != "v1" || d.ChunkCount != 3 {
		t.Errorf("document = %+v, %v", d, err)
	}
	v, ok, err := s.CacheGet(ctx, "page", "key-1")
	if err != nil || !ok || string(v) != "cached page" {
		t.Errorf("CacheGet = %q, %v, %v", v, ok, err)
	}

	// What the new code writes sits beside what the old code wrote.
	if err := s.AddMessage(ctx, "local", &sova.Message{ChatID: "chat-1", Role: sova.RoleUser, Content: "more"}); err != nil {
		t.Fatal(err)
	}
	if msgs, err := s.ListMessages(ctx, "local", "chat-1"); err != nil || len(msgs) != 3 || msgs[2].Content != "more" {
		t.Errorf("after AddMessage: %d messages, %v", len(msgs), err)
	}
}
