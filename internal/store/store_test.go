package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/store"
	"github.com/sova-ai/sova/internal/store/storetest"
)

// postgresURLEnv names the variable holding the PostgreSQL server the
// contract tests also run against, e.g.
// postgres://postgres@127.0.0.1:5432/test?sslmode=disable
const postgresURLEnv = "SOVA_TEST_DATABASE_URL"

// database is one empty database of a back-end.
type database struct {
	openStore func(ctx context.Context) (store.Store, error)
	url       string // PostgreSQL only
}

// open returns a new handle on the database, closed when the test ends.
func (db database) open(t *testing.T) store.Store {
	t.Helper()
	s, err := db.openStore(t.Context())
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// tryOpen is open for goroutines other than the test's: it reports a
// failure with t.Errorf and returns nil.
func (db database) tryOpen(t *testing.T) store.Store {
	s, err := db.openStore(t.Context())
	if err != nil {
		t.Errorf("open: %v", err)
		return nil
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

type backend struct {
	name string
	// newDatabase returns a fresh, empty database or skips the test.
	newDatabase func(t *testing.T) database
}

var backends = []backend{
	{name: "sqlite", newDatabase: newSQLiteDatabase},
	{name: "postgres", newDatabase: newPostgresDatabase},
}

func newSQLiteDatabase(t *testing.T) database {
	path := filepath.Join(t.TempDir(), "nested", "dir", "sova.db")
	return database{openStore: func(ctx context.Context) (store.Store, error) {
		return store.OpenSQLite(ctx, path)
	}}
}

// newPostgresDatabase creates a schema of its own for the test, so that
// tests and packages running in parallel never share tables, and drops it
// when the test ends (storetest.PostgresDSN); it skips without
// SOVA_TEST_DATABASE_URL.
func newPostgresDatabase(t *testing.T) database {
	t.Helper()
	dsn := storetest.PostgresDSN(t)
	return database{url: dsn, openStore: func(ctx context.Context) (store.Store, error) {
		return store.OpenPostgres(ctx, dsn)
	}}
}

// contract lists the behaviour every back-end must have.
var contract = []struct {
	name string
	test func(t *testing.T, db database)
}{
	{"CreateAndGetChat", testCreateAndGetChat},
	{"ListChatsOrderPaginationCounts", testListChats},
	{"SetChatTitle", testSetChatTitle},
	{"MessagesRoundTrip", testMessagesRoundTrip},
	{"MessageValidationAndConflicts", testMessageValidation},
	{"UserIsolation", testUserIsolation},
	{"DeleteCascades", testDeleteCascades},
	{"SurvivesRestart", testSurvivesRestart},
	{"ConcurrentAddMessage", testConcurrentAddMessage},
	{"ConcurrentFirstOpen", testConcurrentFirstOpen},
}

func TestContract(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range contract {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					c.test(t, b.newDatabase(t))
				})
			}
		})
	}
}

func mustCreateChat(t *testing.T, s store.Store, c *sova.Chat) *sova.Chat {
	t.Helper()
	if err := s.CreateChat(t.Context(), c); err != nil {
		t.Fatalf("CreateChat: %v", err)
	}
	return c
}

func mustAddMessage(t *testing.T, s store.Store, userID string, m *sova.Message) *sova.Message {
	t.Helper()
	if err := s.AddMessage(t.Context(), userID, m); err != nil {
		t.Fatalf("AddMessage: %v", err)
	}
	return m
}

func wantNotFound(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("%s: err = %v, want ErrNotFound", what, err)
	}
}

