package apiclient

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/apiclient/apitest"
)

const secret = "sk-test-SECRET-0123456789"

func TestDo(t *testing.T) {
	tests := []struct {
		name     string
		reply    apitest.Reply
		client   Client
		wantHits int
		status   int
		want     []string
		is       []error
		isNot    []error
	}{
		{name: "2xx body returned", reply: apitest.Reply{Body: `{"ok":true}`}, wantHits: 1},
		{name: "404 is ErrNotFound", reply: apitest.Reply{Status: 404, Body: `{"error":"coin not found"}`}, wantHits: 1, status: 404,
			want: []string{"Test API: ", "answered HTTP 404 Not Found: coin not found"}, is: []error{ErrNotFound}, isNot: []error{ErrRateLimited}},
		{name: "429 is ErrRateLimited, not retried", reply: apitest.Reply{Status: 429, Body: "slow down", Header: map[string]string{"Retry-After": "7"}},
			client: Client{Retries: 3}, wantHits: 1, status: 429, want: []string{"HTTP 429 Too Many Requests: slow down; retry after 7s"}, is: []error{ErrRateLimited}, isNot: []error{ErrNotFound}},
		{name: "5xx retried as often as asked", reply: apitest.Reply{Status: 503}, client: Client{Retries: 2}, wantHits: 3, status: 503,
			want: []string{"HTTP 503 Service Unavailable"}},
		{name: "4xx not retried", reply: apitest.Reply{Status: 400, Body: `{"reason":"bad latitude"}`}, client: Client{Retries: 2}, wantHits: 1, status: 400,
			want: []string{"HTTP 400 Bad Request: bad latitude"}},
		{name: "hint added", reply: apitest.Reply{Status: 401}, client: Client{Hint: func(s int) string { return "check the key" }}, wantHits: 1, status: 401,
			want: []string{"HTTP 401 Unauthorized (check the key)"}},
		{name: "own detail parser", reply: apitest.Reply{Status: 400, Body: "E42"}, client: Client{Detail: func(b []byte) string { return "code " + string(b) }}, wantHits: 1, status: 400,
			want: []string{"HTTP 400 Bad Request: code E42"}},
		{name: "secret in the body redacted", reply: apitest.Reply{Status: 403, Body: `{"message":"key ` + secret + ` is blocked; see ?appid=abc&key=def"}`}, client: Client{Secrets: []string{secret}}, wantHits: 1, status: 403,
			want: []string{"key [redacted] is blocked; see ?appid=[redacted]&key=[redacted]"}},
		{name: "answer too large", reply: apitest.Reply{Body: strings.Repeat("x", 2048)}, client: Client{MaxBytes: 1024}, wantHits: 1, status: 200,
			want: []string{"is larger than 1024 bytes"}},
		{name: "timeout not retried", reply: apitest.Reply{Body: "{}", Delay: 3 * time.Second}, client: Client{HTTP: NewHTTPClient(100 * time.Millisecond), Retries: 2}, wantHits: 1,
			want: []string{"no answer from http://127.0.0.1", "within 100ms"}, is: []error{context.DeadlineExceeded}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := apitest.Always(t, tt.reply)
			c := tt.client
			c.Provider, c.BaseURL = "Test API", srv.URL
			body, err := c.Do(t.Context(), Request{Path: "/v1/thing", Header: http.Header{"X-Extra": {"1"}}})
			if n := len(srv.Requests()); n != tt.wantHits {
				t.Errorf("requests = %d, want %d", n, tt.wantHits)
			}
			if tt.want == nil {
				if err != nil || string(body) != tt.reply.Body {
					t.Errorf("Do = %q, %v", body, err)
				}
				return
			}
			var e *Error
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
			if strings.Contains(err.Error(), secret) {
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
	srv := apitest.Always(t, apitest.Reply{Body: `{"n":1}`})
	c := Client{Provider: "Test", BaseURL: srv.URL + "/prefix/", Header: http.Header{"X-Api-Key": {secret}}}
	var out struct{ N int }
	err := c.JSON(t.Context(), Request{Method: http.MethodPost, Path: "/things", Query: map[string][]string{"q": {"a b"}},
		Body: []byte(`{"x":1}`), ContentType: "application/json"}, &out)
	if err != nil || out.N != 1 {
		t.Fatalf("JSON = %+v, %v", out, err)
	}
	r := srv.Requests()[0]
	if r.Method != http.MethodPost || r.Path != "/prefix/things" || r.Query.Get("q") != "a b" || string(r.Body) != `{"x":1}` {
		t.Errorf("request = %+v", r)
	}
	if r.Header.Get("X-Api-Key") != secret || r.Header.Get("Content-Type") != "application/json" ||
		r.Header.Get("Accept") != "application/json" || r.Header.Get("User-Agent") != DefaultUserAgent {
		t.Errorf("headers = %v", r.Header)
	}
}

func TestMalformedJSON(t *testing.T) {
	srv := apitest.Always(t, apitest.Reply{Body: "<html><body>Maintenance</body></html>"})
	c := Client{Provider: "Test", BaseURL: srv.URL}
	var out map[string]any
	err := c.JSON(t.Context(), Request{Path: "/"}, &out)
	if err == nil || !strings.Contains(err.Error(), `Test: the answer is not valid JSON; it starts with "Maintenance"`) {
		t.Errorf("err = %v", err)
	}
}

func TestNetworkErrorRetriedAndNamesNoPath(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now

	c := Client{Provider: "Test", BaseURL: "http://" + addr, Retries: 1}
	_, err = c.Do(t.Context(), Request{Path: "/data", Query: map[string][]string{"appid": {secret}}})
	if err == nil || !strings.Contains(err.Error(), "Test: cannot reach http://"+addr) {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "/data") {
		t.Errorf("error shows the request URL: %v", err)
	}
}

func TestCancelled(t *testing.T) {
	srv := apitest.Always(t, apitest.Reply{Body: "{}", Delay: 3 * time.Second})
	c := Client{Provider: "Test", BaseURL: srv.URL, Retries: 3}
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := c.Do(ctx, Request{Path: "/"})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "request cancelled") {
		t.Errorf("err = %v", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("requests = %d", n)
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
		if got := ErrorDetail([]byte(tt.body)); got != tt.want {
			t.Errorf("ErrorDetail(%s) = %q, want %q", tt.body, got, tt.want)
		}
	}
}

func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://api.example.com/x?appid=abc123&lat=1", "https://api.example.com/x?appid=[redacted]&lat=1"},
		{"?api_key=zzz&x_cg_demo_api_key=CG-1 token=t0k", "?api_key=[redacted]&x_cg_demo_api_key=[redacted] token=[redacted]"},
		{"key " + secret + " here", "key [redacted] here"},
		{"monkey=business id=5", "monkey=business id=5"},
	}
	for _, tt := range tests {
		if got := Redact(tt.in, secret); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
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
		got, err := BaseURL("SOVA_TEST_URL", tt.in, "https://default.example")
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("BaseURL(%q) = %q, %v", tt.in, got, err)
		}
		if err != nil && (!strings.Contains(err.Error(), "SOVA_TEST_URL") || strings.Contains(err.Error(), "pass")) {
			t.Errorf("error %q must name the setting and hide passwords", err)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2024, 6, 12, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		h    string
		want time.Duration
	}{
		{"", 0}, {"30", 30 * time.Second}, {"-1", 0}, {"soon", 0},
		{"Wed, 12 Jun 2024 12:01:00 GMT", time.Minute},
		{"Wed, 12 Jun 2024 11:00:00 GMT", 0},
	}
	for _, tt := range tests {
		if got := retryAfter(tt.h, now); got != tt.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tt.h, got, tt.want)
		}
	}
}
