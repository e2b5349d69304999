package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
)

// writeTree writes files (path → content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func mustRun(t *testing.T, w *world, args ...string) string {
	t.Helper()
	out, errOut, err := w.sova(t, args...)
	if err != nil {
		t.Fatalf("sova %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

func TestSpacesCLI(t *testing.T) {
	w := newWorld(t)
	docs := t.TempDir()
	writeTree(t, docs, map[string]string{
		"vostok.md":          "# Vostok\n\n## Budget\n\nThe Vostok budget is five million roubles.\n",
		"plans/zapad.txt":    "Zapad starts in June and needs twelve engineers.",
		"plans/photo.png":    "\x89PNG\r\n\x1a\n",
		".git/config.md":     "# hidden\n\nnever added",
		"plans/.draft.md":    "# hidden draft\n\nnever added",
		"ru/восток-план.md":  "# План\n\nБюджет проекта «Восток» утверждён в марте.",
		"broken/report.pdf":  "%PDF-1.4 not really",
		"notes/empty.md":     "# Only a title\n",
		"notes/meeting.html": "<html><head><title>Meeting</title></head><body><article><h1>Meeting</h1><p>The team agreed to move the Vostok launch to April because the turbines arrive late, and the budget stays the same.</p><p>Everyone will meet again next Tuesday to review the supplier contract and the new schedule.</p></article></body></html>",
	})

	out := mustRun(t, w, "spaces", "create", "notes", "--description", "project notes")
	if !strings.Contains(out, `created space "notes"`) {
		t.Errorf("create: %s", out)
	}
	if _, errOut, err := w.sova(t, "spaces", "create", "notes"); err == nil || !strings.Contains(errOut, "exists already") {
		t.Errorf("duplicate create: %v %s", err, errOut)
	}

	out, errOut, err := w.sova(t, "spaces", "add", "notes", docs)
	if err != nil {
		t.Fatalf("add: %v\n%s\n%s", err, out, errOut)
	}
	if !strings.Contains(out, "notes: 4 added, 0 replaced, 0 unchanged, 2 failed") || !strings.Contains(out, "1 files of other types were skipped") {
		t.Errorf("add summary: %s", out)
	}
	if !strings.Contains(errOut, "broken/report.pdf") || !strings.Contains(errOut, "notes/empty.md") {
		t.Errorf("failures not reported: %s", errOut)
	}
	if strings.Contains(errOut, "\r") {
		t.Errorf("progress bar drawn on a non-terminal: %q", errOut)
	}
	if out := mustRun(t, w, "spaces", "add", "notes", filepath.Join(docs, "vostok.md")); !strings.Contains(out, "1 unchanged") {
		t.Errorf("re-add: %s", out)
	}

	out = mustRun(t, w, "spaces", "list")
	if !strings.Contains(out, "notes") || !strings.Contains(out, "DOCUMENTS") {
		t.Errorf("list: %s", out)
	}
	out = mustRun(t, w, "spaces", "list", "notes")
	for _, name := range []string{"vostok.md", "plans/zapad.txt", "ru/восток-план.md", "notes/meeting.html"} {
		if !strings.Contains(out, name) {
			t.Errorf("list notes lacks %s:\n%s", name, out)
		}
	}
	if strings.Contains(out, "config.md") || strings.Contains(out, "draft") {
		t.Errorf("hidden files added:\n%s", out)
	}
	var listed struct {
		Documents []struct {
			Name       string
			ChunkCount int `json:"chunkCount"`
		}
	}
	if err := json.Unmarshal([]byte(mustRun(t, w, "spaces", "list", "notes", "--json")), &listed); err != nil || len(listed.Documents) != 4 {
		t.Errorf("list --json: %+v %v", listed, err)
	}

	out = mustRun(t, w, "spaces", "search", "notes", "how many engineers for Zapad")
	if !strings.HasPrefix(out, "1. plans/zapad.txt — chunk 1 of 1") || !strings.Contains(out, "sova://spaces/") {
		t.Errorf("search: %s", out)
	}
	if out := mustRun(t, w, "spaces", "search", "notes", "бюджет Востока"); !strings.Contains(out, "ru/восток-план.md") {
		t.Errorf("Russian search: %s", out)
	}

	mustRun(t, w, "spaces", "rename", "notes", "projects")
	if out := mustRun(t, w, "spaces", "rm", "projects", "plans/zapad.txt"); !strings.Contains(out, "deleted 1 documents") {
		t.Errorf("rm document: %s", out)
	}
	if out := mustRun(t, w, "spaces", "search", "projects", "engineers Zapad"); strings.Contains(out, "zapad.txt") {
		t.Errorf("deleted document found: %s", out)
	}
	if _, errOut, err := w.sova(t, "spaces", "rm", "projects", "missing.md"); err == nil || !strings.Contains(errOut, "no document") {
		t.Errorf("rm missing document: %v %s", err, errOut)
	}
	if out := mustRun(t, w, "spaces", "rm", "projects"); !strings.Contains(out, `deleted space "projects"`) {
		t.Errorf("rm space: %s", out)
	}
	if _, errOut, err := w.sova(t, "spaces", "list", "projects"); err == nil || !strings.Contains(errOut, "no space") {
		t.Errorf("deleted space listed: %v %s", err, errOut)
	}
}

func TestAskWithSpaces(t *testing.T) {
	w := newWorld(t)
	docs := t.TempDir()
	writeTree(t, docs, map[string]string{"vostok.md": "# Vostok\n\n## Budget\n\nThe Vostok budget is five million roubles.\n"})
	mustRun(t, w, "spaces", "add", "--create", "notes", docs)

	if _, errOut, err := w.sova(t, "ask", "--mode", "chat", "--space", "notes", "hi"); err == nil || !strings.Contains(errOut, "does not search document spaces") {
		t.Errorf("chat with --space: %v %s", err, errOut)
	}

	// search: four pages are read, so the passage is [5]. The answer is
	// set through Handle, which the server reads under its lock.
	w.model.Handle(func(r *llmtest.Request) llmtest.Reply {
		reply := w.model.Respond(r)
		if strings.Contains(r.System(), "answers from web sources") {
			reply.Content = "Pages say one thing [1]; the plan says five million roubles [5]."
		}
		return reply
	})
	out := mustRun(t, w, "ask", "--no-save", "--space", "notes", "What is the Vostok budget?")
	if !strings.Contains(out, "[2] Vostok (vostok.md) — Vostok > Budget — sova://spaces/") {
		t.Errorf("answer with a document source:\n%s", out)
	}

	// docs: the agent searches the documents and cites the passage.
	w.model.Handle(func(r *llmtest.Request) llmtest.Reply {
		if !r.HasTool("search_documents") {
			return w.model.Respond(r)
		}
		for _, m := range r.Messages {
			if m.Role == llm.RoleTool {
				return llmtest.Text("Five million roubles [1].")
			}
		}
		return llmtest.Calls(llm.ToolCall{ID: "c1", Name: "search_documents", Arguments: `{"query":"Vostok budget"}`})
	})
	out, errOut, err := w.sova(t, "ask", "--mode", "docs", "--no-save", "What is the Vostok budget?")
	if err != nil || !strings.Contains(out, "Five million roubles [1].") || !strings.Contains(out, "sova://spaces/") {
		t.Errorf("docs mode: %v\n%s\n%s", err, out, errOut)
	}
}
