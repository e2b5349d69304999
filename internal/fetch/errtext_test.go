package fetch

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/sova-ai/sova/internal/errtext"
)

// closedURL is the URL of a port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + ln.Addr().String()
	_ = ln.Close()
	return u
}

// A page that cannot be read is shown to the person (the page's failed
// part, the tool's result): the error names the page, not the addresses
// on the way to it — what its host resolved to, the proxy, the reader
// service. The log gets them, one line per failed read.
func TestErrorsNameNoAddress(t *testing.T) {
	srv := serve(t, staticPage("text/plain", []byte("internal secret")))
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	proxy := closedURL(t)
	service := closedURL(t)

	tests := []struct {
		name    string
		read    func(log *slog.Logger) error
		want    string
		private []string // in the log, not in the text
	}{
		{"name resolving to loopback", func(log *slog.Logger) error {
			f := newTestFetcher(t, Config{AllowHosts: []string{}, Logger: log})
			countDials(f, map[string]string{"rebind.example:" + port: srv.Listener.Addr().String()})
			_, err := f.Fetch(context.Background(), "http://rebind.example:"+port+"/")
			return err
		}, "fetch http://rebind.example:" + port + "/: refused to connect to rebind.example: it resolves to a loopback address; if it must be reachable, add \"rebind.example\" to SOVA_FETCH_ALLOW_HOSTS",
			[]string{"rebind.example resolved to 127.0.0.1"}},
		{"proxy down", func(log *slog.Logger) error {
			f := newTestFetcher(t, Config{Proxy: proxy, Logger: log})
			_, err := f.Fetch(context.Background(), "http://example.com/page")
			return err
		}, "fetch http://example.com/page: cannot reach the proxy: connection refused",
			[]string{strings.TrimPrefix(proxy, "http://")}},
		{"reader service down", func(log *slog.Logger) error {
			ext, err := NewExternalReader(ExternalConfig{Service: ReaderJina, BaseURL: service, Logger: log,
				HTTPClient: &http.Client{}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = ext.Fetch(context.Background(), "https://example.com/page")
			return err
		}, "jina reader: https://example.com/page: connection refused",
			[]string{"at " + service}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			err := tt.read(slog.New(slog.NewTextHandler(&logs, nil)))
			if err == nil {
				t.Fatal("want an error")
			}
			msg := err.Error()
			if msg != tt.want {
				t.Errorf("error\n %q\nwant\n %q", msg, tt.want)
			}
			if strings.Contains(msg, "127.0.0.1") {
				t.Errorf("error %q shows an address", msg)
			}
			out := logs.String()
			if strings.Count(out, "\n") != 1 {
				t.Errorf("want one log line, got:\n%s", out)
			}
			for _, p := range tt.private {
				if !strings.Contains(errtext.Detail(err), p) || !strings.Contains(out, p) {
					t.Errorf("detail %q or log %q lacks %q", errtext.Detail(err), out, p)
				}
			}
		})
	}
}
