package apiclient

import (
	"net/http"
	"testing"
	"time"
)

func TestRedact(t *testing.T) {
	const secret = "sk-test-SECRET-0123456789"
	tests := []struct{ in, want string }{
		{"https://api.example.com/x?appid=abc123&lat=1", "https://api.example.com/x?appid=[redacted]&lat=1"},
		{"?api_key=zzz&x_cg_demo_api_key=CG-1 token=t0k", "?api_key=[redacted]&x_cg_demo_api_key=[redacted] token=[redacted]"},
		{"key " + secret + " here", "key [redacted] here"},
		{"monkey=business id=5", "monkey=business id=5"},
		{"escaped a%2Fb+c", "escaped [redacted]"},
	}
	for _, tt := range tests {
		if got := redact(tt.in, []string{secret, "a/b c"}); got != tt.want {
			t.Errorf("redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRetryAfterHeader(t *testing.T) {
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
		if got := retryAfter(http.Header{"Retry-After": {tt.h}}, now); got != tt.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tt.h, got, tt.want)
		}
	}
	if got := retryAfter(http.Header{"X-Ratelimit-Reset": {"1.5"}}, now); got != 1500*time.Millisecond {
		t.Errorf("X-Ratelimit-Reset 1.5 = %v", got)
	}
}
