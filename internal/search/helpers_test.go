package search

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"
)

// reply is one scripted answer of a test server.
type reply struct {
	status int
	body   string
	header map[string]string
	delay  time.Duration
}

// recorded is what the test server saw of one request.
type recorded struct {
	method string
	path   string
	query  url.Values
	header http.Header
	body   []byte
}

// scriptServer answers the n-th request with replies[n] (the last reply
// repeats) and records every request.
type scriptServer struct {
	*httptest.Server
	mu      sync.Mutex
	replies []reply
	reqs    []recorded
}

func newScriptServer(t *testing.T, replies ...reply) *scriptServer {
	t.Helper()
	s := &scriptServer{replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.reqs)
		s.reqs = append(s.reqs, recorded{
			method: r.Method, path: r.URL.Path, query: r.URL.Query(),
			header: r.Header.Clone(), body: body,
		})
		rep := s.replies[min(n, len(s.replies)-1)]
		s.mu.Unlock()

		if rep.delay > 0 {
			select {
			case <-time.After(rep.delay):
			case <-r.Context().Done():
				return
			}
		}
		for k, v := range rep.header {
			w.Header().Set(k, v)
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(rep.status)
		_, _ = io.WriteString(w, rep.body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *scriptServer) requests() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recorded(nil), s.reqs...)
}

// fast keeps retries quick in tests.
func fast() Option { return WithRetryBackoff(time.Millisecond) }
