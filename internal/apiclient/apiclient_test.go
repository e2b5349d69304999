package apiclient_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/apiclient"
	"github.com/sova-ai/sova/internal/apiclient/apitest"
	"github.com/sova-ai/sova/internal/errtext"
)

const secret = "KEY-s3cr3t/+value"

func newClient(opts apiclient.Options) *apiclient.Client {
	opts.Provider = "fake"
	if opts.RetryBackoff == 0 {
		opts.RetryBackoff = time.Millisecond
	}
	opts.Secrets = []string{secret}
	return apiclient.New(opts)
}

func TestGetJSON(t *testing.T) {
	tests := []struct {
		name      string
		replies   []apitest.Reply
		opts      apiclient.Options
		ctx       func(t *testing.T) context.Context
		wantCalls int
		wantValue string
		wantKind  error
		wantIs    error
		wantCode  int
		wantText  []string
	}{
		{
			name:      "ok",
			replies:   []apitest.Reply{{Body: `{"value":"hello"}`}},
			wantCalls: 1, wantValue: "hello",
		},
		{
			name:      "5xx is retried once",
			replies:   []apitest.Reply{{Status: 502, Body: "bad gateway"}, {Body: `{"value":"second"}`}},
			wantCalls: 2, wantValue: "second",
		},
		{
			name:      "5xx twice fails with the status",
			replies:   []apitest.Reply{{Status: 503, Body: `<html>down for maintenance</html>`}},
			wantCalls: 2, wantCode: 503,
			wantText: []string{"fake: the service answered HTTP 503 Service Unavailable", "down for maintenance"},
		},
		{
			name:      "429 is rate limited, not retried",
			replies:   []apitest.Reply{{Status: 429, Body: `{"error":"slow down"}`, Header: map[string]string{"Retry-After": "7"}}},
			wantCalls: 1, wantCode: 429, wantKind: apiclient.ErrRateLimited,
			wantText: []string{"HTTP 429 Too Many Requests"},
		},
		{
			name:      "quota answer marked by Describe",
			replies:   []apitest.Reply{{Status: 403, Body: `{"reason":"quotaExceeded"}`}},
			opts:      apiclient.Options{Describe: func(int, []byte) (string, bool) { return "quota used up", true }},
			wantCalls: 1, wantCode: 403, wantKind: apiclient.ErrRateLimited,
			wantText: []string{"HTTP 403 Forbidden: quota used up"},
		},
		{
			name:      "4xx is final and redacted",
			replies:   []apitest.Reply{{Status: 400, Body: `{"error":"bad key ` + secret + `"}`}},
			wantCalls: 1, wantCode: 400,
			wantText: []string{"HTTP 400 Bad Request", "[redacted]"},
		},
		{
			name:      "malformed JSON",
			replies:   []apitest.Reply{{Body: `{"value": "unterminated`}},
			wantCalls: 1, wantKind: apiclient.ErrBadResponse,
			wantText: []string{"not the expected JSON", "unterminated"},
		},
		{
			name:      "too large",
			replies:   []apitest.Reply{{Body: `{"value":"` + strings.Repeat("x", 200) + `"}`}},
			opts:      apiclient.Options{MaxBytes: 100},
			wantCalls: 1, wantCode: 200, wantKind: apiclient.ErrBadResponse,
			wantText: []string{"larger than 100 bytes"},
		},
		{
			name:    "caller deadline",
			replies: []apitest.Reply{{Delay: 5 * time.Second, Body: `{}`}},
			ctx: func(t *testing.T) context.Context {
				ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
				t.Cleanup(cancel)
				return ctx
			},
			wantCalls: 1, wantIs: context.DeadlineExceeded,
			wantText: []string{"stopped"},
		},
		{
			name:      "own timeout",
			replies:   []apitest.Reply{{Delay: 5 * time.Second, Body: `{}`}},
			opts:      apiclient.Options{Timeout: 50 * time.Millisecond},
			wantCalls: 1, wantIs: context.DeadlineExceeded,
			wantText: []string{"no answer within 50ms"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			srv := apitest.New(t, func(*http.Request) apitest.Reply {
				rep := tc.replies[min(n, len(tc.replies)-1)]
				n++
				return rep
			})
			tc.opts.HTTPClient = srv.Client()
			c := newClient(tc.opts)
			ctx := t.Context()
			if tc.ctx != nil {
				ctx = tc.ctx(t)
			}
			var out struct {
				Value string `json:"value"`
			}
			err := c.GetJSON(ctx, srv.URL+"/v1/thing?key="+secret, http.Header{"X-Api-Key": {secret}}, &out)
			if got := len(srv.Requests()); got != tc.wantCalls {
				t.Errorf("calls = %d, want %d", got, tc.wantCalls)
			}
			wantErr := tc.wantValue == ""
			if (err != nil) != wantErr {
				t.Fatalf("err = %v, want error %v", err, wantErr)
			}
			if !wantErr {
				if out.Value != tc.wantValue {
					t.Errorf("value = %q, want %q", out.Value, tc.wantValue)
				}
				r := srv.Requests()[0]
				if r.Header.Get("User-Agent") != apiclient.DefaultUserAgent || r.Header.Get("Accept") != "application/json" {
					t.Errorf("headers = %v", r.Header)
				}
				return
			}
			var e *apiclient.Error
			if !errors.As(err, &e) {
				t.Fatalf("err %T is not *apiclient.Error", err)
			}
			if e.Status != tc.wantCode {
				t.Errorf("status = %d, want %d", e.Status, tc.wantCode)
			}
			if tc.wantKind != nil && !errors.Is(err, tc.wantKind) {
				t.Errorf("errors.Is(%v, %v) = false", err, tc.wantKind)
			}
			if tc.wantKind != apiclient.ErrRateLimited && errors.Is(err, apiclient.ErrRateLimited) {
				t.Errorf("%v matches ErrRateLimited", err)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("errors.Is(%v, %v) = false", err, tc.wantIs)
			}
			msg := err.Error()
			if strings.Contains(msg, secret) || strings.Contains(msg, "s3cr3t") {
				t.Errorf("error leaks the secret: %s", msg)
			}
			for _, w := range tc.wantText {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	srv := apitest.New(t, apitest.Always(apitest.Reply{Status: 429, Header: map[string]string{"Retry-After": "7"}}))
	c := newClient(apiclient.Options{HTTPClient: srv.Client()})
	_, err := c.Get(t.Context(), srv.URL, nil)
	var e *apiclient.Error
	if !errors.As(err, &e) || e.RetryAfter != 7*time.Second {
		t.Fatalf("err = %#v, want RetryAfter 7s", err)
	}

	srv = apitest.New(t, apitest.Always(apitest.Reply{Status: 429, Header: map[string]string{"X-Ratelimit-Reset": "42"}}))
	c = newClient(apiclient.Options{HTTPClient: srv.Client()})
	_, err = c.Get(t.Context(), srv.URL, nil)
	if !errors.As(err, &e) || e.RetryAfter != 42*time.Second {
		t.Fatalf("err = %#v, want RetryAfter 42s", err)
	}
}

func TestPostJSON(t *testing.T) {
	srv := apitest.New(t, apitest.Always(apitest.Reply{Body: `{"ok":true}`}))
	c := newClient(apiclient.Options{HTTPClient: srv.Client(), UserAgent: "custom/2"})
	var out struct {
		OK bool `json:"ok"`
	}
	if err := c.PostJSON(t.Context(), srv.URL+"/search", http.Header{"Authorization": {"Bearer x"}}, map[string]int{"n": 3}, &out); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if r.Method != http.MethodPost || string(r.Body) != `{"n":3}` || r.Header.Get("Content-Type") != "application/json" ||
		r.Header.Get("Authorization") != "Bearer x" || r.Header.Get("User-Agent") != "custom/2" || !out.OK {
		t.Errorf("request = %+v, out = %+v", r, out)
	}
}

func TestUnreachableHidesQuery(t *testing.T) {
	c := newClient(apiclient.Options{RetryBackoff: -1})
	_, err := c.Get(t.Context(), "http://127.0.0.1:1/path?key="+secret, nil)
	if err == nil {
		t.Fatal("want an error")
	}
	if msg := err.Error(); strings.Contains(msg, "s3cr3t") || strings.Contains(msg, "127.0.0.1") || !strings.Contains(msg, "cannot reach the service") ||
		!strings.Contains(errtext.Detail(err), "at http://127.0.0.1:1") {
		t.Errorf("error = %q", msg)
	}
}
