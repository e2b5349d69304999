package apiclient_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/apiclient"
	"github.com/sova-ai/sova/internal/apiclient/apitest"
	"github.com/sova-ai/sova/internal/egress"
)

// TestBreakerStopsAskingADeadProvider: a provider answering only 5xx is
// asked a few times, then every call fails at once with an error that
// names the provider and says it is paused.
func TestBreakerStopsAskingADeadProvider(t *testing.T) {
	srv := apitest.New(t, apitest.Always(apitest.Reply{Status: 502, Body: "down"}))
	c := apiclient.New(apiclient.Options{Provider: "openalex", HTTPClient: srv.Client(), RetryBackoff: time.Millisecond})
	var err error
	start := time.Now()
	for range 100 {
		_, err = c.Get(t.Context(), srv.URL+"/works", nil)
	}
	if n := len(srv.Requests()); n > egress.DefaultBreakerFailures+1 {
		t.Errorf("100 calls sent %d requests, want at most %d", n, egress.DefaultBreakerFailures+1)
	}
	if !errors.Is(err, egress.ErrOpen) || !strings.HasPrefix(err.Error(), "openalex: ") || strings.Contains(err.Error(), srv.URL) {
		t.Errorf("last error %q, want the provider named, paused, no address", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("100 calls took %s", d)
	}
}
