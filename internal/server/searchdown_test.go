package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSearchProviderDownIsNotHammered: with the web search provider (the
// SearXNG fake) answering 503 to everything, one run of each mode asks
// it a handful of times — its breaker opens after five failures in a row
// and the run's further searches fail at once, saying so — and the run
// ends naming the search provider as the problem, not the model: search
// with an error, deep_research and extreme with their unverified answer,
// whose status gives the search provider's failure as the cause.
func TestSearchProviderDownIsNotHammered(t *testing.T) {
	// At most: the first round's three queries at once, each retried once
	// (the breaker opens on the fifth failure and stops a retry still
	// waiting); no later search reaches the provider. With the breaker
	// off, search sends 8 and deep_research 24. extreme's plan searches
	// once (retried once) before it writes.
	limits := map[string]int{"search": 6, "deep_research": 6, "extreme": 2}
	for _, group := range []string{"search", "deep_research", "extreme"} {
		t.Run(group, func(t *testing.T) {
			// A fresh server each: the breaker remembers the provider
			// for the life of the process.
			e := newEnv(t, nil)
			e.sx.Fail.Store(http.StatusServiceUnavailable)
			start := time.Now()
			resp := e.post(t, "/api/search", `{"id":"c-`+group+`","group":"`+group+`","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"How did presidents describe the economy in the 1930s?"}]}]}`)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var errText, unverified, finish string
			for _, line := range strings.Split(string(body), "\n") {
				var c struct {
					Type      string `json:"type"`
					ErrorText string `json:"errorText"`
					Data      struct {
						Stage  string `json:"stage"`
						Detail string `json:"detail"`
					} `json:"data"`
				}
				if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &c) != nil {
					continue
				}
				switch {
				case c.Type == "error":
					errText = c.ErrorText
				case c.Type == "data-status" && c.Data.Stage == "unverified":
					unverified = c.Data.Detail
				case c.Type == "finish":
					finish = line
				}
			}
			n := e.sx.Hits()
			t.Logf("%s: %d requests to the search provider in %s; error %q; unverified status %q",
				group, n, time.Since(start).Round(time.Millisecond), errText, unverified)
			if n == 0 || n > limits[group] {
				t.Errorf("the search provider was asked %d times, want 1 to %d", n, limits[group])
			}
			// What the person is told: the search provider failed.
			said := errText
			if group != "search" {
				said = unverified
				if errText != "" {
					t.Errorf("the run failed (%q); want its unverified answer", errText)
				}
				if finish == "" {
					t.Error("the stream has no finish")
				}
			}
			for _, want := range []string{"searxng", "search", "503"} {
				if !strings.Contains(said, want) {
					t.Errorf("told %q; want it to name the search provider's failure (%q)", said, want)
				}
			}
			if strings.Contains(said, "model") {
				t.Errorf("told %q, which blames the model", said)
			}
		})
	}
}
