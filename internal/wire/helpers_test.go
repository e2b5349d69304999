package wire

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
)

// t0 is the start time of the sample runs.
func t0() time.Time { return time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC) }

func intp(n int) *int { return &n }

func at(d time.Duration) time.Time { return t0().Add(d) }

func evStart() event.Event {
	return event.Event{Type: event.TypeStart, Time: t0(), Start: &event.Start{RunID: "run_1", ChatID: "chat_1", MessageID: "msg_1", Mode: "search", Model: "gpt-4o-mini"}}
}

func evStatus(stage, msg, detail string) event.Event {
	return event.Event{Type: event.TypeStatus, Time: t0(), Status: &event.Status{Stage: stage, Message: msg, Detail: detail}}
}

func evQuery(iter, idx, total int, status, q string, results *int, errText string) event.Event {
	return event.Event{Type: event.TypeQuery, Time: t0(), Query: &event.Query{Query: q, Index: idx, Total: total, Status: status,
		ResultsCount: results, Error: errText, Iteration: iter, Provider: "searxng"}}
}

func evSource(n int, url, title string) event.Event {
	return event.Event{Type: event.TypeSource, Time: t0(), Source: &sova.Source{Number: n, URL: url, Title: title, Kind: sova.SourceWeb}}
}

func evPage(url, state string, chars int, errText string) event.Event {
	return event.Event{Type: event.TypePage, Time: t0(), Page: &event.Page{URL: url, State: state, Chars: chars, Error: errText}}
}

func evText(s string) event.Event { return event.Event{Type: event.TypeTextDelta, Time: t0(), Text: s} }

func evUsage(in, out int) event.Event {
	return event.Event{Type: event.TypeUsage, Time: t0(), Usage: &sova.Usage{InputTokens: in, OutputTokens: out, TotalTokens: in + out}}
}

func evError(msg, code string) event.Event {
	return event.Event{Type: event.TypeError, Time: t0(), Error: &event.Error{Message: msg, Code: code}}
}

func evFinish(reason string, u sova.Usage, sources ...sova.Source) event.Event {
	return event.Event{Type: event.TypeFinish, Time: at(4200 * time.Millisecond), Finish: &event.Finish{Reason: reason, Usage: u, Sources: sources, Model: "gpt-4o-mini"}}
}

func srcGo() sova.Source {
	return sova.Source{Number: 1, URL: "https://go.dev/doc/tutorial/generics", Title: "Tutorial: Getting started with generics", Kind: sova.SourceWeb}
}

func srcBlog() sova.Source {
	return sova.Source{Number: 2, URL: "https://go.dev/blog/intro-generics", Title: "An Introduction To Generics", Kind: sova.SourceWeb}
}

// sampleRun is a realistic search run: rewrite, two search iterations with
// a failed provider call, candidate sources, pages read and failed, an
// answer with citation markers, cited sources, usage and finish.
func sampleRun() []event.Event {
	return []event.Event{
		evStart(),
		evStatus("rewrite", "Rewriting the query", ""),
		evStatus("rewrite", "Rewriting the query", "go generics tutorial"),
		evStatus("search", "Searching the web", ""),
		evQuery(1, 0, 2, event.QueryStarted, "go generics tutorial", nil, ""),
		evQuery(1, 1, 2, event.QueryStarted, "golang type parameters", nil, ""),
		evQuery(1, 0, 2, event.QueryCompleted, "go generics tutorial", intp(8), ""),
		evQuery(1, 1, 2, event.QueryError, "golang type parameters", nil, "timeout after 10s"),
		evSource(0, srcGo().URL, srcGo().Title),
		evSource(0, srcBlog().URL, srcBlog().Title),
		evSource(0, "https://example.com/spam", "Spam"),
		evQuery(2, 0, 1, event.QueryStarted, "go generics constraints", nil, ""),
		evQuery(2, 0, 1, event.QueryCompleted, "go generics constraints", intp(1), ""),
		evStatus("read", "Reading pages", ""),
		evPage(srcGo().URL, event.PageReading, 0, ""),
		evPage(srcBlog().URL, event.PageReading, 0, ""),
		evPage("https://example.com/spam", event.PageReading, 0, ""),
		evPage(srcGo().URL, event.PageRead, 12345, ""),
		evPage("https://example.com/spam", event.PageFailed, 0, "403 Forbidden"),
		evPage(srcBlog().URL, event.PageRead, 8000, ""),
		evStatus("synthesize", "Writing the answer", ""),
		evText("Go added generics in 1.18 [1]. "),
		evText("Type parameters <T any> are constrained by interfaces [2]."),
		evText(" Ясно & \"quoted\" [1][2]."),
		evSource(1, srcGo().URL, srcGo().Title),
		evSource(2, srcBlog().URL, srcBlog().Title),
		evUsage(3000, 456),
		evFinish(event.FinishStop, sova.Usage{InputTokens: 3000, OutputTokens: 456, TotalTokens: 3456}, srcGo(), srcBlog()),
	}
}

