package research

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/wire"
)

// TestWireFormats puts a whole run's events through the UI message stream
// and OpenAI encoders, and lets the AI SDK's own parser check the stream
// when Node and test/aisdk are installed.
func TestWireFormats(t *testing.T) {
	e := newEnv(t)
	res, rec := e.run(t, mode.Input{Question: question})
	events := append([]event.Event{{Type: event.TypeStart, Time: time.Now(), Start: &event.Start{RunID: "run_1", ChatID: "chat_1", MessageID: "msg_1", Mode: ID}}}, rec.Events()...)
	events = append(events, event.Event{Type: event.TypeFinish, Time: time.Now(), Finish: &event.Finish{Reason: res.FinishReason, Sources: res.Sources}})

	var ui bytes.Buffer
	enc := wire.NewUIStream(&ui, nil)
	for _, ev := range events {
		if err := enc.Emit(ev); err != nil {
			t.Fatalf("UI stream rejected %s: %v", ev.Type, err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{`"type":"data-research_plan"`, `"type":"data-research_agent"`, `"type":"data-research_note"`, `"type":"data-supervisor_decision"`, `"id":"agent-1"`} {
		if !strings.Contains(ui.String(), part) {
			t.Errorf("UI stream lacks %s", part)
		}
	}

	var oa bytes.Buffer
	oenc := wire.NewChunkStream(&oa, nil, "chatcmpl-1", ID, time.Now(), true, wire.WithProgress(wire.ProgressReasoning))
	for _, ev := range events {
		if err := oenc.Emit(ev); err != nil {
			t.Fatalf("OpenAI stream rejected %s: %v", ev.Type, err)
		}
	}
	_ = oenc.Close()
	if !strings.Contains(oa.String(), "Supervisor, call 1/6") {
		t.Error("the OpenAI stream's progress lacks the supervisor's decisions")
	}

	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; the AI SDK check is skipped")
	}
	dir, _ := filepath.Abs(filepath.Join("..", "..", "..", "test", "aisdk"))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "ai", "package.json")); err != nil {
		t.Skip("test/aisdk/node_modules is missing; run `npm ci --prefix test/aisdk`")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "validate.mjs"), "-")
	cmd.Dir = dir
	cmd.Stdin = &ui
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the AI SDK rejected the stream: %v\n%s", err, stderr.String())
	}
	var sum struct {
		TextLength int      `json:"textLength"`
		SourceURLs int      `json:"sourceUrls"`
		DataTypes  []string `json:"dataTypes"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
		t.Fatalf("validator output %q: %v", stdout.String(), err)
	}
	for _, dt := range []string{"data-research_plan", "data-research_agent", "data-research_note", "data-supervisor_decision"} {
		if !slices.Contains(sum.DataTypes, dt) {
			t.Errorf("the AI SDK saw no %s part; saw %v", dt, sum.DataTypes)
		}
	}
	if sum.TextLength < 1500 || sum.SourceURLs != len(res.Sources) {
		t.Errorf("AI SDK message: %d text chars, %d source-url parts (want ≥1500, %d)", sum.TextLength, sum.SourceURLs, len(res.Sources))
	}
}
