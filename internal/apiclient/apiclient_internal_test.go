package apiclient

import (
	"testing"
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
