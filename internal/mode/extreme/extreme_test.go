package extreme

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/fetch"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/sandbox"
	"github.com/sova-ai/sova/internal/search"
	"github.com/sova-ai/sova/internal/sovatest"
	"github.com/sova-ai/sova/internal/tools"
)

// fakeSandbox stands in for the sandbox: it records the code and answers
// with output and one PNG chart, as a cell that drew one would.
type fakeSandbox struct {
	mu    sync.Mutex
	codes []string
	done  int // runs that ended with output
	fail  error
	// hook, when set, is called as a cell starts; its error ends the cell.
	hook func(ctx context.Context) error
}

func (f *fakeSandbox) Run(ctx context.Context, code string) (*sandbox.Result, error) {
	f.mu.Lock()
	f.codes = append(f.codes, code)
	hook := f.hook
	f.mu.Unlock()
	if hook != nil {
		if err := hook(ctx); err != nil {
			return nil, err
		}
	}
	if f.fail != nil {
		return nil, f.fail
	}
	f.mu.Lock()
	f.done++
	f.mu.Unlock()
	return &sandbox.Result{Stdout: "average growth 3.7\n", Duration: 40 * time.Millisecond,
		Files: []sandbox.File{
			{Name: "chart_1.png", MIME: "image/png", Data: testPNG(), Size: int64(len(testPNG()))},
			{Name: "fake.png", MIME: "image/png", Data: []byte("<html>not a png</html>"), Size: 22},
		}}, nil
}

func (f *fakeSandbox) Config() sandbox.Config {
	return sandbox.Config{CPUTime: time.Second, WallTime: time.Second}
}

