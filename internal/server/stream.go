package server

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/wire"
)

// keepAliveEvery is how often a quiet stream gets an SSE comment, so that
// proxies don't close it during a long step.
const keepAliveEvery = 15 * time.Second

// switchWriter starts writing nowhere and is switched to the client once
// the events the client already has were replayed into the encoder: the
// encoder then knows where the stream stands (message started, text open).
type switchWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *switchWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}

func (s *switchWriter) set(w io.Writer) {
	s.mu.Lock()
	s.w = w
	s.mu.Unlock()
}

// streamUI answers with a run's events as a UI message stream: events
// after `from` are part of this stream; of those, the ones up to `seen`
// (a Last-Event-ID) were already delivered and are replayed silently.
func (s *Server) streamUI(w http.ResponseWriter, r *http.Request, runID string, from, seen int64) {
	wire.SetUIStreamHeaders(w.Header())
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	sw := &switchWriter{w: io.Discard}
	live := false
	flush := func() {
		if live {
			_ = rc.Flush()
		}
	}
	if seen <= from {
		sw.set(w)
		live = true
	}
	var mu sync.Mutex // guards stream, which a message boundary replaces while keep-alives ping
	stream := wire.NewUIStream(sw, flush)
	current := func() *wire.UIStream {
		mu.Lock()
		defer mu.Unlock()
		return stream
	}
	stop := s.keepAlive(func() error { return current().KeepAlive() })
	defer stop()
	err := s.opt.Service.Follow(r.Context(), runID, from, func(e event.Event) error {
		if !live && e.Seq > seen {
			sw.set(w)
			live = true
		}
		if err := current().Emit(s.safeEvent(runID, e)); err != nil && !errors.Is(err, wire.ErrInvalidEvent) {
			return err // the client is gone
		}
		if !live && e.Type == event.TypeFinish {
			// A run that paused for the person and was answered logs a
			// message per part. A client resuming after this finish had
			// the message it ends whole, and goes on with the next one
			// (its client reconnecting with Last-Event-ID is told how the
			// answered part ended).
			mu.Lock()
			stream = wire.NewUIStream(sw, flush)
			mu.Unlock()
		}
		return nil
	})
	if err != nil && r.Context().Err() == nil {
		s.opt.Logger.Warn("stream ended early", "run", runID, "err", err)
	}
	sw.set(w)
	_ = current().Close()
}

// keepAlive calls ping every keepAliveEvery until the returned stop is
// called; stop waits for the pinging goroutine.
func (s *Server) keepAlive(ping func() error) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(keepAliveEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if ping() != nil {
					return
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// lastEventID reads where a client left a stream: the Last-Event-ID header
// (sent by EventSource on reconnect) or ?after=N.
func lastEventID(r *http.Request) (int64, bool) {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("after")
	}
	if v == "" {
		return 0, true
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil && n >= 0
}

// chatStream resumes the stream of a chat's latest run: events after
// Last-Event-ID, then live ones; a finished run replays its whole message.
// A chat of the user's without runs answers 204, as AI SDK clients expect;
// a chat that does not exist (or is another user's) is a 404.
func (s *Server) chatStream(w http.ResponseWriter, r *http.Request) {
	seen, ok := lastEventID(r)
	if !ok {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_last_event_id", "Last-Event-ID must be a non-negative number")
		return
	}
	run, err := s.opt.Store.LatestRun(r.Context(), userID(r), r.PathValue("id"))
	if errors.Is(err, sova.ErrNotFound) {
		if _, err := s.opt.Store.GetChat(r.Context(), userID(r), r.PathValue("id")); err != nil {
			s.storeError(w, r, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	s.streamUI(w, r, run.ID, 0, seen)
}
