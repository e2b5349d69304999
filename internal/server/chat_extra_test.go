package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova"
)

// A chat can be renamed and exported as Markdown with its sources.
func TestRenameAndExportChat(t *testing.T) {
	e := newEnv(t, nil)
	resp := e.post(t, "/api/search", `{"group":"search","messages":[{"role":"user","parts":[{"type":"text","text":"How did presidents describe the economy?"}]}]}`)
	chatID := resp.Header.Get("X-Chat-ID")
	frames(t, resp.Body)
	resp.Body.Close()

	// The title the fast model writes in the background comes first.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := e.app.Store.GetChat(context.Background(), e.user, chatID); err == nil && c.Title != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the chat was never titled")
		}
		time.Sleep(20 * time.Millisecond)
	}
	resp, body := e.as(t, "", "PATCH", "/api/chats/"+chatID, `{"title":"  Presidents   and the economy "}`)
	var got struct{ Chat sova.Chat }
	if err := json.Unmarshal([]byte(body), &got); err != nil || resp.StatusCode != 200 || got.Chat.Title != "Presidents and the economy" {
		t.Fatalf("rename: %d %s", resp.StatusCode, body)
	}
	for _, bad := range []string{`{"title":"   "}`, `{}`, `{"title":"` + strings.Repeat("x", 201) + `"}`} {
		if resp, body := e.as(t, "", "PATCH", "/api/chats/"+chatID, bad); resp.StatusCode != 400 || errorCode(body) != "invalid_title" {
			t.Errorf("rename %s: %d %s", bad, resp.StatusCode, body)
		}
	}
	if resp, _ := e.as(t, "", "PATCH", "/api/chats/nope", `{"title":"x"}`); resp.StatusCode != 404 {
		t.Errorf("rename an unknown chat: %d", resp.StatusCode)
	}

	r, err := http.Get(e.srv.URL + "/api/chats/" + chatID + "/export.md")
	if err != nil {
		t.Fatal(err)
	}
	md, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/markdown") ||
		r.Header.Get("Content-Disposition") != `attachment; filename="sova-chat-Presidents-and-the-economy.md"` {
		t.Fatalf("export: %d %v", r.StatusCode, r.Header)
	}
	text := string(md)
	for _, want := range []string{"# Presidents and the economy\n", "\n## How did presidents describe the economy?\n", "passing storm", "**Sources**", "1. [", "](" + e.site.URL + "/a/"} {
		if !strings.Contains(text, want) {
			t.Errorf("export lacks %q:\n%s", want, text)
		}
	}
}

// A cited passage of the person's documents is fetched by its address,
// with the passages around it; a bad or unknown address is refused.
func TestPassageByURL(t *testing.T) {
	e := newSpacesEnv(t, nil)
	sp := addDocs(t, e)
	var hits struct {
		Hits []struct{ URL string } `json:"hits"`
	}
	if st := do(t, "GET", e.srv.URL+"/api/spaces/"+sp.ID+"/search?q=budget", nil, "", &hits); st != 200 || len(hits.Hits) == 0 {
		t.Fatalf("search: %d %+v", st, hits)
	}
	u := hits.Hits[0].URL
	var got struct {
		Passage struct {
			Document, Text, URL, Heading string
			Seq, ChunkCount              int
		}
	}
	if st := do(t, "GET", e.srv.URL+"/api/passages?url="+url.QueryEscape(u), nil, "", &got); st != 200 {
		t.Fatalf("passage: %d", st)
	}
	p := got.Passage
	if p.Document != "vostok.md" || !strings.Contains(p.Text, "five million roubles") || p.URL != u || p.Seq < 1 || p.ChunkCount < p.Seq {
		t.Errorf("passage %+v", p)
	}
	var bad apiErr
	for q, want := range map[string]int{
		"":                     400,
		"https://example.com/": 400,
		strings.Replace(u, "#chunk-", "#chunk-9", 1):         404,
		"sova://spaces/" + sp.ID + "/documents/nope#chunk-1": 404,
	} {
		if st := do(t, "GET", e.srv.URL+"/api/passages?url="+url.QueryEscape(q), nil, "", &bad); st != want {
			t.Errorf("passage %q: %d %+v, want %d", q, st, bad, want)
		}
	}
}
