package store_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
)

func TestRunsContract(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			testRuns(t, b.newDatabase(t))
		})
	}
}

func testRuns(t *testing.T, db database) {
	s := db.open(t)
	ctx := t.Context()
	chat := mustCreateChat(t, s, &sova.Chat{UserID: "ann", Mode: "deep_research"})

	r := &sova.Run{UserID: "ann", ChatID: chat.ID, Mode: "deep_research", State: sova.RunRunning, Question: "q",
		Input: json.RawMessage(`{"timezone":"Europe/Moscow"}`)}
	if err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	orphan := &sova.Run{UserID: "ann", Mode: "search", State: sova.RunCompleted}
	if err := s.CreateRun(ctx, orphan); err != nil {
		t.Fatalf("a run without a chat: %v", err)
	}
	if err := s.CreateRun(ctx, &sova.Run{UserID: "ann"}); !errors.Is(err, sova.ErrInvalid) {
		t.Errorf("invalid run: %v", err)
	}

	// Events round-trip in order, and reading after a sequence number resumes.
	var evs []sova.RunEvent
	for i := int64(1); i <= 5; i++ {
		evs = append(evs, sova.RunEvent{Seq: i, Event: json.RawMessage(fmt.Sprintf(`{"type":"text-delta","text":"%d"}`, i))})
	}
	if err := s.AppendRunEvents(ctx, r.ID, evs[:3]); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendRunEvents(ctx, r.ID, evs[3:]); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendRunEvents(ctx, r.ID, evs[4:]); err == nil {
		t.Error("a repeated sequence number was accepted")
	}
	got, err := s.RunEvents(ctx, r.ID, 2)
	if err != nil || len(got) != 3 || got[0].Seq != 3 {
		t.Fatalf("events after 2: %v %+v", err, got)
	}
	var ev event.Event
	if err := json.Unmarshal(got[2].Event, &ev); err != nil || ev.Text != "5" {
		t.Errorf("event 5 = %s (%v)", got[2].Event, err)
	}

	// Update, get, latest, by state; another user sees nothing.
	r.State, r.Pause, r.Report, r.LastSeq = sova.RunWaiting, json.RawMessage(`{"questions":["Which years?"]}`), "", 5
	r.Usage = &sova.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15}
	if err := s.UpdateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	g, err := s.GetRun(ctx, "ann", r.ID)
	if err != nil || g.State != sova.RunWaiting || g.LastSeq != 5 || g.Usage.TotalTokens != 15 || g.ChatID != chat.ID {
		t.Fatalf("get: %v %+v", err, g)
	}
	assertJSONEqual(t, "pause", g.Pause, r.Pause)
	assertJSONEqual(t, "input", g.Input, r.Input)
	if _, err := s.GetRun(ctx, "bob", r.ID); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("other user got the run: %v", err)
	}
	if err := s.UpdateRun(ctx, &sova.Run{ID: r.ID, UserID: "bob", State: sova.RunFailed}); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("other user updated the run: %v", err)
	}
	latest, err := s.LatestRun(ctx, "ann", chat.ID)
	if err != nil || latest.ID != r.ID {
		t.Errorf("latest: %v %+v", err, latest)
	}
	waiting, err := s.RunsInState(ctx, sova.RunWaiting)
	if err != nil || len(waiting) != 1 || waiting[0].ID != r.ID {
		t.Errorf("waiting runs: %v %+v", err, waiting)
	}

	// Workspace files.
	for path, content := range map[string]string{"main.md": "# Main", "agents/agent_1.md": "todo", "main2.md": "Москва"} {
		if err := s.PutRunFile(ctx, r.ID, path, content); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutRunFile(ctx, r.ID, "main.md", "# Main\nmore"); err != nil {
		t.Fatal(err)
	}
	if c, err := s.RunFile(ctx, r.ID, "main.md"); err != nil || c != "# Main\nmore" {
		t.Errorf("file: %q %v", c, err)
	}
	files, err := s.RunFiles(ctx, r.ID)
	if err != nil || len(files) != 3 || files[0].Path != "agents/agent_1.md" || files[2].Size != len("Москва") {
		t.Errorf("files: %v %+v", err, files)
	}
	if _, err := s.RunFile(ctx, r.ID, "nope.md"); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("missing file: %v", err)
	}
	if err := s.DeleteRunFiles(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	if files, _ := s.RunFiles(ctx, r.ID); len(files) != 0 {
		t.Errorf("files after delete: %+v", files)
	}

	// Deleting the chat deletes its runs and their events.
	if err := s.DeleteChat(ctx, "ann", chat.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetRun(ctx, "ann", r.ID); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("run survived its chat: %v", err)
	}
	if evs, _ := s.RunEvents(ctx, r.ID, 0); len(evs) != 0 {
		t.Errorf("events survived their run: %d", len(evs))
	}
}
