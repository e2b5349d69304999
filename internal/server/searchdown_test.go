package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/apiclient/apitest"
)

// TestSearchProviderDownIsNotHammered: with the web search provider
// answering only 5xx, a deep_research run asks it a handful of times (the
// provider's breaker opens and the rest of the run's searches fail at
// once) instead of hundreds; a search run ends with an error that names
// the search provider (deep_research ends with its unverified report).
func TestSearchProviderDownIsNotHammered(t *testing.T) {
	down := apitest.New(t, apitest.Always(apitest.Reply{Status: http.StatusServiceUnavailable, Body: "upstream unavailable"}))
	for _, group := range []string{"deep_research", "search", "extreme"} {
		// A fresh server each: the breaker remembers the provider for
		// the life of the process.
		e := newEnv(t, map[string]string{"SOVA_SEARXNG_URL": down.URL})
		before := len(down.Requests())
		start := time.Now()
		resp := e.post(t, "/api/search", `{"id":"c-`+group+`","group":"`+group+`","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"How did presidents describe the economy in the 1930s?"}]}]}`)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var errText string
		for _, line := range strings.Split(string(body), "\n") {
			var c map[string]any
			if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &c) == nil && c["type"] == "error" {
				errText, _ = c["errorText"].(string)
			}
		}
		n := len(down.Requests()) - before
		t.Logf("%s: %d requests to the search provider, %s, error %q", group, n, time.Since(start).Round(time.Millisecond), errText)
		if n > 12 {
			t.Errorf("%s: the search provider was asked %d times, want at most 12", group, n)
		}
		// extreme makes too few searches to open the breaker; its answer
		// says the search found nothing.
		if group == "search" && (!strings.Contains(errText, "searxng") || !strings.Contains(errText, "search provider")) {
			t.Errorf("%s: error %q, want one that names the search provider", group, errText)
		}
	}
}
