package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/isolate"
	"github.com/sova-ai/sova/internal/sovatest"
)

// These tests build the real binary and run it as a person would, against
// local fakes of the model, SearXNG and the web.

var binPath string

func TestMain(m *testing.M) {
	isolate.Main() // tests that parse in this process start workers from it
	dir, err := os.MkdirTemp("", "sova-bin")
	if err != nil {
		panic(err)
	}
	binPath = filepath.Join(dir, "sova")
	build := exec.Command("go", "build", "-o", binPath, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building sova:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type world struct {
	model   *sovatest.Model
	site    *sovatest.Site
	sx      *sovatest.SearXNG
	dataDir string
	// extra settings over sovatest.Env (the group providers' fakes).
	extra map[string]string
}

func newWorld(t testing.TB) *world {
	arts := sovatest.DefaultArticles()
	w := &world{model: sovatest.NewModel(t), site: sovatest.NewSite(t, arts), dataDir: t.TempDir()}
	w.sx = sovatest.NewSearXNG(t, w.site, arts)
	return w
}

func (w *world) env() []string {
	out := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + w.dataDir, "SOVA_DISABLE_TITLES=false"}
	vars := sovatest.Env(w.model, w.sx, w.dataDir)
	for k, v := range w.extra {
		vars[k] = v
	}
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	return out
}

func (w *world) sova(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Env = w.env()
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

func TestAskSearch(t *testing.T) {
	w := newWorld(t)
	out, errOut, err := w.sova(t, "ask", "--mode", "search", "How did presidents describe the economy in the 1930s?")
	if err != nil {
		t.Fatalf("ask: %v\nstderr:\n%s", err, errOut)
	}
	// Progress on stderr: rewritten query, each query with its count, pages.
	for _, want := range []string{"(rewritten)", "6 results", "economy 1930s presidents", "Reading", "read"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	// Answer and numbered sources on stdout, nothing of the progress.
	if !strings.Contains(out, "passing storm [1]") || strings.Contains(out, "[9]") {
		t.Errorf("answer:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^\*\*Sources\*\*\n\[1\] .+ — http://127\.0\.0\.1:\d+/a/\S+\n\[2\] .+\n\[3\] .+$`).MatchString(out) {
		t.Errorf("source list missing or malformed:\n%s", out)
	}
	if strings.Contains(out, "6 results") {
		t.Errorf("progress leaked to stdout:\n%s", out)
	}

	// The exchange was kept as a chat.
	list, _, err := w.sova(t, "chats", "list", "--json")
	if err != nil {
		t.Fatal(err)
	}
	// The shape of GET /api/chats: {"chats": [...]}, nothing else.
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(list), &top); err != nil || len(top) != 1 || top["chats"] == nil {
		t.Fatalf("chats list --json is not {\"chats\": [...]}: %s (%v)", list, err)
	}
	var chats []struct {
		ID           string `json:"id"`
		MessageCount int    `json:"messageCount"`
	}
	if err := json.Unmarshal(top["chats"], &chats); err != nil || len(chats) != 1 || chats[0].MessageCount != 2 {
		t.Fatalf("chats list = %s (%v)", list, err)
	}
	show, _, err := w.sova(t, "chats", "show", chats[0].ID)
	if err != nil || !strings.Contains(show, "## assistant") || !strings.Contains(show, "[3] ") {
		t.Errorf("chats show: %v\n%s", err, show)
	}
	if _, _, err := w.sova(t, "chats", "delete", chats[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, errOut, err := w.sova(t, "chats", "show", chats[0].ID); err == nil || !strings.Contains(errOut, "not found") {
		t.Errorf("deleted chat still shown: %v %s", err, errOut)
	}
}

func TestAskJSON(t *testing.T) {
	w := newWorld(t)
	out, errOut, err := w.sova(t, "ask", "--json", "--no-save", "-m", "search", "economy in the 1930s")
	if err != nil {
		t.Fatalf("ask --json: %v\n%s", err, errOut)
	}
	types := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev struct{ Type string }
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line is not JSON: %q", line)
		}
		types[ev.Type]++
	}
	if types["start"] != 1 || types["finish"] != 1 || types["query"] == 0 || types["text-delta"] == 0 || types["page"] == 0 {
		t.Errorf("event types = %v", types)
	}
	list, _, _ := w.sova(t, "chats", "list", "--json")
	if strings.TrimSpace(list) != `{"chats":[]}` {
		t.Errorf("--no-save stored a chat: %s", list)
	}
}

func TestAskChatRussian(t *testing.T) {
	w := newWorld(t)
	out, errOut, err := w.sova(t, "ask", "--mode", "chat", "Какая столица у Австралии?")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	if !strings.Contains(out, "Canberra") {
		t.Errorf("answer: %s", out)
	}
	if !strings.Contains(w.model.Last().System(), "Russian") {
		t.Errorf("chat prompt does not ask for Russian: %s", w.model.Last().System())
	}
}

func TestAskErrors(t *testing.T) {
	w := newWorld(t)
	_, errOut, err := w.sova(t, "ask", "--mode", "nope", "hi")
	if err == nil || !strings.Contains(errOut, "valid modes: chat, search, deep_search") {
		t.Errorf("unknown mode: %v %s", err, errOut)
	}
	w.sx.Fail.Store(http.StatusForbidden)
	_, errOut, err = w.sova(t, "ask", "--mode", "search", "economy")
	if err == nil || !strings.Contains(errOut, "json") {
		t.Errorf("SearXNG 403 should explain enabling JSON: %v %s", err, errOut)
	}
}

func TestHelpAndVersion(t *testing.T) {
	w := newWorld(t)
	out, _, err := w.sova(t, "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"serve", "ask", "chats", "version"} {
		if !strings.Contains(out, c) {
			t.Errorf("help lacks %s", c)
		}
	}
	out, _, err = w.sova(t, "version")
	if err != nil || !strings.HasPrefix(out, "sova ") {
		t.Errorf("version: %v %q", err, out)
	}
}

// serveProc is a running `sova serve`.
type serveProc struct {
	cmd  *exec.Cmd
	url  string
	logs *syncBuffer
}

// syncBuffer is a log buffer written by one goroutine and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) WriteString(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b.WriteString(s)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func (w *world) serve(t *testing.T) *serveProc {
	t.Helper()
	cmd := exec.Command(binPath, "serve", "--addr", "127.0.0.1:0")
	cmd.Env = w.env()
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &serveProc{cmd: cmd, logs: &syncBuffer{}}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		re := regexp.MustCompile(`addr=(http://127\.0\.0\.1:\d+)`)
		for sc.Scan() {
			s.logs.WriteString(sc.Text() + "\n")
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		pw.Close()
	})
	select {
	case s.url = <-found:
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not start:\n%s", s.logs)
	}
	return s
}

func (s *serveProc) stop(t *testing.T, sig syscall.Signal) {
	t.Helper()
	_ = s.cmd.Process.Signal(sig)
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
}

func TestServeKeepsChatsAcrossRestart(t *testing.T) {
	w := newWorld(t)
	s := w.serve(t)
	if !strings.Contains(s.logs.String(), "this machine only") {
		t.Errorf("serve should say it listens locally:\n%s", s.logs)
	}
	// The real AI SDK client consumes the stream of the running binary.
	if node, err := exec.LookPath("node"); err == nil {
		if _, err := os.Stat("../../test/aisdk/node_modules/ai"); err == nil {
			cmd := exec.Command(node, "../../test/aisdk/validate.mjs", "--url", s.url+"/api/search",
				"--body", `{"id":"sdk-live","group":"search","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"How did presidents describe the economy in the 1930s?"}]}]}`)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("AI SDK rejected the stream of sova serve: %v\n%s", err, out)
			}
		} else {
			t.Log("AI SDK not installed (npm ci --prefix test/aisdk): live stream check skipped")
		}
	}
	resp, err := http.Post(s.url+"/api/search", "application/json",
		strings.NewReader(`{"id":"persist","group":"search","messages":[{"role":"user","content":"How did presidents describe the economy in the 1930s?"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"type":"finish"`) {
		t.Fatalf("stream: %s", body)
	}
	// Give the background title a moment, then kill hard: nothing that was
	// answered may be lost.
	time.Sleep(300 * time.Millisecond)
	s.stop(t, syscall.SIGKILL)

	s2 := w.serve(t)
	r, err := http.Get(s2.url + "/api/chats/persist")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Chat     struct{ Title string }
		Messages []struct {
			Role, Content string
			Sources       []struct{ URL string }
		}
	}
	_ = json.NewDecoder(r.Body).Decode(&got)
	r.Body.Close()
	if len(got.Messages) != 2 || len(got.Messages[1].Sources) != 3 || got.Messages[1].Content == "" {
		t.Fatalf("after restart: %+v", got)
	}
	if got.Chat.Title == "" {
		t.Errorf("title lost")
	}
	s2.stop(t, syscall.SIGTERM)
	if !strings.Contains(s2.logs.String(), "shutting down") {
		t.Errorf("no graceful shutdown:\n%s", s2.logs)
	}
}

