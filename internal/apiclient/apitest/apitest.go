// Package apitest runs local fakes of third-party APIs for the provider
// packages' tests: an httptest server that answers with scripted replies
// (usually a fixture from testdata/ in the provider's documented shape) and
// records every request it received.
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
	Body   string            // the answer body
	Header map[string]string // extra headers; Content-Type defaults to JSON
	Delay  time.Duration     // wait before answering (ends early when the client gives up)
}

// Request is what the server saw of one request.
type Request struct {
	Method string
	Path   string // unescaped path
	Raw    string // escaped path, as sent
	Query  url.Values
	Header http.Header
	Body   []byte
}

// Server is a fake API.
type Server struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []Request
}

// New starts a server that answers each request with route(r); it is closed
// when the test ends.
func New(t testing.TB, route func(r *http.Request) Reply) *Server {
	t.Helper()
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, Request{
			Method: r.Method, Path: r.URL.Path, Raw: r.URL.EscapedPath(), Query: r.URL.Query(),
			Header: r.Header.Clone(), Body: body,
		})
		s.mu.Unlock()

		rep := route(r)
		if rep.Delay > 0 {
			select {
			case <-time.After(rep.Delay):
			case <-r.Context().Done():
				return
			}
		}
		for k, v := range rep.Header {
			w.Header().Set(k, v)
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
		}
		if rep.Status == 0 {
			rep.Status = http.StatusOK
		}
		w.WriteHeader(rep.Status)
		_, _ = io.WriteString(w, rep.Body)
	}))
	t.Cleanup(s.Close)
	return s
}

// Always returns a route that answers every request with rep.
func Always(rep Reply) func(*http.Request) Reply {
	return func(*http.Request) Reply { return rep }
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