func testCreateAndGetChat(t *testing.T, db database) {
	s := db.open(t)
	ctx := t.Context()
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}

	before := time.Now().Add(-time.Millisecond)
	c := mustCreateChat(t, s, &sova.Chat{UserID: sova.LocalUserID, Title: "First", Mode: "speed"})
	if c.ID == "" {
		t.Fatal("CreateChat did not generate an ID")
	}
	if c.CreatedAt.Before(before) || c.CreatedAt.After(time.Now()) || !c.UpdatedAt.Equal(c.CreatedAt) {
		t.Errorf("timestamps = %v / %v, want now and equal", c.CreatedAt, c.UpdatedAt)
	}

	got, err := s.GetChat(ctx, sova.LocalUserID, c.ID)
	if err != nil {
		t.Fatalf("GetChat: %v", err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Errorf("GetChat = %+v, want %+v", got, c)
	}

	// Caller-chosen ID and times are kept, at millisecond precision.
	at := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.FixedZone("X", 3600))
	c2 := mustCreateChat(t, s, &sova.Chat{ID: "client-chosen-id", UserID: sova.LocalUserID, CreatedAt: at})
	got, err = s.GetChat(ctx, sova.LocalUserID, "client-chosen-id")
	if err != nil {
		t.Fatalf("GetChat: %v", err)
	}
	want := at.Truncate(time.Millisecond)
	if !got.CreatedAt.Equal(want) || !got.UpdatedAt.Equal(want) || !c2.CreatedAt.Equal(want) {
		t.Errorf("times = %v / %v (returned %v), want %v", got.CreatedAt, got.UpdatedAt, c2.CreatedAt, want)
	}
	if got.CreatedAt.Location() != time.UTC {
		t.Errorf("CreatedAt location = %v, want UTC", got.CreatedAt.Location())
	}

	err = s.CreateChat(ctx, &sova.Chat{ID: "client-chosen-id", UserID: "someone-else"})
	if !errors.Is(err, sova.ErrConflict) {
		t.Errorf("CreateChat with a taken ID: err = %v, want ErrConflict", err)
	}
	if err := s.CreateChat(ctx, &sova.Chat{}); !errors.Is(err, sova.ErrInvalid) {
		t.Errorf("CreateChat without a user: err = %v, want ErrInvalid", err)
	}
	_, err = s.GetChat(ctx, sova.LocalUserID, "missing")
	wantNotFound(t, "GetChat(missing)", err)
}

func testListChats(t *testing.T, db database) {
	s := db.open(t)
	ctx := t.Context()
	const user = "lister"
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)

	// Chats 0..4, each created a minute after the previous; chat 1 gets
	// messages, which moves it to the top.
	var ids []string
	for i := range 5 {
		at := base.Add(time.Duration(i) * time.Minute)
		c := mustCreateChat(t, s, &sova.Chat{UserID: user, Title: fmt.Sprintf("chat %d", i), CreatedAt: at})
		ids = append(ids, c.ID)
	}
	mustCreateChat(t, s, &sova.Chat{UserID: "other", Title: "not mine"})
	for range 3 {
		mustAddMessage(t, s, user, &sova.Message{ChatID: ids[1], Role: sova.RoleUser, Content: "hi"})
	}

	all, err := s.ListChats(ctx, user, 0, 0)
	if err != nil {
		t.Fatalf("ListChats: %v", err)
	}
	wantOrder := []string{ids[1], ids[4], ids[3], ids[2], ids[0]}
	if got := chatIDs(all); !reflect.DeepEqual(got, wantOrder) {
		t.Fatalf("order = %v, want %v", got, wantOrder)
	}
	for _, c := range all {
		want := 0
		if c.ID == ids[1] {
			want = 3
		}
		if c.MessageCount != want {
			t.Errorf("chat %s MessageCount = %d, want %d", c.Title, c.MessageCount, want)
		}
	}
	if !all[0].UpdatedAt.After(all[0].CreatedAt) {
		t.Errorf("AddMessage did not move UpdatedAt: %v / %v", all[0].CreatedAt, all[0].UpdatedAt)
	}
	got, err := s.GetChat(ctx, user, ids[1])
	if err != nil || got.MessageCount != 3 {
		t.Errorf("GetChat count = %v, %v; want 3", got, err)
	}

	for _, tc := range []struct {
		limit, offset int
		want          []string
	}{
		{2, 0, wantOrder[0:2]},
		{2, 2, wantOrder[2:4]},
		{2, 4, wantOrder[4:5]},
		{2, 6, nil},
		{10, 0, wantOrder},
		{0, 3, wantOrder[3:]},
		{-1, -5, wantOrder},
	} {
		page, err := s.ListChats(ctx, user, tc.limit, tc.offset)
		if err != nil {
			t.Fatalf("ListChats(%d, %d): %v", tc.limit, tc.offset, err)
		}
		if got := chatIDs(page); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ListChats(%d, %d) = %v, want %v", tc.limit, tc.offset, got, tc.want)
		}
	}

	none, err := s.ListChats(ctx, "nobody", 10, 0)
	if err != nil || len(none) != 0 {
		t.Errorf("ListChats(nobody) = %v, %v; want none", none, err)
	}
}

