package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"syscall"
	"testing"

	"github.com/sova-ai/sova/internal/egress"
	"github.com/sova-ai/sova/internal/errtext"
	"github.com/sova-ai/sova/internal/event"
)

// TestUpstreamFailuresOnTheOneMapping: the failures of a service a
// request needed (a run's model endpoint on /v1, the assistant's agent,
// the voice service) answer through the one mapping: a cancelled request
// is a 499, never a 5xx; a dead endpoint a 503; anything else a 502 whose
// text names no address and no Go error of the network.
func TestUpstreamFailuresOnTheOneMapping(t *testing.T) {
	s := New(Options{})
	leaky := fmt.Errorf("model endpoint: %w", &url.Error{Op: "Post", URL: "http://10.9.8.7:8000/v1/chat/completions",
		Err: &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(10, 9, 8, 7), Port: 8000}, Err: syscall.ECONNREFUSED}})
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name   string
		ctx    context.Context
		err    error
		status int
	}{
		{"cancelled request", cancelled, fmt.Errorf("run: %w", context.Canceled), StatusClientClosedRequest},
		{"endpoint paused", context.Background(), fmt.Errorf("model endpoint: %w", &egress.OpenError{Endpoint: "model endpoint", Failures: 4}), http.StatusServiceUnavailable},
		{"leaky failure", context.Background(), leaky, http.StatusBadGateway},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil).WithContext(tt.ctx)
			s.upstreamFailure(w, r, tt.err, "run_failed", "the run")
			body := w.Body.String()
			if w.Code != tt.status {
				t.Errorf("status %d, want %d (%s)", w.Code, tt.status, body)
			}
			for _, bad := range []string{"10.9.8.7", "dial tcp", "Post \"", "8000", "[address]"} {
				if strings.Contains(body, bad) {
					t.Errorf("the answer carries %q: %s", bad, body)
				}
			}
		})
	}
}

// An error event or a failed tool's result whose text shows SQL, an
// address or Go's words reaches no stream: the server's words and an
// error id go instead; text written for the person passes unchanged.
func TestStreamEventsCarryNoInternals(t *testing.T) {
	s := New(Options{})
	leaky := `store: append event: pq: INSERT INTO run_events VALUES ($1): dial tcp 10.9.8.7:5432: connect: connection refused`
	e := s.safeEvent("r1", event.Event{Type: event.TypeError, Error: &event.Error{Message: leaky, Code: "x"}})
	if e.Error.Message == leaky || !strings.Contains(e.Error.Message, "error id") || errtext.Internal(e.Error.Message) || e.Error.Code != "x" {
		t.Errorf("error event: %+v", e.Error)
	}
	e = s.safeEvent("r1", event.Event{Type: event.TypeToolResult, ToolResult: &event.ToolResult{ID: "t1", Error: "sql: database is closed", Text: "Failed: sql: database is closed"}})
	if strings.Contains(e.ToolResult.Error+e.ToolResult.Text, "sql:") || !strings.Contains(e.ToolResult.Error, "error id") {
		t.Errorf("tool result: %+v", e.ToolResult)
	}
	fine := "the model endpoint answered 503 Service Unavailable: overloaded (error id 0123456789ab)"
	if e := s.safeEvent("r1", event.Event{Type: event.TypeError, Error: &event.Error{Message: fine}}); e.Error.Message != fine {
		t.Errorf("a person's message changed: %q", e.Error.Message)
	}
}