// errorRun fails after it began to answer.
func errorRun() []event.Event {
	return []event.Event{
		evStart(),
		evStatus("search", "Searching the web", ""),
		evQuery(1, 0, 1, event.QueryStarted, "q", nil, ""),
		evQuery(1, 0, 1, event.QueryError, "q", nil, "connection refused"),
		evText("Partial"),
		evError("model endpoint returned 503", "llm_unavailable"),
		evFinish(event.FinishError, sova.Usage{InputTokens: 10, OutputTokens: 2}),
	}
}

// aisdk returns the directory of the AI SDK validator, or skips the test
// when node or the installed package is missing.
func aisdk(t *testing.T) (node, dir string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; install Node.js and run `npm ci --prefix test/aisdk` to check streams with the real AI SDK")
	}
	dir, err = filepath.Abs(filepath.Join("..", "..", "test", "aisdk"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "ai", "package.json")); err != nil {
		t.Skip("test/aisdk/node_modules is missing; run `npm ci --prefix test/aisdk` to check streams with the real AI SDK")
	}
	return node, dir
}

// validatorSummary is validate.mjs's one-line report.
type validatorSummary struct {
	AI           string          `json:"ai"`
	Chunks       int             `json:"chunks"`
	MessageID    string          `json:"messageId"`
	TextLength   int             `json:"textLength"`
	Text         string          `json:"text"`
	SourceURLs   int             `json:"sourceUrls"`
	DataTypes    []string        `json:"dataTypes"`
	DataParts    int             `json:"dataParts"`
	Tools        []validatorTool `json:"tools"`
	Finish       bool            `json:"finish"`
	FinishReason string          `json:"finishReason"`
	Metadata     json.RawMessage `json:"metadata"`
	Errors       []string        `json:"errors"`
}

// validatorTool is a tool part of the message the validator built.
type validatorTool struct {
	Type       string `json:"type"`
	State      string `json:"state"`
	ToolCallID string `json:"toolCallId"`
}

// runValidator runs validate.mjs with args; it returns the summary on
// success, or the exit error and stderr.
func runValidator(t *testing.T, stdin string, args ...string) (validatorSummary, string, error) {
	t.Helper()
	node, dir := aisdk(t)
	cmd := exec.Command(node, append([]string{filepath.Join(dir, "validate.mjs")}, args...)...)
	cmd.Dir = dir
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("validate.mjs %v did not finish in 60s; stderr: %s", args, stderr.String())
	}
	var sum validatorSummary
	if err == nil {
		if jerr := json.Unmarshal([]byte(stdout.String()), &sum); jerr != nil {
			t.Fatalf("validate.mjs printed %q: %v", stdout.String(), jerr)
		}
	}
	return sum, stderr.String(), err
}