func chatIDs(chats []sova.Chat) []string {
	var ids []string
	for _, c := range chats {
		ids = append(ids, c.ID)
	}
	return ids
}

func testSetChatTitle(t *testing.T, db database) {
	s := db.open(t)
	ctx := t.Context()
	c := mustCreateChat(t, s, &sova.Chat{UserID: sova.LocalUserID, Title: "old"})
	if err := s.SetChatTitle(ctx, sova.LocalUserID, c.ID, "new"); err != nil {
		t.Fatalf("SetChatTitle: %v", err)
	}
	got, err := s.GetChat(ctx, sova.LocalUserID, c.ID)
	if err != nil {
		t.Fatalf("GetChat: %v", err)
	}
	if got.Title != "new" || !got.UpdatedAt.Equal(c.UpdatedAt) {
		t.Errorf("after SetChatTitle: %+v, want title new and UpdatedAt unchanged (%v)", got, c.UpdatedAt)
	}
	wantNotFound(t, "SetChatTitle(missing)", s.SetChatTitle(ctx, sova.LocalUserID, "missing", "x"))
}

func testMessagesRoundTrip(t *testing.T, db database) {
	s := db.open(t)
	ctx := t.Context()
	c := mustCreateChat(t, s, &sova.Chat{UserID: sova.LocalUserID, Mode: "balanced"})

	user := mustAddMessage(t, s, sova.LocalUserID, &sova.Message{
		ChatID:  c.ID,
		Role:    sova.RoleUser,
		Content: "What is WAL?",
		Parts:   json.RawMessage(`[{"type":"text","text":"What is WAL?"}]`),
	})
	assistant := &sova.Message{
		ID:      "client-message-id",
		ChatID:  c.ID,
		Role:    sova.RoleAssistant,
		Content: "Write-ahead logging [1] — ünïcödé ✓.",
		Parts: json.RawMessage(`[
			{"type": "step-start"},
			{"type": "text", "text": "Write-ahead logging [1]", "state": "done"},
			{"type": "data-sources", "data": {"n": 1, "nested": [1, 2.5, null, true]}}
		]`),
		Sources: []sova.Source{
			{Number: 1, URL: "https://sqlite.org/wal.html", Title: "WAL", Snippet: "The default method…", Kind: sova.SourceWeb, Published: "2024-01-01", Favicon: "https://sqlite.org/favicon.ico"},
			{URL: "https://example.com/doc.pdf", Kind: sova.SourceDocument},
		},
		Usage:        &sova.Usage{InputTokens: 1200, OutputTokens: 345, TotalTokens: 1545},
		Model:        "gpt-x",
		FinishReason: event.FinishStop,
		Mode:         "balanced",
		ToolCalls:    json.RawMessage(`[{"id":"call_1","name":"web_search","arguments":{"query":"sqlite wal"},"result":{"results":[{"url":"https://sqlite.org/wal.html"}]}}]`),
		CreatedAt:    user.CreatedAt, // same millisecond: insertion order decides
	}
	mustAddMessage(t, s, sova.LocalUserID, assistant)
	failed := mustAddMessage(t, s, sova.LocalUserID, &sova.Message{
		ChatID:       c.ID,
		Role:         sova.RoleAssistant,
		Error:        "upstream timeout",
		FinishReason: event.FinishError,
		Usage:        &sova.Usage{},
		Sources:      []sova.Source{},
	})
	system := mustAddMessage(t, s, sova.LocalUserID, &sova.Message{
		ChatID:    c.ID,
		Role:      sova.RoleSystem,
		Content:   "earlier",
		CreatedAt: user.CreatedAt.Add(-time.Second),
	})

	got, err := s.ListMessages(ctx, sova.LocalUserID, c.ID)
	if err != nil {
		t.Fatalf("ListMessages: %v", err)
	}
	want := []*sova.Message{system, user, assistant, failed}
	if len(got) != len(want) {
		t.Fatalf("ListMessages returned %d messages, want %d", len(got), len(want))
	}
	for i, w := range want {
		assertMessage(t, got[i], *w)
	}
	if got[1].Parts == nil || got[0].Parts != nil || got[0].Sources != nil || got[0].Usage != nil || got[0].ToolCalls != nil {
		t.Errorf("absent fields must stay absent: %+v", got[0])
	}
	if got[3].Usage == nil || got[3].Sources == nil {
		t.Errorf("zero usage and empty sources must survive: %+v", got[3])
	}

	chat, err := s.GetChat(ctx, sova.LocalUserID, c.ID)
	if err != nil {
		t.Fatalf("GetChat: %v", err)
	}
	if chat.MessageCount != 4 {
		t.Errorf("MessageCount = %d, want 4", chat.MessageCount)
	}
}