func testPNG() []byte {
	m := image.NewNRGBA(image.Rect(0, 0, 64, 48))
	for x := range 64 {
		for y := range 48 {
			m.SetNRGBA(x, y, color.NRGBA{R: uint8(x * 4), G: 100, B: 200, A: 255})
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, m)
	return buf.Bytes()
}

// memFiles is a mode.FileWorkspace in memory.
type memFiles struct {
	mu    sync.Mutex
	files map[string][]byte
	types map[string]string
}

func newMemFiles() *memFiles {
	return &memFiles{files: map[string][]byte{}, types: map[string]string{}}
}

func (w *memFiles) Write(_ context.Context, p, content string) error {
	return w.WriteBytes(context.Background(), p, "text/markdown; charset=utf-8", []byte(content))
}
func (w *memFiles) Append(ctx context.Context, p, content string) error {
	old, _ := w.Read(ctx, p)
	return w.Write(ctx, p, old+content)
}
func (w *memFiles) Read(ctx context.Context, p string) (string, error) {
	b, _, err := w.ReadBytes(ctx, p)
	return string(b), err
}
func (w *memFiles) List(context.Context) ([]string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for p := range w.files {
		out = append(out, p)
	}
	return out, nil
}
func (w *memFiles) WriteBytes(_ context.Context, p, ct string, data []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.files[p], w.types[p] = data, ct
	return nil
}
func (w *memFiles) ReadBytes(_ context.Context, p string) ([]byte, string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	b, ok := w.files[p]
	if !ok {
		return nil, "", mode.ErrNoFile
	}
	return b, w.types[p], nil
}

type env struct {
	model *sovatest.Model
	sx    *sovatest.SearXNG
	sb    *fakeSandbox
	prov  tools.Providers
}

func newEnv(t *testing.T) *env {
	arts := sovatest.DefaultArticles()
	site := sovatest.NewSite(t, arts)
	e := &env{model: sovatest.NewModel(t), sx: sovatest.NewSearXNG(t, site, arts), sb: &fakeSandbox{}}
	e.prov = tools.Providers{
		Search: search.NewChain(search.NewSearXNG(e.sx.URL, nil)),
		Reader: fetch.New(fetch.Config{AllowHosts: []string{"127.0.0.1"}}),
	}
	e.prov.Sandbox = e.sb
	return e
}

func (e *env) run(t *testing.T, in mode.Input) (*mode.Result, *eventtest.Recorder, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return e.runCtx(ctx, t, in)
}

// newMode is the mode on the env's model and providers.
func (e *env) newMode(t *testing.T) *Mode {
	t.Helper()
	c, err := llm.New(llm.Config{BaseURL: e.model.URL(), APIKey: "k", Model: "main-model", FastModel: "fast-model",
		MaxRetries: 1, MaxStructuredRetries: 1, BackoffBase: time.Millisecond, BackoffMax: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return New(Config{Providers: e.prov, Results: 4, ReadPages: 2}, c, c.Fast())
}

func (e *env) runCtx(ctx context.Context, t *testing.T, in mode.Input) (*mode.Result, *eventtest.Recorder, error) {
	t.Helper()
	m := e.newMode(t)
	if in.Question == "" {
		in.Question = "Compare GDP growth decade by decade since the 1930s and plot it"
	}
	if in.RunID == "" {
		in.RunID = "run_1"
	}
	in.Now = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	var rec eventtest.Recorder
	res, err := m.Run(ctx, in, &rec)
	return res, &rec, err
}

// partsOf returns the data-extreme_search parts of a kind, in order.
func partsOf(rec *eventtest.Recorder, kind string) []map[string]any {
	var out []map[string]any
	for _, e := range rec.Events() {
		if e.Type != event.TypeData || e.Data.Name != DataName {
			continue
		}
		var v map[string]any
		_ = json.Unmarshal(e.Data.Value, &v)
		if v["kind"] == kind {
			out = append(out, v)
		}
	}
	return out
}

func TestExtremeRun(t *testing.T) {
	e := newEnv(t)
	ws := newMemFiles()
	res, rec, err := e.run(t, mode.Input{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}

	// The plan: its title while it is written, the themes, then done.
	plans := partsOf(rec, KindPlan)
	if len(plans) != 3 || plans[0]["plan"] != nil || len(plans[1]["plan"].([]any)) != 2 ||
		plans[2]["status"].(map[string]any)["title"] != "Research completed" {
		t.Errorf("plan parts: %v", plans)
	}
	// A query from started to completed, with its sources and their text.
	qs := partsOf(rec, KindQuery)
	var statuses []string
	for _, q := range qs {
		statuses = append(statuses, q["status"].(string))
	}
	if strings.Join(statuses, ",") != "started,reading_content,completed" {
		t.Errorf("query statuses %v", statuses)
	}
	if srcs := qs[len(qs)-1]["sources"].([]any); len(srcs) != 4 {
		t.Errorf("completed query lists %d sources, want 4", len(srcs))
	}
	if n := len(partsOf(rec, KindSource)); n != 4 {
		t.Errorf("%d source parts, want 4", n)
	}
	contents := partsOf(rec, KindContent)
	read := 0
	for _, c := range contents {
		if text := c["content"].(map[string]any)["text"].(string); len(text) > 200 {
			read++
		}
	}
	if len(contents) != 4 || read < 2 {
		t.Errorf("%d content parts, %d with a page's text; want 4 and at least 2", len(contents), read)
	}
	// No X search without XAI_API_KEY: withdrawn with a status.
	if len(partsOf(rec, KindX)) != 0 {
		t.Error("x_search parts without an X provider")
	}
	withdrawn := false
	for _, ev := range rec.Events() {
		if ev.Type == event.TypeStatus && strings.Contains(ev.Status.Message, "xSearch is not available") && strings.Contains(ev.Status.Detail, "XAI_API_KEY") {
			withdrawn = true
		}
	}
	if !withdrawn {
		t.Error("no status says xSearch is withdrawn and which setting enables it")
	}

	// The code cell: running, then completed with output and the chart
	// (kept as a run file), never the bytes; the fake chart is not kept.
	codes := partsOf(rec, KindCode)
	if len(codes) != 2 || codes[0]["status"] != CodeRunning || codes[1]["status"] != CodeCompleted {
		t.Fatalf("code parts: %v", codes)
	}
	done := codes[1]
	if r := done["result"].(map[string]any); r["stdout"] != "average growth 3.7\n" || r["exitCode"] != 0.0 {
		t.Errorf("code result %v", r)
	}
	charts := done["charts"].([]any)
	if len(charts) != 2 {
		t.Fatalf("charts %v", charts)
	}
	chart := charts[0].(map[string]any)
	url, _ := chart["url"].(string)
	if !strings.HasPrefix(url, "/api/runs/run_1/files/charts/code_") || !strings.HasSuffix(url, "/chart_1.png") || chart["format"] != "png" {
		t.Errorf("chart %v", chart)
	}
	if fake := charts[1].(map[string]any); fake["url"] != nil {
		t.Errorf("a file that is not a PNG was kept as a chart: %v", fake)
	}
	raw, _ := json.Marshal(codes)
	if bytes.Contains(raw, []byte("base64")) || bytes.Contains(raw, []byte("iVBOR")) {
		t.Error("the stream carries image bytes")
	}
	path := strings.TrimPrefix(url, "/api/runs/run_1/files/")
	if b, ct, err := ws.ReadBytes(context.Background(), path); err != nil || !bytes.Equal(b, testPNG()) || ct != "image/png" {
		t.Errorf("chart run file %s: %d bytes, %q, %v", path, len(b), ct, err)
	}
	if got := e.sb.codes; len(got) != 1 || got[0] != sovatest.ExtremeCode {
		t.Errorf("sandbox ran %q", got)
	}

	// The answer: citations checked (the invented [9] dropped), the chart
	// in place, and the report with it, as Markdown and PDF.
	if !strings.Contains(res.Text, "![GDP growth by decade]("+url+")") || strings.Contains(res.Text, "[9]") || strings.Contains(res.Text, "## Charts") {
		t.Errorf("answer:\n%s", res.Text)
	}
	if len(res.Sources) != 2 || res.Sources[0].Number != 1 {
		t.Errorf("cited sources %+v", res.Sources)
	}
	if !strings.HasPrefix(res.Report, "# Compare GDP growth") || !strings.Contains(res.Report, url) || !strings.Contains(res.Report, "## Sources") {
		t.Errorf("report:\n%s", res.Report)
	}
	if md, err := ws.Read(context.Background(), fileReport); err != nil || md != res.Report {
		t.Errorf("report.md: %v", err)
	}
	pdf, ct, err := ws.ReadBytes(context.Background(), fileReportPDF)
	if err != nil || ct != "application/pdf" || !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		t.Fatalf("report.pdf: %q %v", ct, err)
	}
	if n := pdfImageCount(t, pdf); n != 1 {
		t.Errorf("the report's PDF embeds %d images, want the chart", n)
	}
	// The stored record holds the parts' last states.
	var recd record
	if err := json.Unmarshal(res.Steps, &recd); err != nil || len(recd.Parts) < 4 {
		t.Errorf("record: %v %s", err, res.Steps)
	}
}

// pdfImageCount counts a PDF's images with pdfimages, or its image
// objects where poppler-utils is missing.
func pdfImageCount(t *testing.T, pdf []byte) int {
	t.Helper()
	if _, err := exec.LookPath("pdfimages"); err != nil {
		return bytes.Count(pdf, []byte("/Subtype /Image"))
	}
	p := filepath.Join(t.TempDir(), "r.pdf")
	if err := os.WriteFile(p, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("pdfimages", "-list", p).Output()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[2] == "image" {
			n++
		}
	}
	return n
}

// Without a sandbox, codeRunner is withdrawn with the reason and the
// settings, the model is told, and the run answers from its searches.
func TestExtremeWithoutSandbox(t *testing.T) {
	e := newEnv(t)
	e.prov.Sandbox = nil
	e.prov.SandboxErr = &sandbox.UnavailableError{Reason: "bubblewrap cannot create namespaces here"}
	res, rec, err := e.run(t, mode.Input{Workspace: newMemFiles()})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ev := range rec.Events() {
		if ev.Type == event.TypeStatus && strings.Contains(ev.Status.Message, "codeRunner is not available") &&
			strings.Contains(ev.Status.Message, "bubblewrap cannot create namespaces here") {
			found = true
		}
	}
	if !found {
		t.Error("no status says codeRunner is withdrawn and why")
	}
	if len(partsOf(rec, KindCode)) != 0 || len(e.sb.codes) != 0 {
		t.Error("code ran without a sandbox")
	}
	for _, r := range e.model.Requests() {
		if r.HasTool("codeRunner") {
			t.Error("codeRunner offered without a sandbox")
		}
		if strings.Contains(r.System(), "You are Sova's research agent") && !strings.Contains(r.System(), "codeRunner: the code sandbox cannot run") {
			t.Errorf("the agent is not told codeRunner is withdrawn:\n%s", r.System())
		}
	}
	if strings.Contains(res.Text, "![") {
		t.Errorf("an answer without code has a chart:\n%s", res.Text)
	}
}

// A sandbox that fails shows the cell as an error and the run goes on.
func TestExtremeCodeFails(t *testing.T) {
	e := newEnv(t)
	e.sb.fail = errors.New("the sandbox's launcher did not start")
	res, rec, err := e.run(t, mode.Input{Workspace: newMemFiles()})
	if err != nil {
		t.Fatal(err)
	}
	codes := partsOf(rec, KindCode)
	if len(codes) != 2 || codes[1]["status"] != CodeError || !strings.Contains(codes[1]["error"].(string), "launcher did not start") {
		t.Errorf("code parts %v", codes)
	}
	if res.Text == "" {
		t.Error("no answer")
	}
}

func TestNormalizePlan(t *testing.T) {
	todos := func(n int, p string) []string {
		var out []string
		for i := range n {
			out = append(out, p+string(rune('a'+i)))
		}
		return out
	}
	cases := []struct {
		name   string
		in     []PlanTheme
		max    int
		themes int
		total  int
	}{
		{"seed bounds", []PlanTheme{{"A", todos(7, "a")}, {"B", todos(5, "b")}, {"C", todos(5, "c")}, {"D", todos(5, "d")}}, 15, 3, 15},
		{"six themes", []PlanTheme{{"A", todos(1, "a")}, {"B", todos(1, "b")}, {"C", todos(1, "c")}, {"D", todos(1, "d")}, {"E", todos(1, "e")}, {"F", todos(1, "f")}}, 15, 5, 5},
		{"empty and repeated", []PlanTheme{{"A", []string{" ", "x", "X"}}, {"B", nil}, {"", []string{"y"}}}, 15, 2, 2},
		{"smaller limit", []PlanTheme{{"A", todos(5, "a")}, {"B", todos(5, "b")}}, 7, 2, 7},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := normalizePlan(c.in, c.max)
			total := 0
			for _, th := range got {
				if len(th.Todos) > maxTodosPerItem || th.Title == "" {
					t.Errorf("theme %+v", th)
				}
				total += len(th.Todos)
			}
			if len(got) != c.themes || total != c.total {
				t.Errorf("%d themes, %d todos; want %d, %d: %+v", len(got), total, c.themes, c.total, got)
			}
		})
	}
}
