// Package apitest runs local HTTP servers that stand in for data providers
// in tests: each answers with a scripted status, headers and body (usually
// a fixture from testdata/ in the provider's documented shape) and records
// the requests it received.
package apitest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// Reply is one scripted answer.
type Reply struct {
	Status int               // 0 means 200
	Body   string            // sent as is
	Header map[string]string // extra response headers
	// Delay holds the answer back this long, or until the client gives up.
	Delay time.Duration
}

// Request is what the server received.
type Request struct {
	Method string
	Path   string // unescaped path
	Raw    string // escaped path as sent
	Query  url.Values
	Header http.Header
	Body   []byte
}

// Server is a recording fake provider.
type Server struct {
	*httptest.Server

	mu   sync.Mutex
	reqs []Request
}

// New starts a server that answers each request with reply(request) and
// is closed when the test ends.
func New(t testing.TB, reply func(r *http.Request) Reply) *Server {
	t.Helper()
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, Request{
			Method: r.Method,
			Path:   r.URL.Path,
			Raw:    r.URL.EscapedPath(),
			Query:  r.URL.Query(),
			Header: r.Header.Clone(),
			Body:   body,
		})
		s.mu.Unlock()

		rep := reply(r)
		if rep.Delay > 0 {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(rep.Delay):
			}
		}
		for k, v := range rep.Header {
			w.Header().Set(k, v)
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
		}
		status := rep.Status
		if status == 0 {
			status = http.StatusOK
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, rep.Body)
	}))
	t.Cleanup(s.Close)
	return s
}

// Always starts a server that gives every request the same reply.
func Always(t testing.TB, rep Reply) *Server {
	return New(t, func(*http.Request) Reply { return rep })
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Fixture returns the content of testdata/name.
func Fixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return string(b)
}

// Documented fails the test unless every env tag of the struct cfg names a
// variable that the Markdown file at docPath lists as `NAME`.
func Documented(t testing.TB, cfg any, docPath string) {
	t.Helper()
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatalf("documentation: %v", err)
	}
	typ := reflect.TypeOf(cfg)
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("env"), ",")
		if name == "" {
			continue
		}
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("%s (%s.%s) is not in %s", name, typ.Name(), typ.Field(i).Name, docPath)
		}
	}
}