func assertMessage(t *testing.T, got sova.Message, want sova.Message) {
	t.Helper()
	if !got.CreatedAt.Equal(want.CreatedAt) {
		t.Errorf("message %s CreatedAt = %v, want %v", want.ID, got.CreatedAt, want.CreatedAt)
	}
	if got.CreatedAt.Location() != time.UTC {
		t.Errorf("message %s CreatedAt location = %v, want UTC", want.ID, got.CreatedAt.Location())
	}
	assertJSONEqual(t, "parts of "+want.ID, got.Parts, want.Parts)
	assertJSONEqual(t, "tool calls of "+want.ID, got.ToolCalls, want.ToolCalls)
	got.CreatedAt, want.CreatedAt = time.Time{}, time.Time{}
	got.Parts, want.Parts, got.ToolCalls, want.ToolCalls = nil, nil, nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("message mismatch:\n got %+v\nwant %+v", got, want)
	}
}

func assertJSONEqual(t *testing.T, what string, got, want json.RawMessage) {
	t.Helper()
	if (got == nil) != (want == nil) {
		t.Errorf("%s = %s, want %s", what, got, want)
		return
	}
	if want == nil {
		return
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: stored JSON does not parse: %v", what, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s = %s, want %s", what, got, want)
	}
}

func testMessageValidation(t *testing.T, db database) {
	s := db.open(t)
	ctx := t.Context()
	c := mustCreateChat(t, s, &sova.Chat{UserID: sova.LocalUserID})
	mustAddMessage(t, s, sova.LocalUserID, &sova.Message{ID: "m1", ChatID: c.ID, Role: sova.RoleUser})

	for _, tc := range []struct {
		name string
		msg  sova.Message
		want error
	}{
		{"unknown role", sova.Message{ChatID: c.ID, Role: "tool"}, sova.ErrInvalid},
		{"empty role", sova.Message{ChatID: c.ID}, sova.ErrInvalid},
		{"invalid parts", sova.Message{ChatID: c.ID, Role: sova.RoleUser, Parts: json.RawMessage(`[{`)}, sova.ErrInvalid},
		{"invalid tool calls", sova.Message{ChatID: c.ID, Role: sova.RoleUser, ToolCalls: json.RawMessage(`nope`)}, sova.ErrInvalid},
		{"taken ID", sova.Message{ID: "m1", ChatID: c.ID, Role: sova.RoleUser}, sova.ErrConflict},
		{"missing chat", sova.Message{ChatID: "missing", Role: sova.RoleUser}, sova.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.AddMessage(ctx, sova.LocalUserID, &tc.msg); !errors.Is(err, tc.want) {
				t.Errorf("AddMessage: err = %v, want %v", err, tc.want)
			}
		})
	}
	msgs, err := s.ListMessages(ctx, sova.LocalUserID, c.ID)
	if err != nil || len(msgs) != 1 {
		t.Errorf("after rejected messages: %d messages, %v; want 1", len(msgs), err)
	}
}

func testUserIsolation(t *testing.T, db database) {
	s := db.open(t)
	ctx := t.Context()
	const alice, bob = "alice", "bob"
	c := mustCreateChat(t, s, &sova.Chat{UserID: alice, Title: "alice's"})
	mustAddMessage(t, s, alice, &sova.Message{ChatID: c.ID, Role: sova.RoleUser, Content: "secret"})
	before, err := s.GetChat(ctx, alice, c.ID)
	if err != nil {
		t.Fatalf("alice GetChat: %v", err)
	}

	_, err = s.GetChat(ctx, bob, c.ID)
	wantNotFound(t, "bob GetChat", err)
	_, err = s.ListMessages(ctx, bob, c.ID)
	wantNotFound(t, "bob ListMessages", err)
	wantNotFound(t, "bob AddMessage", s.AddMessage(ctx, bob, &sova.Message{
		ChatID: c.ID, Role: sova.RoleUser, Content: "hi", CreatedAt: time.Now().Add(time.Hour),
	}))
	wantNotFound(t, "bob SetChatTitle", s.SetChatTitle(ctx, bob, c.ID, "mine now"))
	wantNotFound(t, "bob DeleteChat", s.DeleteChat(ctx, bob, c.ID))
	if chats, err := s.ListChats(ctx, bob, 0, 0); err != nil || len(chats) != 0 {
		t.Errorf("bob ListChats = %v, %v; want none", chats, err)
	}

	got, err := s.GetChat(ctx, alice, c.ID)
	if err != nil {
		t.Fatalf("alice GetChat: %v", err)
	}
	if !reflect.DeepEqual(got, before) {
		t.Errorf("alice's chat changed by bob: %+v", got)
	}
	msgs, err := s.ListMessages(ctx, alice, c.ID)
	if err != nil || len(msgs) != 1 || msgs[0].Content != "secret" {
		t.Errorf("alice ListMessages = %+v, %v", msgs, err)
	}
}

