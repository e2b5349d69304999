package server_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A search run with a result whose page answers after 20 s finishes in
// under 6 s over HTTP, with the default SOVA_READ_GRACE (2 s): the run
// answers from the pages read and says it left the slow one out.
func TestSearchOverHTTPDoesNotWaitForA20sPage(t *testing.T) {
	e := newEnv(t, nil)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(20 * time.Second):
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, "<html><body><p>too late</p></body></html>")
	}))
	t.Cleanup(slow.Close)
	// Ranked first: every word of the question, twice.
	e.sx.Extra = []map[string]any{{"url": slow.URL + "/slow", "title": "presidents describe the economy 1930s presidents economy",
		"content": "how presidents describe the economy in the 1930s economy presidents describe"}}
	start := time.Now()
	resp := e.post(t, "/api/search", `{"group":"search","messages":[{"role":"user","content":"How did presidents describe the economy in the 1930s?"}]}`)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP %d, %v", resp.StatusCode, err)
	}
	t.Logf("the run took %s", took)
	if took > 6*time.Second {
		t.Errorf("the run took %s with a 20 s page among its results, want under 6 s", took)
	}
	for _, want := range []string{`"type":"finish"`, "slow page"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the stream lacks %q", want)
		}
	}
}
