package errtext

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
)

func TestScrub(t *testing.T) {
	tests := []struct{ in, want string }{
		{"dial tcp 10.0.0.3:8000: connect: connection refused", "dial tcp [address]: connect: connection refused"},
		{"Cannot connect to host vllm:8000 ssl:default [Connection refused]", "Cannot connect to host [address] ssl:default [Connection refused]"},
		{"upstream http://10.1.2.3/v1/chat/completions failed.", "upstream [address] failed."},
		{"proxy at http://searxng.internal:8080/search answered", "proxy at [address] answered"},
		{"lookup [::1]:11434 and fe80::1 and 192.168.1.7", "lookup [address] and [address] and [address]"},
		{"see https://platform.openai.com/docs/guides/error-codes for more", "see https://platform.openai.com/docs/guides/error-codes for more"},
		{"localhost:11434 is busy", "[address] is busy"},
		{"at 12:30:45 the queue was full (code ssl:default, std::vector)", "at 12:30:45 the queue was full (code ssl:default, std::vector)"},
		{"context length 8192 exceeded: 9000 tokens", "context length 8192 exceeded: 9000 tokens"},
	}
	for _, tt := range tests {
		if got := Scrub(tt.in); got != tt.want {
			t.Errorf("Scrub(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
	if got := Scrub("the model at https://models.example.com/v1 is down", "https://models.example.com/v1"); got != "the model at [address] is down" {
		t.Errorf("known address kept: %q", got)
	}
}

func TestNetwork(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 3), Port: 8000},
		Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}
	tests := []struct {
		err  error
		want string
	}{
		{refused, "connection refused"},
		{&net.OpError{Op: "proxyconnect", Net: "tcp", Err: refused}, "cannot reach the proxy: connection refused"},
		{&net.DNSError{Err: "no such host", Name: "searxng.corp", IsNotFound: true}, "no such host"},
		{fmt.Errorf("reading: %w", context.DeadlineExceeded), "timed out"},
		{errors.New("tls: handshake with 10.9.9.9:443 failed"), "tls: handshake with [address] failed"},
	}
	for _, tt := range tests {
		if got := Network(tt.err); got != tt.want {
			t.Errorf("Network(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

type privateErr struct{ text, detail string }

func (e privateErr) Error() string   { return e.text }
func (e privateErr) Private() string { return e.detail }

func TestDetailAndNet(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 3), Port: 8000},
		Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}
	err := fmt.Errorf("search: %w", errors.Join(
		privateErr{"searxng: the service answered HTTP 503", "at http://searxng:8080"},
		fmt.Errorf("tavily: %w", Net(refused))))
	if strings.Contains(err.Error(), "10.0.0.3") || strings.Contains(err.Error(), "searxng:8080") {
		t.Errorf("text shows an address: %q", err)
	}
	if !strings.Contains(err.Error(), "tavily: connection refused") {
		t.Errorf("text: %q", err)
	}
	d := Detail(err)
	if !strings.HasPrefix(d, err.Error()+" (") || !strings.Contains(d, "at http://searxng:8080") || !strings.Contains(d, "dial tcp 10.0.0.3:8000") {
		t.Errorf("detail: %q", d)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Error("Net hides the cause from errors.Is")
	}
	if Detail(nil) != "" || Public(nil) != "" || Net(nil) != nil {
		t.Error("nil")
	}
	if got := Public(errors.New("dial tcp 10.0.0.3:8000: refused")); got != "dial tcp [address]: refused" {
		t.Errorf("Public = %q", got)
	}
}

func TestSnippet(t *testing.T) {
	long := strings.Repeat("é", 300)
	for _, tt := range []struct{ body, want string }{
		{"  {\"error\":\n\t\"bad key\"}  ", `{"error": "bad key"}`},
		{"<html><head><style>p{}</style><script>x()</script></head><body><h1>502 Bad Gateway</h1>\n<p>nginx</p></body></html>", "502 Bad Gateway nginx"},
		{long, strings.Repeat("é", SnippetRunes) + "…"},
		{"a < b and c > d", "a d"},
		{"", ""},
	} {
		if got := TextSnippet([]byte(tt.body)); got != tt.want {
			t.Errorf("TextSnippet(%.40q) = %q, want %q", tt.body, got, tt.want)
		}
	}
	if got := Snippet([]byte("<!DOCTYPE html>\n<html>  x")); got != "<!DOCTYPE html> <html> x" {
		t.Errorf("Snippet keeps the markup: %q", got)
	}
	if HTTPStatus(503) != "HTTP 503 Service Unavailable" || HTTPStatus(599) != "HTTP 599" {
		t.Error("HTTPStatus")
	}
}
