package search

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/sova-ai/sova/internal/errtext"
)

// A provider's error reaches the people who use Sova (a failed query in
// the stream, a tool's result): it says which provider failed and why,
// never where it lives, nor the addresses a proxy in front of it names.
// The chain's log gets one line per failed call, with the address.
func TestErrorsNameNoAddress(t *testing.T) {
	answering := newScriptServer(t,
		reply{status: 502, body: "upstream connect error: dial tcp 10.20.30.40:8080: connection refused"},
		reply{status: 502, body: "upstream connect error: dial tcp 10.20.30.40:8080: connection refused"},
		reply{status: 200, body: "<html>SearXNG at http://searxng.internal:8080</html>"})
	closed := newScriptServer(t)
	closedURL := closed.URL
	closed.Close()

	tests := []struct {
		name, base, want string
	}{
		{"error answer", answering.URL, "searxng: the service answered HTTP 502 Bad Gateway: upstream connect error: dial tcp [address]: connection refused"},
		{"not JSON", answering.URL, `searxng: the answer is not valid JSON (is SOVA_SEARXNG_URL a SearXNG instance?); it starts with "<html>SearXNG at [address]</html>"`},
		{"refused", closedURL, "searxng: cannot reach the service: connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			chain := NewChain(NewSearXNG(tt.base, nil, fast()))
			chain.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			_, err := chain.WithFailover(nil).Search(t.Context(), Query{Text: "q"})
			if err == nil {
				t.Fatal("want an error")
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.want) {
				t.Errorf("error %q lacks %q", msg, tt.want)
			}
			host := strings.TrimPrefix(tt.base, "http://")
			for _, addr := range []string{host, "127.0.0.1", "10.20.30.40", "searxng.internal", "http://"} {
				if strings.Contains(msg, addr) {
					t.Errorf("error %q shows %q", msg, addr)
				}
			}
			if d := errtext.Detail(err); !strings.Contains(d, "searxng at "+tt.base) {
				t.Errorf("detail %q lacks the address", d)
			}
			out := logs.String()
			if strings.Count(out, "\n") != 1 || !strings.Contains(out, "search provider failed") || !strings.Contains(out, tt.base) {
				t.Errorf("want one log line with the address, got:\n%s", out)
			}
		})
	}
}
