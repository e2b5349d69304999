package apiclient_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/sova-ai/sova/internal/apiclient"
	"github.com/sova-ai/sova/internal/apiclient/apitest"
	"github.com/sova-ai/sova/internal/egress"
	"github.com/sova-ai/sova/internal/errtext"
)

const secret = "KEY-s3cr3t/+value"

func newClient(opts apiclient.Options) *apiclient.Client {
	opts.Provider = "fake"
	if opts.RetryBackoff == 0 {
		opts.RetryBackoff = time.Millisecond
	}
	opts.Secrets = []string{secret}
	return loopback(opts)
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

// dataKey is a key of the kind the data tools' providers take.
const dataKey = "sk-test-SECRET-0123456789"

func TestDo(t *testing.T) {
	tests := []struct {
		name     string
		reply    apitest.Reply
		opts     apiclient.Options
		wantHits int
		status   int
		want     []string
		is       []error
		isNot    []error
	}{
		{name: "2xx body returned", reply: apitest.Reply{Body: `{"ok":true}`}, wantHits: 1},
		{name: "404 is ErrNotFound", reply: apitest.Reply{Status: 404, Body: `{"error":"coin not found"}`}, wantHits: 1, status: 404,
			want: []string{"Test API: ", "answered HTTP 404 Not Found: coin not found"}, is: []error{apiclient.ErrNotFound}, isNot: []error{apiclient.ErrRateLimited}},
		{name: "429 is ErrRateLimited, not retried", reply: apitest.Reply{Status: 429, Body: "slow down", Header: map[string]string{"Retry-After": "7"}},
			opts: apiclient.Options{Retries: 3}, wantHits: 1, status: 429, want: []string{"HTTP 429 Too Many Requests: slow down; retry after 7s"},
			is: []error{apiclient.ErrRateLimited}, isNot: []error{apiclient.ErrNotFound}},
		{name: "5xx retried as often as asked", reply: apitest.Reply{Status: 503}, opts: apiclient.Options{Retries: 2}, wantHits: 3, status: 503,
			want: []string{"HTTP 503 Service Unavailable"}},
		{name: "no retry when the backoff is negative", reply: apitest.Reply{Status: 503}, opts: apiclient.Options{Retries: 2, RetryBackoff: -1}, wantHits: 1, status: 503,
			want: []string{"HTTP 503 Service Unavailable"}},
		{name: "4xx not retried", reply: apitest.Reply{Status: 400, Body: `{"reason":"bad latitude"}`}, opts: apiclient.Options{Retries: 2}, wantHits: 1, status: 400,
			want: []string{"HTTP 400 Bad Request: bad latitude"}},
		{name: "hint added", reply: apitest.Reply{Status: 401}, opts: apiclient.Options{Hint: func(int) string { return "check the key" }}, wantHits: 1, status: 401,
			want: []string{"HTTP 401 Unauthorized (check the key)"}},
		{name: "own detail parser", reply: apitest.Reply{Status: 400, Body: "E42"},
			opts:     apiclient.Options{Describe: func(_ int, b []byte) (string, bool) { return "code " + string(b), false }},
			wantHits: 1, status: 400, want: []string{"HTTP 400 Bad Request: code E42"}},
		{name: "secret in the body redacted", reply: apitest.Reply{Status: 403, Body: `{"message":"key ` + dataKey + ` is blocked; see ?appid=abc&key=def"}`},
			opts: apiclient.Options{Secrets: []string{dataKey}}, wantHits: 1, status: 403,
			want: []string{"key [redacted] is blocked; see ?appid=[redacted]&key=[redacted]"}},
		{name: "HTML error page read as text", reply: apitest.Reply{Status: 502, Body: "<html><head><style>h1{color:red}</style></head><body><h1>502 Bad Gateway</h1>\n<p>nginx</p></body></html>"},
			wantHits: 2, status: 502, want: []string{"HTTP 502 Bad Gateway: 502 Bad Gateway nginx"}},
		{name: "answer too large", reply: apitest.Reply{Body: strings.Repeat("x", 2048)}, opts: apiclient.Options{MaxBytes: 1024}, wantHits: 1, status: 200,
			want: []string{"is larger than 1024 bytes"}, is: []error{apiclient.ErrBadResponse}},
		{name: "timeout not retried", reply: apitest.Reply{Body: "{}", Delay: 3 * time.Second},
			opts: apiclient.Options{HTTPClient: &http.Client{Timeout: 100 * time.Millisecond}, Retries: 2}, wantHits: 1,
			want: []string{"within 100ms"}, is: []error{context.DeadlineExceeded}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := apitest.New(t, apitest.Always(tt.reply))
			opts := tt.opts
			opts.Provider = "Test API"
			if opts.RetryBackoff == 0 {
				opts.RetryBackoff = time.Millisecond
			}
			c := loopback(opts)
			body, err := c.Get(t.Context(), srv.URL+"/v1/thing", http.Header{"X-Extra": {"1"}})
			if n := len(srv.Requests()); n != tt.wantHits {
				t.Errorf("requests = %d, want %d", n, tt.wantHits)
			}
			if tt.want == nil {
				if err != nil || string(body) != tt.reply.Body {
					t.Errorf("Do = %q, %v", body, err)
				}
				if h := srv.Requests()[0].Header.Get("X-Extra"); h != "1" {
					t.Errorf("X-Extra = %q", h)
				}
				return
			}
			var e *apiclient.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v (%T)", err, err)
			}
			if e.Status != tt.status {
				t.Errorf("Status = %d, want %d", e.Status, tt.status)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), dataKey) {
				t.Errorf("error shows the secret: %v", err)
			}
			for _, target := range tt.is {
				if !errors.Is(err, target) {
					t.Errorf("errors.Is(err, %v) = false", target)
				}
			}
			for _, target := range tt.isNot {
				if errors.Is(err, target) {
					t.Errorf("errors.Is(err, %v) = true", target)
				}
			}
		})
	}
}

