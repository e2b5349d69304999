package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/app"
	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/sandbox"
	"github.com/sova-ai/sova/internal/server"
	"github.com/sova-ai/sova/internal/sovatest"
)

// The extreme mode end to end: the real server, the scripted model (a
// plan, then webSearch, xSearch and codeRunner, then a cited answer with
// the chart), fake SearXNG, xAI and pages, and the real sandbox drawing
// the chart. These tests need bubblewrap and skip with the reason where
// it cannot run.

// needSandbox skips the test where the code sandbox cannot run.
func needSandbox(t *testing.T) {
	t.Helper()
	cfg, err := config.FromEnv(map[string]string{"SOVA_DATA_DIR": t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.Sandbox(context.Background(), cfg); err != nil {
		if errors.Is(err, sandbox.ErrUnavailable) {
			t.Skipf("the code sandbox cannot run here (%v); the chart end to end needs bubblewrap and python3-matplotlib", err)
		}
		t.Fatal(err)
	}
}

// extremeStream is one parsed answer of the extreme mode.
type extremeStream struct {
	uiStream
	runID string
	parts map[string][]map[string]any // data-extreme_search by kind, in order
}

func parseExtreme(t *testing.T, r io.Reader) extremeStream {
	t.Helper()
	s := extremeStream{uiStream: uiStream{chunks: frames(t, r)}, parts: map[string][]map[string]any{}}
	var text strings.Builder
	for _, c := range s.chunks {
		switch c["type"] {
		case "start":
			if md, ok := c["messageMetadata"].(map[string]any); ok {
				s.runID, _ = md["runId"].(string)
			}
		case "text-delta":
			text.WriteString(c["delta"].(string))
		case "data-extreme_search":
			d := c["data"].(map[string]any)
			s.parts[d["kind"].(string)] = append(s.parts[d["kind"].(string)], d)
		}
	}
	s.text = text.String()
	return s
}

func (e *groupEnv) askExtreme(t *testing.T, chatID, question string) extremeStream {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"id": chatID, "group": "extreme", "messages": []any{map[string]any{
		"id": "u1", "role": "user", "parts": []any{map[string]any{"type": "text", "text": question}}}}})
	resp := e.post(t, "/api/search", string(body))
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST /api/search extreme: %d %s", resp.StatusCode, b)
	}
	s := parseExtreme(t, resp.Body)
	if s.runID == "" {
		s.runID = e.latestRun(t, chatID)
	}
	return s
}

func (e *env) latestRun(t *testing.T, chatID string) string {
	t.Helper()
	r, err := e.app.Store.LatestRun(context.Background(), e.user, chatID)
	if err != nil {
		t.Fatal(err)
	}
	return r.ID
}

const extremeQuestion = "Compare GDP growth decade by decade since the 1930s and plot it"

