package store_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/jackc/pgx/v5"

	"github.com/sova-ai/sova/internal/store"
)

// The store's hot queries: a run's event batch (what the run service
// writes every 64 events or 250 ms), a chat message, and a chat's history.
//
//	go test ./internal/store -run '^$' -bench Store -benchmem
//
// With SOVA_TEST_DATABASE_URL set the PostgreSQL figures come too.
func BenchmarkStore(b *testing.B) {
	engines := []struct {
		name string
		open func(b *testing.B) store.Store
	}{
		{"sqlite", benchSQLite},
		{"postgres", benchPostgres},
	}
	for _, e := range engines {
		b.Run(e.name, func(b *testing.B) {
			b.Run("AppendRunEvents64", func(b *testing.B) { benchAppendRunEvents(b, e.open(b), 64) })
			b.Run("AddMessage", func(b *testing.B) { benchAddMessage(b, e.open(b)) })
			b.Run("ListMessages50", func(b *testing.B) { benchListMessages(b, e.open(b), 50) })
		})
	}
}

func benchSQLite(b *testing.B) store.Store {
	s, err := store.OpenSQLite(b.Context(), filepath.Join(b.TempDir(), "sova.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

// benchPostgres opens a store in a schema of its own, dropped afterwards.
func benchPostgres(b *testing.B) store.Store {
	base := os.Getenv(postgresURLEnv)
	if base == "" {
		b.Skipf("set %s for the PostgreSQL figures", postgresURLEnv)
	}
	var r [8]byte
	_, _ = rand.Read(r[:])
	schema := "sova_bench_" + hex.EncodeToString(r[:])
	admin, err := pgx.Connect(b.Context(), base)
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(b.Context(), "CREATE SCHEMA "+schema); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if conn, err := pgx.Connect(ctx, base); err == nil {
			_, _ = conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
			_ = conn.Close(ctx)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		b.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	s, err := store.OpenPostgres(b.Context(), u.String())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

func benchAppendRunEvents(b *testing.B, s store.Store, batch int) {
	ctx := b.Context()
	r := &sova.Run{UserID: "u", Mode: "search", State: sova.RunRunning}
	if err := s.CreateRun(ctx, r); err != nil {
		b.Fatal(err)
	}
	evs := make([]sova.RunEvent, batch)
	seq := int64(0)
	b.ReportAllocs()
	for b.Loop() {
		for i := range evs {
			seq++
			evs[i] = sova.RunEvent{Seq: seq, Event: json.RawMessage(fmt.Sprintf(`{"type":"text-delta","id":"t","delta":"word %d ","seq":%d}`, seq, seq))}
		}
		if err := s.AppendRunEvents(ctx, r.ID, evs); err != nil {
			b.Fatal(err)
		}
	}
}

func benchMessage(chatID string, i int) *sova.Message {
	return &sova.Message{
		ChatID: chatID, Role: sova.RoleAssistant, Mode: "search", Model: "m", FinishReason: "stop",
		Content: fmt.Sprintf("Answer %d with a citation [1] and some more text to make it realistic.", i),
		Parts:   json.RawMessage(`[{"type":"text","text":"Answer with a citation [1]"}]`),
		Sources: []sova.Source{{Number: 1, URL: "https://example.com/a", Title: "A", Snippet: "snippet", Kind: sova.SourceWeb}},
		Usage:   &sova.Usage{InputTokens: 100, OutputTokens: 50, TotalTokens: 150},
	}
}

func benchAddMessage(b *testing.B, s store.Store) {
	ctx := b.Context()
	c := &sova.Chat{UserID: "u"}
	if err := s.CreateChat(ctx, c); err != nil {
		b.Fatal(err)
	}
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		i++
		if err := s.AddMessage(ctx, "u", benchMessage(c.ID, i)); err != nil {
			b.Fatal(err)
		}
	}
}

func benchListMessages(b *testing.B, s store.Store, n int) {
	ctx := b.Context()
	c := &sova.Chat{UserID: "u"}
	if err := s.CreateChat(ctx, c); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		if err := s.AddMessage(ctx, "u", benchMessage(c.ID, i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		msgs, err := s.ListMessages(ctx, "u", c.ID)
		if err != nil || len(msgs) != n {
			b.Fatalf("ListMessages = %d, %v", len(msgs), err)
		}
	}
}
