// Package apitest runs local fakes of third-party APIs for the provider
// packages' tests: an httptest server that answers with scripted replies
// (usually a fixture from testdata/ in the provider's documented shape) and
// records every request it received.
package apitest

import (
	"errors"
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

	"github.com/sova-ai/sova/internal/apiclient"
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

// ByPath returns a route that answers a request for one of the paths in
// replies with that path's reply, and any other request with other.
func ByPath(replies map[string]Reply, other Reply) func(*http.Request) Reply {
	return func(r *http.Request) Reply {
		if rep, ok := replies[r.URL.Path]; ok {
			return rep
		}
		return other
	}
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

// WantError fails the test unless err is an *apiclient.Error with the HTTP
// status (0 when no answer arrived) whose text holds every part; it
// returns that *apiclient.Error.
func WantError(t testing.TB, err error, status int, parts ...string) *apiclient.Error {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	var e *apiclient.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %T is not an *Error: %v", err, err)
	}
	if e.Status != status {
		t.Errorf("Status = %d, want %d (%v)", e.Status, status, err)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
	return e
}

// ErrorCheck returns a WantError that also fails the test when the error's
// text shows one of secrets.
func ErrorCheck(secrets ...string) func(t testing.TB, err error, status int, parts ...string) {
	return func(t testing.TB, err error, status int, parts ...string) {
		t.Helper()
		WantError(t, err, status, parts...)
		for _, s := range secrets {
			if strings.Contains(err.Error(), s) {
				t.Errorf("error shows the key: %v", err)
			}
		}
	}
}