// Kill the server in the middle of a deep research run: at the next start
// the one node continues the run, which finishes the research with a
// report.
func TestDeepResearchSurvivesAKill(t *testing.T) {
	w := newWorld(t)
	w.site.SetDelay(2 * time.Second) // pages read slowly: the kill lands mid-run
	s := w.serve(t)
	resp, err := http.Post(s.url+"/api/search", "application/json",
		strings.NewReader(`{"id":"dr","group":"deep_research","messages":[{"role":"user","content":"How did presidents describe the economy in the 1930s?"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	runID := resp.Header.Get("X-Run-ID")
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"state":"reading"`) {
			break
		}
	}
	s.stop(t, syscall.SIGKILL)
	resp.Body.Close()

	w.site.SetDelay(0)
	s2 := w.serve(t)
	var view struct {
		Run struct{ State, Error string }
	}
	// The restarted node continues the run (deep_research is durable):
	// the run's stream goes on after the events stored before the kill,
	// with one start, and ends with the report.
	r, err := http.Get(s2.url + "/api/runs/" + runID + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if !strings.Contains(string(body), `"finishReason":"stop"`) || strings.Count(string(body), `"type":"start"`) != 1 {
		t.Fatalf("continued run did not finish once: %.2000s", body)
	}
	getJSON(t, s2.url+"/api/runs/"+runID, &view)
	if view.Run.State != "completed" {
		t.Fatalf("after the kill and a restart: %+v", view.Run)
	}
	restarted := struct{ RunID string }{runID}
	r, err = http.Get(s2.url + "/api/runs/" + restarted.RunID + "/report.md")
	if err != nil {
		t.Fatal(err)
	}
	report, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != http.StatusOK || len(report) < 1500 {
		t.Fatalf("report: %d, %d bytes", r.StatusCode, len(report))
	}
	r, err = http.Get(s2.url + "/api/runs/" + restarted.RunID + "/report.pdf")
	if err != nil {
		t.Fatal(err)
	}
	pdf, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != http.StatusOK || !bytes.HasPrefix(pdf, []byte("%PDF-")) || r.Header.Get("Content-Type") != "application/pdf" {
		t.Fatalf("report.pdf: %d %s, %d bytes", r.StatusCode, r.Header.Get("Content-Type"), len(pdf))
	}
	files := struct{ Files []struct{ Path string } }{}
	getJSON(t, s2.url+"/api/runs/"+restarted.RunID+"/files", &files)
	var paths []string
	for _, f := range files.Files {
		paths = append(paths, f.Path)
	}
	joined := strings.Join(paths, " ")
	for _, want := range []string{"main.md", "draft_report.md", "supervisor.md", "agents/agent_1.md", "items/item_1.md"} {
		if !strings.Contains(joined, want) {
			t.Errorf("workspace lacks %s: %v", want, paths)
		}
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	r, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	if r.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, r.Status)
	}
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// sova ask --mode deep_research --pdf writes the report as a PDF whose
// text (read back with pdftotext) carries the Cyrillic title intact.
func TestAskDeepResearchPDF(t *testing.T) {
	pdftotext, err := exec.LookPath("pdftotext")
	if err != nil {
		t.Skip("pdftotext not installed (Debian package poppler-utils)")
	}
	w := newWorld(t)
	out := filepath.Join(t.TempDir(), "report.pdf")
	stdout, stderr, err := w.sova(t, "ask", "--mode", "deep_research", "--pdf", out, "Как президенты США описывали экономику в 1930-х годах?")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "PDF written to") || len(stdout) < 1500 {
		t.Errorf("stdout %d bytes; stderr:\n%s", len(stdout), stderr)
	}
	text, err := exec.Command(pdftotext, out, "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	title := strings.SplitN(strings.TrimSpace(stdout), "\n", 2)[0]
	title = strings.TrimSpace(strings.TrimLeft(title, "# "))
	if title == "" || !strings.Contains(string(text), title) {
		t.Errorf("PDF text lacks the report title %q:\n%.500s", title, text)
	}
	if !regexp.MustCompile(`[А-Яа-я]{4,}`).Match(text) {
		t.Errorf("no Cyrillic in the PDF text:\n%.500s", text)
	}
}

// A research run's report can be read again later from the CLI, as
// Markdown or PDF, and its workspace exported as a folder.
func TestRunsReportAndFiles(t *testing.T) {
	w := newWorld(t)
	out, stderr, err := w.sova(t, "ask", "--json", "--mode", "deep_research", "How did presidents describe the economy in the 1930s?")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var start struct {
		Start struct{ RunID string }
	}
	_ = json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &start)
	id := start.Start.RunID
	if id == "" {
		t.Fatalf("no run id in the first event: %.200s", out)
	}
	md, _, err := w.sova(t, "runs", "report", id)
	if err != nil || len(md) < 1500 || !strings.HasPrefix(md, "# ") {
		t.Fatalf("runs report: %v, %d bytes", err, len(md))
	}
	pdf := filepath.Join(t.TempDir(), "r.pdf")
	if _, stderr, err := w.sova(t, "runs", "report", id, "--pdf", pdf); err != nil || !strings.Contains(stderr, "PDF written") {
		t.Fatalf("runs report --pdf: %v %s", err, stderr)
	}
	if b, err := os.ReadFile(pdf); err != nil || !bytes.HasPrefix(b, []byte("%PDF-")) {
		t.Errorf("PDF file: %v", err)
	}
	dir := t.TempDir()
	if _, stderr, err := w.sova(t, "runs", "files", id, "--export", dir); err != nil {
		t.Fatalf("runs files --export: %v %s", err, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "run-"+id, "agents", "agent_1.md")); err != nil {
		t.Errorf("exported workspace: %v", err)
	}
	// An unknown run is named as such.
	_, errOut, err := w.sova(t, "runs", "report", "no-such-run")
	if err == nil || !strings.Contains(errOut, "not found") {
		t.Errorf("unknown run: %v %s", err, errOut)
	}
}
