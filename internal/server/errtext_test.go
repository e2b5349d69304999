package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/sova-ai/sova"
	"github.com/sova-ai/sova/internal/llm/llmtest"
)

// A failed run tells the person which component failed and why, never
// where it lives: not in the stream's error part, not in the stored
// message, not in the OpenAI-compatible endpoint's JSON error.
func TestRunErrorsNameNoAddress(t *testing.T) {
	e := newEnv(t, nil)
	e.model.Handle(func(*llmtest.Request) llmtest.Reply {
		return llmtest.Fail(503, "upstream http://10.1.2.3:8000/v1 is overloaded")
	})
	modelHost := strings.TrimPrefix(e.model.URL(), "http://")
	modelHost, _, _ = strings.Cut(modelHost, "/")
	check := func(where, msg string) {
		t.Helper()
		if !strings.Contains(msg, "the model endpoint answered 503 Service Unavailable") || !strings.Contains(msg, "overloaded") {
			t.Errorf("%s: %q does not say what failed and why", where, msg)
		}
		if !regexp.MustCompile(`\(error id [0-9a-f]{12}\)$`).MatchString(msg) {
			t.Errorf("%s: %q carries no error id", where, msg)
		}
		for _, addr := range []string{modelHost, "127.0.0.1", "10.1.2.3", "http://"} {
			if strings.Contains(msg, addr) {
				t.Errorf("%s: %q shows %q", where, msg, addr)
			}
		}
	}

	resp := e.post(t, "/api/search", `{"id":"chat-e","group":"chat","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"hi"}]}]}`)
	var streamed string
	for _, c := range frames(t, resp.Body) {
		if c["type"] == "error" {
			streamed, _ = c["errorText"].(string)
		}
	}
	resp.Body.Close()
	check("stream", streamed)

	r, err := http.Get(e.srv.URL + "/api/chats/chat-e")
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Messages []sova.Message }
	if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if len(got.Messages) != 2 {
		t.Fatalf("messages: %+v", got.Messages)
	}
	check("stored message", got.Messages[1].Error)
	if got.Messages[1].Error != streamed {
		t.Errorf("the stored message %q is not the streamed one %q: one failure, one id", got.Messages[1].Error, streamed)
	}

	resp = e.post(t, "/v1/chat/completions", `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var apiErr struct {
		Error struct{ Message string }
	}
	if err := json.Unmarshal(b, &apiErr); err != nil || resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("status %d, body %s", resp.StatusCode, b)
	}
	check("API error", apiErr.Error.Message)
}