func TestExtremeEndToEnd(t *testing.T) {
	needSandbox(t)
	e := newGroupEnv(t, map[string]string{"XAI_API_KEY": "xai-test-key"})
	s := e.askExtreme(t, "extreme-1", extremeQuestion)

	for _, kind := range []string{"plan", "query", "source", "content", "code", "x_search"} {
		if len(s.parts[kind]) == 0 {
			t.Errorf("no data-extreme_search part of kind %s; kinds: %v", kind, keysOf(s.parts))
		}
	}
	plan := s.parts["plan"]
	if last := plan[len(plan)-1]; at(last, "status", "title") != "Research completed" || len(last["plan"].([]any)) != 2 {
		t.Errorf("last plan part %v", last)
	}
	if x := s.parts["x_search"]; x[len(x)-1]["status"] != "completed" || len(at(x[len(x)-1], "result", "sources").([]any)) == 0 {
		t.Errorf("x_search parts %v", x)
	}
	codes := s.parts["code"]
	if len(codes) != 2 || codes[0]["status"] != "running" || codes[1]["status"] != "completed" {
		t.Fatalf("code parts %v", codes)
	}
	done := codes[1]
	if out := at(done, "result", "stdout"); out != "average growth 3.7\n" || at(done, "result", "exitCode") != 0.0 {
		t.Errorf("code result %v", done["result"])
	}
	charts, _ := done["charts"].([]any)
	if len(charts) != 1 {
		t.Fatalf("charts %v", done["charts"])
	}
	chartURL, _ := charts[0].(map[string]any)["url"].(string)
	if !strings.HasPrefix(chartURL, "/api/runs/"+s.runID+"/files/charts/") || charts[0].(map[string]any)["format"] != "png" {
		t.Errorf("chart %v (run %s)", charts[0], s.runID)
	}
	raw, _ := json.Marshal(s.chunks)
	if bytes.Contains(raw, []byte("iVBOR")) || bytes.Contains(raw, []byte("base64")) {
		t.Error("the stream carries image bytes")
	}
	if !strings.Contains(s.text, "!["+"GDP growth by decade]("+chartURL+")") || strings.Contains(s.text, "[9]") || !strings.Contains(s.text, "[1]") {
		t.Errorf("answer:\n%s", s.text)
	}
	if n := len(s.of("source-url")); n != 2 {
		t.Errorf("%d source-url parts, want the 2 cited", n)
	}
	if last := s.chunks[len(s.chunks)-1]; last["type"] != "finish" {
		t.Errorf("last chunk %v", last)
	}

	// The chart is a run file served as a PNG, to its user only.
	resp, body := e.as(t, "", "GET", chartURL, "")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" || !strings.HasPrefix(body, "\x89PNG\r\n\x1a\n") ||
		resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("chart: %d %q %d bytes", resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
	}
	if resp, _ := e.as(t, "someone-else", "GET", chartURL, ""); resp.StatusCode != 404 {
		t.Errorf("another user's chart: %d, want 404", resp.StatusCode)
	}
	resp, body = e.as(t, "", "GET", "/api/runs/"+s.runID+"/files", "")
	var list struct {
		Files []struct {
			Path        string `json:"path"`
			ContentType string `json:"contentType"`
		} `json:"files"`
	}
	_ = json.Unmarshal([]byte(body), &list)
	types := map[string]string{}
	for _, f := range list.Files {
		types[f.Path] = f.ContentType
	}
	if resp.StatusCode != 200 || types["report.pdf"] != "application/pdf" || !strings.HasPrefix(types["report.md"], "text/markdown") ||
		types[strings.TrimPrefix(chartURL, "/api/runs/"+s.runID+"/files/")] != "image/png" {
		t.Errorf("run files: %d %v", resp.StatusCode, types)
	}

	// A file of a type not meant for the browser is a download that runs
	// nothing in this origin.
	if err := e.app.Store.PutRunFileBytes(context.Background(), s.runID, "x.html", "text/html", []byte("<script>alert(1)</script>")); err != nil {
		t.Fatal(err)
	}
	resp, _ = e.as(t, "", "GET", "/api/runs/"+s.runID+"/files/x.html", "")
	if h := resp.Header; h.Get("Content-Type") != "application/octet-stream" || h.Get("Content-Disposition") != "attachment" ||
		!strings.Contains(h.Get("Content-Security-Policy"), "sandbox") {
		t.Errorf("an HTML run file is served with %v", h)
	}

	// The report, Markdown and PDF, with the chart embedded; the PDF run
	// file too.
	resp, md := e.as(t, "", "GET", "/api/runs/"+s.runID+"/report.md", "")
	if resp.StatusCode != 200 || !strings.Contains(md, chartURL) {
		t.Errorf("report.md: %d\n%s", resp.StatusCode, md)
	}
	for _, p := range []string{"/report.pdf", "/files/report.pdf"} {
		resp, pdf := e.as(t, "", "GET", "/api/runs/"+s.runID+p, "")
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/pdf" {
			t.Fatalf("%s: %d %s", p, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if n := countPDFImages(t, []byte(pdf)); n != 1 {
			t.Errorf("%s embeds %d images, want the chart", p, n)
		}
	}

	// The stored answer keeps the parts for a reopened chat.
	resp, body = e.as(t, "", "GET", "/api/chats/extreme-1", "")
	if resp.StatusCode != 200 || !strings.Contains(body, `"extreme_search"`) || !strings.Contains(body, `\"kind\":\"code\"`) && !strings.Contains(body, `"kind":"code"`) {
		t.Errorf("stored chat: %d %.400s", resp.StatusCode, body)
	}
}

// countPDFImages counts a PDF's images with pdfimages (poppler-utils), or
// its image objects where that is missing.
func countPDFImages(t *testing.T, pdf []byte) int {
	t.Helper()
	if _, err := exec.LookPath("pdfimages"); err != nil {
		return bytes.Count(pdf, []byte("/Subtype /Image"))
	}
	p := filepath.Join(t.TempDir(), "r.pdf")
	if err := os.WriteFile(p, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("pdfimages", "-list", p).CombinedOutput()
	if err != nil {
		t.Fatalf("pdfimages: %v %s", err, out)
	}
	n := 0
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[2] == "image" {
			n++
		}
	}
	return n
}

func keysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// The real AI SDK client parses an extreme run's stream.
func TestExtremeAISDK(t *testing.T) {
	needSandbox(t)
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "test", "aisdk")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed; the AI SDK check needs Node.js")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "ai")); err != nil {
		t.Skip("AI SDK not installed: run npm ci --prefix test/aisdk")
	}
	e := newGroupEnv(t, map[string]string{"XAI_API_KEY": "xai-test-key"})
	body := `{"id":"sdk-extreme","group":"extreme","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"` + extremeQuestion + `"}]}]}`
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(node, filepath.Join(dir, "validate.mjs"), "--url", e.srv.URL+"/api/search", "--body", body)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("AI SDK rejected the stream: %v\n%s", err, stderr.String())
	}
	var sum struct {
		TextLength int      `json:"textLength"`
		SourceURLs int      `json:"sourceUrls"`
		DataTypes  []string `json:"dataTypes"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &sum); err != nil {
		t.Fatalf("validator output %q: %v", stdout.String(), err)
	}
	if sum.TextLength == 0 || sum.SourceURLs != 2 || !strings.Contains(strings.Join(sum.DataTypes, ","), "data-extreme_search") {
		t.Errorf("AI SDK message: %s", stdout.String())
	}
}

// model "extreme" on the OpenAI-compatible endpoint runs the mode.
func TestExtremeOpenAI(t *testing.T) {
	needSandbox(t)
	e := newGroupEnv(t, nil)
	resp := e.post(t, "/v1/chat/completions", `{"model":"extreme","messages":[{"role":"user","content":"`+extremeQuestion+`"}]}`)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(b, &out) != nil || len(out.Choices) == 0 ||
		!strings.Contains(out.Choices[0].Message.Content, "![GDP growth by decade](/api/runs/") {
		t.Errorf("completion: %d %.600s", resp.StatusCode, b)
	}
}

// An extreme run goes on when its client leaves, can be cancelled (its
// files go) and restarted; when the server stops while it runs, the next
// start continues it from its checkpoint to its answer with its chart,
// and its stream, read from the start, has one start and shows the
// continuation.
func TestExtremeCancelRestart(t *testing.T) {
	needSandbox(t)
	prov := sovatest.NewProviders(t)
	arts := sovatest.DefaultArticles()
	model := sovatest.NewModel(t)
	site := sovatest.NewSite(t, arts)
	sx := sovatest.NewSearXNG(t, site, arts)
	vars := sovatest.Env(model, sx, t.TempDir())
	for k, v := range sovatest.ProviderEnv(prov) {
		vars[k] = v
	}
	start := func() (*app.App, *httptest.Server) {
		cfg, err := config.FromEnv(vars)
		if err != nil {
			t.Fatal(err)
		}
		a, err := app.New(context.Background(), cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		return a, httptest.NewServer(server.New(server.Options{Service: a.Service, Store: a.Store, Auth: testAuth(a), MaxBodyBytes: cfg.MaxRequestBodyBytes, Version: "test"}))
	}
	stop := func(a *app.App, srv *httptest.Server) {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.Close(ctx)
	}
	// Every page waits, so the run is still searching when it is stopped.
	site.SetDelay(2 * time.Second)
	a, srv := start()
	user := userOf(t, a)
	e := &env{model: model, site: site, sx: sx, app: a, srv: srv, user: user}

	begin := func(chatID string) string {
		resp := e.post(t, "/api/search", `{"id":"`+chatID+`","group":"extreme","messages":[{"role":"user","content":"`+extremeQuestion+`"}]}`)
		resp.Body.Close() // the client leaves at once; the run goes on
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if r, err := a.Store.LatestRun(context.Background(), user, chatID); err == nil {
				return r.ID
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatal("no run started")
		return ""
	}
	waitState := func(a *app.App, id string, want string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			if r, err := a.Store.GetRun(context.Background(), user, id); err == nil && r.State == want {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		r, _ := a.Store.GetRun(context.Background(), user, id)
		t.Fatalf("run %s is %+v, want %s", id, r, want)
	}

	// Cancel: the run ends cancelled, its replay ends with the cancelled
	// finish, and the files it wrote are gone.
	id := begin("extreme-cancel")
	if resp, body := e.as(t, "", "POST", "/api/runs/"+id+"/cancel", ""); resp.StatusCode != 202 {
		t.Fatalf("cancel: %d %s", resp.StatusCode, body)
	}
	waitState(a, id, "cancelled")
	resp, err := http.Get(srv.URL + "/api/runs/" + id + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	chunks := frames(t, resp.Body)
	resp.Body.Close()
	if last := chunks[len(chunks)-1]; last["type"] != "finish" || at(last, "messageMetadata", "finishReason") != "cancelled" {
		t.Errorf("cancelled run's last chunk: %v", last)
	}
	if files, _ := a.Store.RunFiles(context.Background(), id); len(files) != 0 {
		t.Errorf("a cancelled run keeps files: %v", files)
	}

	// A stop while the run searches: the next start continues it.
	cancelled := id
	id = begin("extreme-continue")
	time.Sleep(300 * time.Millisecond)
	stop(a, srv)
	site.SetDelay(0)
	a, srv = start()
	defer stop(a, srv)
	e.app, e.srv = a, srv
	waitState(a, id, "completed")
	if r, err := a.Store.GetRun(context.Background(), user, id); err != nil || !strings.Contains(r.Report, "/api/runs/"+id+"/files/charts/") {
		t.Errorf("continued run: %v %+v", err, r)
	}
	resp, err = http.Get(srv.URL + "/api/runs/" + id + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	chunks = frames(t, resp.Body)
	resp.Body.Close()
	starts, continued := 0, false
	for _, c := range chunks {
		starts += map[bool]int{true: 1}[c["type"] == "start"]
		continued = continued || c["type"] == "data-status" && at(c, "data", "stage") == "continue"
	}
	if last := chunks[len(chunks)-1]; starts != 1 || !continued || last["type"] != "finish" || at(last, "messageMetadata", "finishReason") != "stop" {
		t.Errorf("the continued run's stream: %d starts, continue status %v, last %v", starts, continued, last)
	}

	// The cancelled run, restarted, runs again from the start and
	// completes with its chart.
	resp2, body := e.as(t, "", "POST", "/api/runs/"+cancelled+"/restart", "")
	if resp2.StatusCode != 202 {
		t.Fatalf("restart: %d %s", resp2.StatusCode, body)
	}
	var rs struct {
		RunID string `json:"runId"`
	}
	_ = json.Unmarshal([]byte(body), &rs)
	waitState(a, rs.RunID, "completed")
	r, err := a.Store.GetRun(context.Background(), user, rs.RunID)
	if err != nil || !strings.Contains(r.Report, "/api/runs/"+rs.RunID+"/files/charts/") {
		t.Errorf("restarted run: %v %+v", err, r)
	}
	files, _ := a.Store.RunFiles(context.Background(), rs.RunID)
	charts := 0
	for _, f := range files {
		if f.ContentType == "image/png" {
			charts++
		}
	}
	if charts != 1 {
		t.Errorf("restarted run's files: %+v", files)
	}
}