func TestRequestShape(t *testing.T) {
	srv := apitest.New(t, apitest.Always(apitest.Reply{Body: `{"n":1}`}))
	c := loopback(apiclient.Options{Provider: "Test"})
	var out struct{ N int }
	err := c.PostJSON(t.Context(), srv.URL+"/prefix/things?q=a+b", http.Header{"X-Api-Key": {dataKey}}, map[string]int{"x": 1}, &out)
	if err != nil || out.N != 1 {
		t.Fatalf("PostJSON = %+v, %v", out, err)
	}
	r := srv.Requests()[0]
	if r.Method != http.MethodPost || r.Path != "/prefix/things" || r.Query.Get("q") != "a b" || string(r.Body) != `{"x":1}` {
		t.Errorf("request = %+v", r)
	}
	if r.Header.Get("X-Api-Key") != dataKey || r.Header.Get("Content-Type") != "application/json" ||
		r.Header.Get("Accept") != "application/json" || r.Header.Get("User-Agent") != apiclient.DefaultUserAgent {
		t.Errorf("headers = %v", r.Header)
	}
}

func TestMalformedJSON(t *testing.T) {
	tests := []struct{ body, want string }{
		{"<html><body>Maintenance</body></html>", `Test: the answer is not valid JSON; it starts with "Maintenance"`},
		{`{"n": "one"}`, `Test: the answer is not the expected JSON (not valid JSON, or not in the documented shape); it starts with "{\"n\": \"one\"}"`},
		{`[1, 2`, `Test: the answer is not the expected JSON`},
		{`"text"`, `Test: the answer is not the expected JSON`},
	}
	for _, tt := range tests {
		srv := apitest.New(t, apitest.Always(apitest.Reply{Body: tt.body}))
		c := loopback(apiclient.Options{Provider: "Test"})
		var out struct{ N int }
		err := c.GetJSON(t.Context(), srv.URL+"/", nil, &out)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, apiclient.ErrBadResponse) {
			t.Errorf("body %s: err = %v, want %q", tt.body, err, tt.want)
		}
	}
}