func testDeleteCascades(t *testing.T, db database) {
	s := db.open(t)
	ctx := t.Context()
	doomed := mustCreateChat(t, s, &sova.Chat{UserID: sova.LocalUserID})
	kept := mustCreateChat(t, s, &sova.Chat{UserID: sova.LocalUserID})
	for _, c := range []*sova.Chat{doomed, kept} {
		for i := range 3 {
			mustAddMessage(t, s, sova.LocalUserID, &sova.Message{ID: fmt.Sprintf("%s-%d", c.ID, i), ChatID: c.ID, Role: sova.RoleUser})
		}
	}
	if err := s.DeleteChat(ctx, sova.LocalUserID, doomed.ID); err != nil {
		t.Fatalf("DeleteChat: %v", err)
	}
	_, err := s.GetChat(ctx, sova.LocalUserID, doomed.ID)
	wantNotFound(t, "GetChat after delete", err)
	_, err = s.ListMessages(ctx, sova.LocalUserID, doomed.ID)
	wantNotFound(t, "ListMessages after delete", err)
	wantNotFound(t, "DeleteChat twice", s.DeleteChat(ctx, sova.LocalUserID, doomed.ID))

	// The messages are gone, not just hidden: a chat recreated under the
	// same ID starts empty, and their IDs are free again.
	mustCreateChat(t, s, &sova.Chat{ID: doomed.ID, UserID: sova.LocalUserID})
	if msgs, err := s.ListMessages(ctx, sova.LocalUserID, doomed.ID); err != nil || len(msgs) != 0 {
		t.Errorf("recreated chat has %d messages (%v), want 0", len(msgs), err)
	}
	mustAddMessage(t, s, sova.LocalUserID, &sova.Message{ID: doomed.ID + "-0", ChatID: doomed.ID, Role: sova.RoleUser})

	if msgs, err := s.ListMessages(ctx, sova.LocalUserID, kept.ID); err != nil || len(msgs) != 3 {
		t.Errorf("other chat has %d messages (%v), want 3", len(msgs), err)
	}
}

