package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sova-ai/sova/internal/sovatest"
)

func runRead(t *testing.T, env []string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(binPath, append([]string{"read"}, args...)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	return o.String(), e.String(), err
}

func TestReadURL(t *testing.T) {
	art := sovatest.DefaultArticles()[0]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(sovatest.Page(art)))
	}))
	defer srv.Close()

	// Loopback is refused by the guard unless allowed.
	if _, errOut, err := runRead(t, nil, srv.URL+"/a"); err == nil || !strings.Contains(errOut, "blocked") && !strings.Contains(errOut, "not allowed") && !strings.Contains(errOut, "refused") {
		t.Errorf("a loopback URL was read without SOVA_FETCH_ALLOW_HOSTS: err %v, stderr %s", err, errOut)
	}

	allow := []string{"SOVA_FETCH_ALLOW_HOSTS=127.0.0.1"}
	out, errOut, err := runRead(t, allow, srv.URL+"/a")
	if err != nil {
		t.Fatalf("read: %v\n%s", err, errOut)
	}
	if !strings.HasPrefix(out, "# "+art.Title+"\n") || !strings.Contains(out, "Franklin D. Roosevelt explained the banking crisis") {
		t.Errorf("output:\n%s", out)
	}
	if strings.Contains(out, "Accept all cookies") || strings.Contains(out, "Celebrity gossip") {
		t.Errorf("boilerplate printed:\n%s", out)
	}

	out, errOut, err = runRead(t, allow, "--json", srv.URL+"/a")
	if err != nil {
		t.Fatalf("read --json: %v\n%s", err, errOut)
	}
	var doc struct {
		URL, Title, Language, Text string
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if doc.URL != srv.URL+"/a" || doc.Title != art.Title || doc.Language != "en" || !strings.Contains(doc.Text, "bank holiday") {
		t.Errorf("json: %+v", doc)
	}
}

func TestReadFiles(t *testing.T) {
	dir := t.TempDir()
	art := sovatest.DefaultArticles()[1]
	htmlFile := filepath.Join(dir, "page.html")
	mdFile := filepath.Join(dir, "notes.md")
	docxFile := filepath.Join(dir, "minutes.docx")
	if err := os.WriteFile(htmlFile, []byte(sovatest.Page(art)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mdFile, []byte("# Notes\n\nSome **notes** with a [link](https://example.com/x).\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("word/document.xml")
	_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` +
		`<w:p><w:r><w:t>The committee met on Tuesday and approved the budget.</w:t></w:r></w:p></w:body></w:document>`))
	_ = zw.Close()
	if err := os.WriteFile(docxFile, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	out, errOut, err := runRead(t, nil, "--format", "text", htmlFile, mdFile, docxFile)
	if err != nil {
		t.Fatalf("read: %v\n%s", err, errOut)
	}
	for _, want := range []string{
		art.Title + "\n", "Source: " + htmlFile, "prosperity was just around the corner",
		"Some notes with a link.", "The committee met on Tuesday",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "**") || strings.Contains(out, "https://example.com/x") || strings.Contains(out, "Accept all cookies") {
		t.Errorf("--format text printed Markdown or boilerplate:\n%s", out)
	}

	// A missing file fails the command but the others are printed.
	out, errOut, err = runRead(t, nil, filepath.Join(dir, "missing.pdf"), mdFile)
	if err == nil || !strings.Contains(errOut, "missing.pdf") || strings.Count(out, "# Notes") != 1 {
		t.Errorf("err %v, stdout %q, stderr %q", err, out, errOut)
	}
}