func TestNetworkErrorRetriedAndNamesNoPath(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now

	c := loopback(apiclient.Options{Provider: "Test", RetryBackoff: time.Millisecond})
	_, err = c.Get(t.Context(), "http://"+addr+"/data?appid="+dataKey, nil)
	// The address goes to the log (Addr), not into the text people see.
	var e *apiclient.Error
	if !errors.As(err, &e) || !strings.Contains(err.Error(), "Test: cannot reach the service") || e.Addr != "http://"+addr {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), addr) {
		t.Errorf("error shows the address: %v", err)
	}
	if strings.Contains(err.Error(), dataKey) || strings.Contains(err.Error(), "/data") {
		t.Errorf("error shows the request URL: %v", err)
	}
}

func TestCancelled(t *testing.T) {
	srv := apitest.New(t, apitest.Always(apitest.Reply{Body: "{}", Delay: 3 * time.Second}))
	c := loopback(apiclient.Options{Provider: "Test", Retries: 3})
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := c.Get(ctx, srv.URL+"/", nil)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "request cancelled") {
		t.Errorf("err = %v", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("requests = %d", n)
	}
}

func TestLimiter(t *testing.T) {
	srv := apitest.New(t, apitest.Always(apitest.Reply{Body: "{}"}))
	c := loopback(apiclient.Options{Provider: "Test", Limiter: rate.NewLimiter(rate.Every(150*time.Millisecond), 1)})
	start := time.Now()
	for range 3 {
		if _, err := c.Get(t.Context(), srv.URL+"/", nil); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d < 280*time.Millisecond {
		t.Errorf("three calls took %v; the interval of 150ms was not kept", d)
	}

	// A turn that would come after the deadline is refused at once.
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := c.Get(ctx, srv.URL+"/", nil)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no turn before the deadline (this service takes one request every 150ms)") {
		t.Errorf("err = %v", err)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("requests = %d, want 3", n)
	}
}

func TestInvalidAndNotFound(t *testing.T) {
	err := error(apiclient.Invalid("Test", "%q is not a symbol", "a b"))
	if !errors.Is(err, apiclient.ErrInvalidInput) || errors.Is(err, apiclient.ErrNotFound) || err.Error() != `Test: "a b" is not a symbol` {
		t.Errorf("Invalid = %v", err)
	}
	err = apiclient.NotFound("Test", "no place named %q", "Atlantis")
	if !errors.Is(err, apiclient.ErrNotFound) || errors.Is(err, apiclient.ErrInvalidInput) || err.Error() != `Test: no place named "Atlantis"` {
		t.Errorf("NotFound = %v", err)
	}
}

func TestOptionsDefaults(t *testing.T) {
	o := loopback(apiclient.Options{Provider: "Test"}).Options()
	if o.Timeout != apiclient.DefaultTimeout || o.RetryBackoff != apiclient.DefaultRetryBackoff || o.Retries != 1 ||
		o.MaxBytes != apiclient.DefaultMaxBytes || o.UserAgent != apiclient.DefaultUserAgent || o.HTTPClient == nil || o.HTTPClient.Timeout != apiclient.DefaultTimeout {
		t.Errorf("defaults = %+v", o)
	}
	if o := loopback(apiclient.Options{Retries: 3, RetryBackoff: -1}).Options(); o.Retries != 0 {
		t.Errorf("a negative backoff leaves %d retries", o.Retries)
	}
}

func TestErrorDetail(t *testing.T) {
	tests := []struct{ body, want string }{
		{`{"error":"coin not found"}`, "coin not found"},
		{`{"error":{"code":400,"message":"API key not valid.","status":"INVALID_ARGUMENT"}}`, "API key not valid."},
		{`{"chart":{"result":null,"error":{"code":"Not Found","description":"No data found"}}}`, "No data found"},
		{`{"finance":{"result":null,"error":{"code":"Unauthorized","description":"Invalid Crumb"}}}`, "Invalid Crumb"},
		{`{"message":"not found"}`, "not found"},
		{`{"cod":401,"message":"Invalid API key."}`, "Invalid API key."},
		{`{"error":true,"reason":"Latitude must be in range"}`, "Latitude must be in range"},
		{`{"status":{"error_code":429,"error_message":"You've exceeded the Rate Limit."}}`, "You've exceeded the Rate Limit."},
		{`{"error":{"status":{"error_code":10002,"error_message":"API Key Missing"}}}`, "API Key Missing"},
		{`{"status":"error","description":"went wrong"}`, "went wrong"},
		{`{"message":{"nested":true}}`, ""},
		{`[1,2]`, ""},
		{`not json`, ""},
	}
	for _, tt := range tests {
		if got := apiclient.ErrorDetail([]byte(tt.body)); got != tt.want {
			t.Errorf("ErrorDetail(%s) = %q, want %q", tt.body, got, tt.want)
		}
	}
}