func testSurvivesRestart(t *testing.T, db database) {
	s := db.open(t)
	c := mustCreateChat(t, s, &sova.Chat{UserID: sova.LocalUserID, Title: "persistent"})
	m := mustAddMessage(t, s, sova.LocalUserID, &sova.Message{
		ChatID: c.ID, Role: sova.RoleAssistant, Content: "kept",
		Sources: []sova.Source{{Number: 1, URL: "https://example.com"}},
		Usage:   &sova.Usage{InputTokens: 1, OutputTokens: 2, TotalTokens: 3},
		Parts:   json.RawMessage(`[{"type":"text","text":"kept"}]`),
	})
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	// Reopening runs the migrations again, which must be a no-op.
	for range 2 {
		s = db.open(t)
		got, err := s.GetChat(t.Context(), sova.LocalUserID, c.ID)
		if err != nil {
			t.Fatalf("GetChat after reopen: %v", err)
		}
		if got.Title != "persistent" || got.MessageCount != 1 {
			t.Errorf("chat after reopen = %+v", got)
		}
		msgs, err := s.ListMessages(t.Context(), sova.LocalUserID, c.ID)
		if err != nil || len(msgs) != 1 {
			t.Fatalf("ListMessages after reopen = %d, %v", len(msgs), err)
		}
		assertMessage(t, msgs[0], *m)
		if err := s.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
}

func testConcurrentAddMessage(t *testing.T, db database) {
	s := db.open(t)
	ctx := t.Context()
	c := mustCreateChat(t, s, &sova.Chat{UserID: sova.LocalUserID})
	other := mustCreateChat(t, s, &sova.Chat{UserID: sova.LocalUserID})

	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Go(func() {
			errs <- s.AddMessage(ctx, sova.LocalUserID, &sova.Message{
				ChatID: c.ID, Role: sova.RoleUser, Content: fmt.Sprintf("message %d", i),
				Parts: json.RawMessage(`[{"type":"text"}]`),
			})
		})
		// Readers and writers on another chat at the same time.
		wg.Go(func() {
			if i%2 == 0 {
				_, err := s.ListChats(ctx, sova.LocalUserID, 10, 0)
				errs <- err
				return
			}
			errs <- s.AddMessage(ctx, sova.LocalUserID, &sova.Message{ChatID: other.ID, Role: sova.RoleAssistant})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent call: %v", err)
		}
	}

	msgs, err := s.ListMessages(ctx, sova.LocalUserID, c.ID)
	if err != nil {
		t.Fatalf("ListMessages: %v", err)
	}
	if len(msgs) != n {
		t.Errorf("got %d messages, want %d", len(msgs), n)
	}
	seen := map[string]bool{}
	for i, m := range msgs {
		seen[m.Content] = true
		if i > 0 && m.CreatedAt.Before(msgs[i-1].CreatedAt) {
			t.Errorf("messages out of order at %d", i)
		}
	}
	if len(seen) != n {
		t.Errorf("got %d distinct messages, want %d", len(seen), n)
	}
	got, err := s.GetChat(ctx, sova.LocalUserID, c.ID)
	if err != nil || got.MessageCount != n {
		t.Errorf("GetChat = %+v, %v; want %d messages", got, err, n)
	}
}

// testConcurrentFirstOpen starts several stores on one empty database at
// once, as several servers (or a server and a CLI command) might: exactly
// one migrates and all of them work.
func testConcurrentFirstOpen(t *testing.T, db database) {
	const n = 5
	stores := make([]store.Store, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			stores[i] = db.tryOpen(t)
		})
	}
	wg.Wait()
	for i, s := range stores {
		if s == nil {
			t.Fatalf("store %d did not open", i)
		}
	}
	c := mustCreateChat(t, stores[0], &sova.Chat{UserID: sova.LocalUserID})
	for _, s := range stores {
		mustAddMessage(t, s, sova.LocalUserID, &sova.Message{ChatID: c.ID, Role: sova.RoleUser})
	}
	got, err := stores[n-1].GetChat(t.Context(), sova.LocalUserID, c.ID)
	if err != nil || got.MessageCount != n {
		t.Errorf("GetChat = %+v, %v; want %d messages", got, err, n)
	}
}

func TestOpen(t *testing.T) {
	ctx := t.Context()

	t.Run("empty URL is SQLite in the data directory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data")
		s, err := store.Open(ctx, "", dir)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer s.Close()
		if s.Engine() != "sqlite" {
			t.Errorf("Open returned a %s store, want sqlite", s.Engine())
		}
		if _, err := os.Stat(filepath.Join(dir, store.SQLiteFileName)); err != nil {
			t.Errorf("database file: %v", err)
		}
	})

	for _, tc := range []struct{ name, url, dataDir string }{
		{"no URL and no data directory", "", ""},
		{"unsupported scheme", "mysql://user:hunter2@localhost/sova", t.TempDir()},
		{"sqlite URL", "sqlite:///tmp/x.db", t.TempDir()},
		{"not a URL", "hunter2@@", t.TempDir()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := store.Open(ctx, tc.url, tc.dataDir)
			if err == nil {
				_ = s.Close()
				t.Fatal("Open succeeded, want an error")
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error leaks the URL: %v", err)
			}
		})
	}

	for _, scheme := range []string{"postgres", "postgresql"} {
		t.Run(scheme+" URL is PostgreSQL", func(t *testing.T) {
			db := newPostgresDatabase(t)
			u, err := url.Parse(db.url)
			if err != nil {
				t.Fatal(err)
			}
			u.Scheme = scheme
			s, err := store.Open(ctx, u.String(), "")
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer s.Close()
			if s.Engine() != "postgres" {
				t.Errorf("Open returned a %s store, want postgres", s.Engine())
			}
			if err := s.Ping(ctx); err != nil {
				t.Errorf("Ping: %v", err)
			}
		})
	}
}
