package store_test

import (
	"bytes"
	"context"
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

func mustEvents(t *testing.T, s interface {
	RunEvents(ctx context.Context, runID string, after int64) ([]sova.RunEvent, error)
}, runID string) []sova.RunEvent {
	t.Helper()
	evs, err := s.RunEvents(t.Context(), runID, 0)
	if err != nil {
		t.Fatal(err)
	}
	return evs
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

	// Events of several runs in one write: all stored, or none (a repeated
	// number, or a run that does not exist, refuses the whole write).
	mixed := []sova.RunEvent{
		{RunID: r.ID, Seq: 6, Event: json.RawMessage(`{"type":"text-delta","text":"6"}`)},
		{RunID: orphan.ID, Seq: 1, Event: json.RawMessage(`{"type":"start"}`)},
	}
	if err := s.AppendEvents(ctx, append(mixed, sova.RunEvent{RunID: "no-such-run", Seq: 1, Event: json.RawMessage(`{}`)})); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("a write naming a missing run: %v", err)
	}
	if err := s.AppendEvents(ctx, append(mixed, evs[0])); err == nil {
		t.Error("a write repeating a number was accepted")
	}
	if got, _ := s.RunEvents(ctx, orphan.ID, 0); len(got) != 0 {
		t.Fatalf("a refused write stored %d events", len(got))
	}
	if err := s.AppendEvents(ctx, mixed); err != nil {
		t.Fatal(err)
	}
	if a, b := mustEvents(t, s, r.ID), mustEvents(t, s, orphan.ID); len(a) != 6 || len(b) != 1 {
		t.Errorf("after a write of two runs: %d and %d events", len(a), len(b))
	}
	// A restart is unique per run restarted, and found by it.
	re := &sova.Run{UserID: "ann", Mode: "search", State: sova.RunCompleted, RetryOf: orphan.ID, OriginID: orphan.ID}
	if err := s.CreateRun(ctx, re); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateRun(ctx, &sova.Run{UserID: "ann", Mode: "search", State: sova.RunCompleted, RetryOf: orphan.ID}); !errors.Is(err, sova.ErrConflict) {
		t.Errorf("a second restart of a run: %v", err)
	}
	if got, err := s.RestartOf(ctx, "ann", orphan.ID); err != nil || got.ID != re.ID || got.OriginID != orphan.ID {
		t.Errorf("restart of the run: %+v %v", got, err)
	}
	if _, err := s.RestartOf(ctx, "bob", orphan.ID); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("another user's restart: %v", err)
	}
	// One running run per chat.
	if err := s.CreateRun(ctx, &sova.Run{UserID: "ann", ChatID: chat.ID, Mode: "search", State: sova.RunRunning}); !errors.Is(err, sova.ErrConflict) {
		t.Errorf("a second running run in a chat: %v", err)
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

	// A paused run is resumed once: of two resumes at once (two nodes
	// given the person's answer), one saves the run, the other conflicts.
	paused := &sova.Run{UserID: "ann", Mode: "sgr_agent", State: sova.RunWaiting}
	if err := s.CreateRun(ctx, paused); err != nil {
		t.Fatal(err)
	}
	resumed := make(chan error, 2)
	for node := range 2 {
		go func() {
			cp := *paused
			cp.State, cp.NodeID = sova.RunRunning, fmt.Sprintf("node-%d", node)
			resumed <- s.ResumeRun(ctx, &cp)
		}()
	}
	var won, conflicts int
	for range 2 {
		switch err := <-resumed; {
		case err == nil:
			won++
		case errors.Is(err, sova.ErrConflict):
			conflicts++
		default:
			t.Errorf("resume: %v", err)
		}
	}
	if won != 1 || conflicts != 1 {
		t.Errorf("two resumes at once: %d saved, %d conflicts; want one of each", won, conflicts)
	}
	if g, err := s.GetRun(ctx, "ann", paused.ID); err != nil || g.State != sova.RunRunning || g.NodeID == "" {
		t.Errorf("resumed run: %+v %v", g, err)
	}
	paused.State = sova.RunCompleted
	if err := s.UpdateRun(ctx, paused); err != nil {
		t.Fatal(err)
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
	// Files of bytes (charts, PDFs) keep every byte and their type; a
	// text file read as bytes is its text with the text type.
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe\x00")
	if err := s.PutRunFileBytes(ctx, r.ID, "charts/code_1/chart_1.png", "image/png", png); err != nil {
		t.Fatal(err)
	}
	if b, ct, err := s.RunFileBytes(ctx, r.ID, "charts/code_1/chart_1.png"); err != nil || !bytes.Equal(b, png) || ct != "image/png" {
		t.Errorf("bytes file: %q %q %v", b, ct, err)
	}
	if b, ct, err := s.RunFileBytes(ctx, r.ID, "main2.md"); err != nil || string(b) != "Москва" || ct != sova.TextFileType {
		t.Errorf("text file as bytes: %q %q %v", b, ct, err)
	}
	if err := s.PutRunFileBytes(ctx, r.ID, "empty.bin", "", nil); err != nil {
		t.Fatal(err)
	}
	if b, ct, err := s.RunFileBytes(ctx, r.ID, "empty.bin"); err != nil || len(b) != 0 || ct != "application/octet-stream" {
		t.Errorf("empty bytes file: %q %q %v", b, ct, err)
	}
	// Writing a path as text again makes it a text file.
	if err := s.PutRunFile(ctx, r.ID, "empty.bin", "text now"); err != nil {
		t.Fatal(err)
	}
	if b, ct, err := s.RunFileBytes(ctx, r.ID, "empty.bin"); err != nil || string(b) != "text now" || ct != sova.TextFileType {
		t.Errorf("bytes file rewritten as text: %q %q %v", b, ct, err)
	}
	files, err = s.RunFiles(ctx, r.ID)
	if err != nil || len(files) != 5 || files[0].Path != "agents/agent_1.md" || files[1].Path != "charts/code_1/chart_1.png" ||
		files[1].Size != len(png) || files[1].ContentType != "image/png" || files[3].ContentType != sova.TextFileType {
		t.Errorf("files with bytes: %v %+v", err, files)
	}
	if _, _, err := s.RunFileBytes(ctx, r.ID, "nope.png"); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("missing bytes file: %v", err)
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