func TestBaseURL(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"", "https://default.example", true},
		{"  http://mirror.local:8080/api/  ", "http://mirror.local:8080/api", true},
		{"mirror.local", "", false},
		{"ftp://mirror.local", "", false},
		{"https://user:pass@mirror.local/?a=b", "", false},
	}
	for _, tt := range tests {
		got, err := apiclient.BaseURL("SOVA_TEST_URL", tt.in, "https://default.example")
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("BaseURL(%q) = %q, %v", tt.in, got, err)
		}
		if err != nil && (!strings.Contains(err.Error(), "SOVA_TEST_URL") || strings.Contains(err.Error(), "pass")) {
			t.Errorf("error %q must name the setting and hide passwords", err)
		}
	}
}

// loopback is apiclient.New for a provider whose configured base is the
// test servers' loopback address (which the guard refuses otherwise).
func loopback(o apiclient.Options) *apiclient.Client {
	o.Bases = append(o.Bases, "http://127.0.0.1")
	return apiclient.New(o)
}

// With MaxRetryAfter a 429 is retried after the wait it asks for when
// that wait is short; a longer one, or none allowed, leaves it final.
func TestMaxRetryAfter(t *testing.T) {
	tests := []struct {
		name       string
		retryAfter string
		max        time.Duration
		wantHits   int
		wantStatus int
	}{
		{"short wait retried", "0", time.Second, 2, 200},
		{"wait over the cap final", "3600", time.Second, 1, 429},
		{"off by default", "0", 0, 1, 429},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			srv := apitest.New(t, func(*http.Request) apitest.Reply {
				n++
				if n == 1 {
					return apitest.Reply{Status: 429, Body: "slow down", Header: map[string]string{"Retry-After": tc.retryAfter}}
				}
				return apitest.Reply{Body: `{}`}
			})
			c := newClient(apiclient.Options{HTTPClient: srv.Client(), MaxRetryAfter: tc.max})
			_, err := c.Get(t.Context(), srv.URL, nil)
			if got := len(srv.Requests()); got != tc.wantHits {
				t.Errorf("requests = %d, want %d", got, tc.wantHits)
			}
			if tc.wantStatus == 200 {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			apitest.WantError(t, err, tc.wantStatus, "HTTP 429")
		})
	}
}

// DoStatus gives the status of a 2xx answer; Cause gives a non-2xx
// answer's error a cause that errors.Is matches and its text names.
func TestDoStatusAndCause(t *testing.T) {
	srv := apitest.New(t, apitest.ByPath(map[string]apitest.Reply{
		"/accepted": {Status: http.StatusAccepted, Body: "later"},
	}, apitest.Reply{Status: http.StatusForbidden, Body: "Forbidden"}))
	remedy := errors.New("enable the thing in settings.yml")
	c := newClient(apiclient.Options{HTTPClient: srv.Client(), Cause: func(status int) error {
		if status == http.StatusForbidden {
			return remedy
		}
		return nil
	}})
	body, status, err := c.DoStatus(t.Context(), http.MethodGet, srv.URL+"/accepted", nil, nil)
	if err != nil || status != http.StatusAccepted || string(body) != "later" {
		t.Fatalf("DoStatus = %q, %d, %v; want the 202 answer", body, status, err)
	}
	_, status, err = c.DoStatus(t.Context(), http.MethodGet, srv.URL+"/other", nil, nil)
	if status != 0 || !errors.Is(err, remedy) || !errors.Is(err, egress.ErrAuth) {
		t.Fatalf("DoStatus = %d, %v; want the 403 with its cause and kind", status, err)
	}
	apitest.WantError(t, err, http.StatusForbidden, "HTTP 403 Forbidden", "settings.yml")
}
