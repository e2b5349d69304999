package apiclient_test

import (
	"errors"
	"testing"

	"github.com/sova-ai/sova/internal/apiclient"
	"github.com/sova-ai/sova/internal/apiclient/apitest"
	"github.com/sova-ai/sova/internal/egress"
)

// A provider's answer carries the egress kind of its status, so callers
// (and the server's error mapping) tell a refused key from an outage.
func TestErrorKinds(t *testing.T) {
	for status, kind := range map[int]error{401: egress.ErrAuth, 403: egress.ErrAuth, 404: egress.ErrNotFound, 429: egress.ErrRateLimited,
		400: egress.ErrInvalid, 500: egress.ErrTransient, 503: egress.ErrTransient} {
		srv := apitest.New(t, apitest.Always(apitest.Reply{Status: status}))
		c := loopback(apiclient.Options{Provider: "Test", RetryBackoff: -1})
		_, err := c.Get(t.Context(), srv.URL+"/x", nil)
		if !errors.Is(err, kind) || egress.KindOf(err) != kind {
			t.Errorf("HTTP %d: %v is not %v", status, err, kind)
		}
	}
}
