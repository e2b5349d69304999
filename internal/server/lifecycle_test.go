package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// A second question to a chat while its run goes on is refused with 409
// run_in_progress; deleting the chat stops the run and the chat is gone.
func TestQuestionWhileRunningAndDeleteChat(t *testing.T) {
	e := newEnv(t, nil)
	e.site.SetDelay(2 * time.Second) // the run is busy reading pages
	body := `{"id":"busy1","group":"search","messages":[{"role":"user","content":"economy in the 1930s"}]}`
	first := e.post(t, "/api/search", body)
	defer first.Body.Close()
	if first.StatusCode != http.StatusOK {
		t.Fatalf("first question: %d", first.StatusCode)
	}
	var wg sync.WaitGroup
	codes := make([]string, 4)
	for i := range codes {
		wg.Go(func() {
			resp, err := http.Post(e.srv.URL+"/api/search", "application/json", strings.NewReader(body))
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			var out struct {
				Error struct{ Code string } `json:"error"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&out)
			codes[i] = resp.Status + " " + out.Error.Code
		})
	}
	wg.Wait()
	for _, c := range codes {
		if c != "409 Conflict run_in_progress" {
			t.Errorf("a second question got %q, want 409 run_in_progress", c)
		}
	}

	req, _ := http.NewRequest(http.MethodDelete, e.srv.URL+"/api/chats/busy1", nil)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("delete: %d", resp.StatusCode)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("delete took %s: the run was not cancelled", d)
	}
	// The first stream ends (cancelled) instead of running on.
	done := make(chan string, 1)
	go func() { b, _ := io.ReadAll(first.Body); done <- string(b) }()
	select {
	case text := <-done:
		if !strings.Contains(text, `"type":"finish"`) {
			t.Errorf("first stream after delete:\n%s", text)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the run's stream went on after its chat was deleted")
	}
	r, _ := http.Get(e.srv.URL + "/api/chats/busy1")
	r.Body.Close()
	if r.StatusCode != http.StatusNotFound {
		t.Errorf("deleted chat: %d", r.StatusCode)
	}
}
