package server_test

import (
	"archive/zip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/sova-ai/sova"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/sova-ai/sova/internal/report"
)

// storeRun keeps a run of user with its workspace files, as a finished run
// leaves them.
func storeRun(t *testing.T, e *env, r *sova.Run, files map[string]string) *sova.Run {
	t.Helper()
	ctx := context.Background()
	if err := e.app.Store.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	for p, content := range files {
		if err := e.app.Store.PutRunFile(ctx, r.ID, p, content); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

const (
	researchQuestion = "How did presidents describe the economy?"
	researchReport   = "# Presidents and the economy\n\nHoover spoke of prosperity [1]; Roosevelt, by radio, of the banks [2].\n\n" +
		"## Экономика\n\nРузвельт объяснял банковский кризис по радио [2].\n\n## Sources\n\n1. https://example.com/hoover\n2. https://example.com/fdr\n"
)

// The workspace and report routes of a run: each one's answer, and its
// errors: another user's run is a 404 like an unknown one, a file that is
// not there a 404, a report that is not ready a 409, one too large for a
// PDF a 422.
func TestRunFilesAndReports(t *testing.T) {
	e := newEnv(t, nil)
	files := map[string]string{
		"main.md":           "# Plan\n\n- [x] search\n",
		"agents/agent_1.md": "## Agent 1\n\nRead two pages — «две страницы».\n",
		"report.md":         researchReport,
	}
	done := storeRun(t, e, &sova.Run{UserID: e.user, Mode: "deep_research", State: sova.RunCompleted,
		Question: researchQuestion, Report: researchReport, HasReport: true}, files)
	running := storeRun(t, e, &sova.Run{UserID: e.user, Mode: "deep_research", State: sova.RunRunning, Question: "q", Report: "# Half a report\n"}, nil)
	noReport := storeRun(t, e, &sova.Run{UserID: e.user, Mode: "search", State: sova.RunCompleted, Question: "q"}, nil)
	huge := storeRun(t, e, &sova.Run{UserID: e.user, Mode: "deep_research", State: sova.RunCompleted, Question: "Big",
		Report: "# Big\n\n" + strings.Repeat("A paragraph of the report.\n\n", report.MaxInput/25)}, nil)
	bobs := storeRun(t, e, &sova.Run{UserID: "bob", Mode: "deep_research", State: sova.RunCompleted,
		Question: "Bob's question", Report: "# Bob's report\n"}, map[string]string{"main.md": "bob's plan"})

	get := func(user, path string) (*http.Response, string) {
		t.Helper()
		return e.as(t, user, "GET", path, "")
	}
	wantError := func(user, path string, status int, code string) {
		t.Helper()
		resp, body := get(user, path)
		if resp.StatusCode != status || errorCode(body) != code || strings.Contains(body, "Hoover") || strings.Contains(body, "Plan") {
			t.Errorf("GET %s as %q: %d %s; want %d %s", path, user, resp.StatusCode, body, status, code)
		}
	}
	base := "/api/runs/" + done.ID

	// GET /files lists the workspace by path.
	resp, body := get("", base+"/files")
	var list struct{ Files []sova.RunFile }
	if err := json.Unmarshal([]byte(body), &list); err != nil || resp.StatusCode != 200 {
		t.Fatalf("files: %d %s", resp.StatusCode, body)
	}
	var paths []string
	for _, f := range list.Files {
		paths = append(paths, f.Path)
		if f.Size != len(files[f.Path]) || f.UpdatedAt.IsZero() {
			t.Errorf("file %+v: size want %d", f, len(files[f.Path]))
		}
	}
	if !slices.Equal(paths, []string{"agents/agent_1.md", "main.md", "report.md"}) {
		t.Errorf("files listed: %v", paths)
	}
	if resp, body := get("", "/api/runs/"+noReport.ID+"/files"); resp.StatusCode != 200 || strings.TrimSpace(body) != `{"files":[]}` {
		t.Errorf("files of a run without a workspace: %d %s", resp.StatusCode, body)
	}

	// GET /files/{path...} answers one file as it is, nested paths included.
	for p, content := range files {
		resp, body := get("", base+"/files/"+p)
		if resp.StatusCode != 200 || body != content || resp.Header.Get("Content-Type") != "text/markdown; charset=utf-8" ||
			resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("file %s: %d %s %q", p, resp.StatusCode, resp.Header, body)
		}
	}
	wantError("", base+"/files/missing.md", 404, "run_not_found")
	wantError("", base+"/files/agents", 404, "run_not_found")

	// GET /files.zip: the workspace as a zip archive, one folder per run.
	resp, body = get("", base+"/files.zip")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/zip" ||
		resp.Header.Get("Content-Disposition") != `attachment; filename="run-`+done.ID+`.zip"` {
		t.Fatalf("zip: %d %s", resp.StatusCode, resp.Header)
	}
	zr, err := zip.NewReader(strings.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		if want := files[strings.TrimPrefix(f.Name, "run-"+done.ID+"/")]; string(b) != want {
			t.Errorf("%s in the zip: %q, want %q", f.Name, b, want)
		}
	}
	prefix := "run-" + done.ID + "/"
	if !slices.Equal(names, []string{prefix + "agents/agent_1.md", prefix + "main.md", prefix + "report.md"}) {
		t.Errorf("zip entries: %v", names)
	}
	if resp, body := get("", "/api/runs/"+noReport.ID+"/files.zip"); resp.StatusCode != 200 {
		t.Errorf("zip of an empty workspace: %d", resp.StatusCode)
	} else if zr, err := zip.NewReader(strings.NewReader(body), int64(len(body))); err != nil || len(zr.File) != 0 {
		t.Errorf("zip of an empty workspace: %v, %d entries", err, len(zr.File))
	}

	// GET /report.md: the report as it was written, to download.
	resp, body = get("", base+"/report.md")
	if resp.StatusCode != 200 || body != researchReport || resp.Header.Get("Content-Type") != "text/markdown; charset=utf-8" ||
		resp.Header.Get("Content-Disposition") != `attachment; filename="sova-report-How-did-presidents-describe-the-economy.md"` {
		t.Errorf("report.md: %d %s %q", resp.StatusCode, resp.Header, body)
	}
	// GET /report.pdf: the same report as a PDF.
	resp, body = get("", base+"/report.pdf")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/pdf" || !strings.HasPrefix(body, "%PDF-") ||
		!strings.HasSuffix(strings.TrimSpace(body), "%%EOF") ||
		resp.Header.Get("Content-Disposition") != `attachment; filename="sova-report-How-did-presidents-describe-the-economy.pdf"` {
		t.Errorf("report.pdf: %d %s, %d bytes starting %q", resp.StatusCode, resp.Header, len(body), body[:min(len(body), 16)])
	}
	// Its text is the report's (pdftotext reads it back where installed);
	// the PDF renderer's own tests check the rest.
	if pdftotext, err := exec.LookPath("pdftotext"); err == nil {
		cmd := exec.Command(pdftotext, "-", "-")
		cmd.Stdin = strings.NewReader(body)
		text, err := cmd.Output()
		if err != nil || !strings.Contains(string(text), "Presidents and the economy") || !strings.Contains(string(text), "Рузвельт объяснял банковский кризис") {
			t.Errorf("report.pdf text (%v):\n%s", err, text)
		}
	}
	// Reports only of completed runs that wrote one; a PDF has a size limit.
	for _, suffix := range []string{"/report.md", "/report.pdf"} {
		wantError("", "/api/runs/"+running.ID+suffix, 409, "report_not_ready")
		wantError("", "/api/runs/"+noReport.ID+suffix, 409, "report_not_ready")
	}
	wantError("", "/api/runs/"+huge.ID+"/report.pdf", 422, "report_too_large")
	if resp, body := get("", "/api/runs/"+huge.ID+"/report.md"); resp.StatusCode != 200 || !strings.HasPrefix(body, "# Big") {
		t.Errorf("report.md of a report too large for a PDF: %d", resp.StatusCode)
	}

	// Unknown runs, and another user's, are not found; the other user
	// reads their own.
	routes := []string{"/files", "/files/main.md", "/files.zip", "/report.md", "/report.pdf"}
	for _, r := range routes {
		wantError("", "/api/runs/nope"+r, 404, "run_not_found")
		wantError("bob", base+r, 404, "run_not_found")
		wantError("", "/api/runs/"+bobs.ID+r, 404, "run_not_found")
		if resp, body := get("bob", "/api/runs/"+bobs.ID+r); resp.StatusCode != 200 {
			t.Errorf("bob's own %s: %d %s", r, resp.StatusCode, body)
		}
	}
	if _, body := get("bob", "/api/runs/"+bobs.ID+"/files/main.md"); body != "bob's plan" {
		t.Errorf("bob's file: %q", body)
	}
}

// Cancelling an agent's run while it waits for the person's answer: the
// run ends cancelled, and the agent, its chat and the OpenAI-compatible
// endpoint agree that it no longer waits. Only the run's user may cancel
// it, and the person's next message starts afresh.
func TestCancelWaitingAgent(t *testing.T) {
	e := newEnv(t, nil)
	script := scriptAgent(e.model)
	scriptResearch(script, e.site.URL)
	resp := e.post(t, "/api/search", `{"id":"ask","group":"sgr_agent","messages":[{"role":"user","content":"`+agentTask+`"}]}`)
	runID := resp.Header.Get("X-Run-ID")
	frames(t, resp.Body)
	resp.Body.Close()
	runState := func() sova.Run {
		t.Helper()
		var v struct{ Run sova.Run }
		if code := getJSON(t, e.srv.URL+"/api/runs/"+runID, &v); code != 200 {
			t.Fatalf("GET run: %d", code)
		}
		return v.Run
	}
	if r := runState(); r.State != sova.RunWaiting || len(r.Pause) == 0 {
		t.Fatalf("before the cancel: %+v", r)
	}

	// Someone else cannot cancel it.
	if resp, body := e.as(t, "bob", "POST", "/api/runs/"+runID+"/cancel", ""); resp.StatusCode != 404 || errorCode(body) != "run_not_found" {
		t.Errorf("bob's cancel: %d %s", resp.StatusCode, body)
	}
	if r := runState(); r.State != sova.RunWaiting {
		t.Fatalf("after bob's cancel: %s", r.State)
	}

	resp, body := e.as(t, "", "POST", "/api/runs/"+runID+"/cancel", "")
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("cancel: %d %s", resp.StatusCode, body)
	}
	if r := runState(); r.State != sova.RunCancelled || len(r.Pause) != 0 {
		t.Errorf("after the cancel: state %s, pause %s", r.State, r.Pause)
	}
	if resp, body := e.as(t, "", "POST", "/api/runs/"+runID+"/cancel", ""); resp.StatusCode != http.StatusConflict || errorCode(body) != "run_state" {
		t.Errorf("second cancel: %d %s", resp.StatusCode, body)
	}

	// The agent no longer waits, and says why.
	var st struct{ State, Error string }
	if code := getJSON(t, e.srv.URL+"/agents/"+runID+"/state", &st); code != 200 || st.State != sova.AgentFailed || !strings.Contains(st.Error, "cancelled") {
		t.Errorf("agent after the cancel: %d %+v", code, st)
	}
	var list struct{ Agents []struct{ ID, State string } }
	getJSON(t, e.srv.URL+"/agents", &list)
	if len(list.Agents) != 1 || list.Agents[0].State != sova.AgentFailed {
		t.Errorf("agents listed: %+v", list.Agents)
	}
	// Its answer through the OpenAI-compatible endpoint is refused, saying so.
	client := openai.NewClient(option.WithBaseURL(e.srv.URL+"/v1"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
	_, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model: runID, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("The US, 1930 to 1936.")},
	})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusConflict || apiErr.Code != "agent_not_waiting" || !strings.Contains(apiErr.Message, "is failed") {
		t.Errorf("answering the cancelled agent: %v", err)
	}

	// The chat still replays what was said, and the stream ends.
	resp, body = e.as(t, "", "GET", "/api/chats/ask/stream", "")
	if resp.StatusCode != 200 || !strings.Contains(body, `"type":"finish"`) || !strings.HasSuffix(strings.TrimSpace(body), "data: [DONE]") {
		t.Errorf("chat stream after the cancel: %d %s", resp.StatusCode, body)
	}
	// The next message in the chat starts a new run; the cancelled agent
	// is not continued.
	resp = e.post(t, "/api/search", `{"id":"ask","group":"sgr_agent","messages":[{"role":"user","content":"The US, 1930 to 1936."}]}`)
	next := resp.Header.Get("X-Run-ID")
	frames(t, resp.Body)
	resp.Body.Close()
	if next == "" || next == runID {
		t.Errorf("the next message continued run %q (cancelled: %s)", next, runID)
	}
	if slices.Contains(script.steps(agentTask), 2) {
		t.Errorf("the cancelled agent went on: steps %v", script.steps(agentTask))
	}
	if r := runState(); r.State != sova.RunCancelled {
		t.Errorf("the cancelled run became %s", r.State)
	}
	if code := getJSON(t, e.srv.URL+"/agents/"+runID+"/state", &st); code != 200 || st.State != sova.AgentFailed {
		t.Errorf("the cancelled agent became %+v", st)
	}
}
