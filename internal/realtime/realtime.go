// Package realtime serves /v1/realtime: a WebSocket that speaks the OpenAI
// Realtime API (client events session.update, input_audio_buffer.*,
// conversation.item.create, response.create/cancel; server events with
// audio and transcript deltas, function calls and errors, in the GA or the
// beta names), so the official SDKs' Realtime clients talk to Sova as to
// OpenAI, with Sova's accounts and keys.
//
// Behind the socket one of two paths answers. When the model endpoint
// speaks Realtime (SOVA_REALTIME_MODEL), Sova holds an upstream Realtime
// session and plays the seed's three voice agents on it, running every
// function call itself (upstream.go). Otherwise it runs a cascade:
// speech-to-text on each committed turn, the mode as text, text-to-speech
// per sentence as the answer streams (cascade.go).
package realtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/mode/assistant"
	"github.com/sova-ai/sova/internal/run"
	"github.com/sova-ai/sova/internal/voice"
)

// Config is what the endpoint needs.
type Config struct {
	Runs  *run.Service
	Voice *voice.Client // the cascade's speech-to-text and text-to-speech
	// Upstream is the model endpoint's Realtime API; Model "" turns the
	// upstream path off (every session runs the cascade).
	Upstream Upstream
	// Assistant gives the upstream session the seed's agents, tools and
	// gate; Chats keeps what is said there like typed messages.
	Assistant *assistant.Mode
	Chats     ChatWriter
	// Limiter counts each of the person's turns on the upstream path
	// against their limits, as a run is counted (the cascade's turns are
	// runs, counted by Runs); nil: none.
	Limiter run.Limiter
	// MaxFrameBytes bounds one client message (SOVA_REALTIME_MAX_FRAME_BYTES);
	// a bigger one closes the socket with 1009.
	MaxFrameBytes int64
	// MaxAudioBytes bounds the PCM of one turn (SOVA_AUDIO_MAX_BYTES).
	MaxAudioBytes int64
	// MaxSession ends a session after this long (SOVA_REALTIME_MAX_SESSION).
	MaxSession time.Duration
	Logger     *slog.Logger
}

// Upstream is the model endpoint's Realtime API.
type Upstream struct {
	BaseURL string // the OpenAI-compatible endpoint, ending in /v1
	APIKey  string
	Model   string // SOVA_REALTIME_MODEL
	Voice   string // SOVA_TTS_VOICE (sage)
	// TranscribeModel transcribes the person's turns for the chat
	// (SOVA_STT_MODEL, else gpt-4o-mini-transcribe).
	TranscribeModel string
}

// ChatWriter keeps a voice conversation in the chat.
type ChatWriter interface {
	GetChat(ctx context.Context, userID, chatID string) (*sova.Chat, error)
	CreateChat(ctx context.Context, c *sova.Chat) error
	AddMessage(ctx context.Context, userID string, m *sova.Message) error
}

// Handler serves /v1/realtime.
type Handler struct {
	cfg Config
	// noUpstream remembers that the endpoint refused a Realtime session,
	// so later sessions go to the cascade at once.
	noUpstream atomic.Bool
}

// New returns the handler.
func New(cfg Config) *Handler {
	if cfg.MaxFrameBytes <= 0 {
		cfg.MaxFrameBytes = 1 << 20
	}
	if cfg.MaxAudioBytes <= 0 {
		cfg.MaxAudioBytes = 15 << 20
	}
	if cfg.MaxSession <= 0 {
		cfg.MaxSession = 30 * time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Upstream.TranscribeModel == "" {
		cfg.Upstream.TranscribeModel = "gpt-4o-mini-transcribe"
	}
	if cfg.Upstream.Voice == "" {
		cfg.Upstream.Voice = "sage"
	}
	return &Handler{cfg: cfg}
}

// KeyProtocol is the subprotocol prefix browsers carry the API key in
// (they cannot set Authorization on a WebSocket).
const KeyProtocol = "openai-insecure-api-key."

// KeyFromProtocols returns the key a browser put in Sec-WebSocket-Protocol.
func KeyFromProtocols(h http.Header) string {
	for _, v := range h.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(v, ",") {
			if k, ok := strings.CutPrefix(strings.TrimSpace(p), KeyProtocol); ok {
				return k
			}
		}
	}
	return ""
}

// ServeHTTP upgrades the request of an authenticated user (the server's
// middleware put them in the context) to a Realtime session.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	user, ok := sova.UserFrom(r.Context())
	if !ok || user.ID == "" {
		http.Error(w, `{"error":{"message":"unauthenticated","type":"authentication_error","code":"unauthenticated"}}`, http.StatusUnauthorized)
		return
	}
	model := r.URL.Query().Get("model")
	if model == "" || model == h.cfg.Upstream.Model || strings.Contains(model, "realtime") {
		model = "assistant" // clients name OpenAI's models; the assistant answers them
	}
	if h.cfg.Runs != nil && !slices.Contains(h.cfg.Runs.Modes().Listed(), model) {
		writeErr(w, http.StatusBadRequest, "model_not_found", "unknown model "+clip(model, 60)+": one of "+strings.Join(h.cfg.Runs.Modes().Listed(), ", "))
		return
	}
	chatID := r.URL.Query().Get("chat")
	if chatID == "" {
		chatID = newID("rt")
	} else if len(chatID) > 100 || strings.ContainsAny(chatID, "/?# ") {
		writeErr(w, http.StatusBadRequest, "invalid_chat", "invalid chat id")
		return
	}
	dialect := GA
	if strings.Contains(r.Header.Get("OpenAI-Beta"), "realtime=v1") || strings.Contains(r.Header.Get("Sec-WebSocket-Protocol"), "openai-beta.realtime-v1") {
		dialect = Beta
	}
	// Accept checks Origin against Host: a page of another site cannot
	// open a session with the visitor's cookie.
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"realtime"}})
	if err != nil {
		return // Accept answered
	}
	conn.SetReadLimit(h.cfg.MaxFrameBytes)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), h.cfg.MaxSession)
	defer cancel()
	s := &session{h: h, conn: conn, user: user, chatID: chatID, model: model, out: make(chan []byte, 256), done: make(chan struct{})}
	s.dialect.Store(int32(dialect))
	s.serve(ctx, cancel)
}

func writeErr(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"message": msg, "type": "invalid_request_error", "code": code}})
}

// session is one client connection. The reader (serve's goroutine) reads
// client events and hands them to the backend; one writer goroutine owns
// writes to the socket; the backend owns the goroutines of its turns. All
// end with the session's context, and serve waits for them.
type session struct {
	h       *Handler
	conn    *websocket.Conn
	user    sova.User
	chatID  string
	model   string
	dialect atomic.Int32
	out     chan []byte
	done    chan struct{} // closed when the writer stops
	ids     atomic.Int64
	voice   atomic.Value // string: the voice the client asked for
}

// backend answers a session's client events.
type backend interface {
	// handle acts on one event; it must not block on a turn.
	handle(ctx context.Context, ev ClientEvent)
	// close waits for the backend's goroutines once ctx is cancelled.
	close()
	// describe is the session object of session.created/updated.
	describe() map[string]any
}

func (s *session) serve(ctx context.Context, cancel context.CancelFunc) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.write(ctx, cancel)
	}()
	b := s.backend(ctx)
	s.send(ctx, map[string]any{"type": "session.created", "session": b.describe()})
	err := s.read(ctx, b)
	cancel()
	b.close()
	wg.Wait()
	var ce websocket.CloseError
	switch {
	case errors.As(err, &ce):
		// The client closed, or Sova did for a frame over the limit.
		_ = s.conn.Close(websocket.StatusNormalClosure, "")
	case errors.Is(err, context.DeadlineExceeded):
		_ = s.conn.Close(websocket.StatusGoingAway, "the session reached its time limit")
	default:
		s.conn.CloseNow()
	}
}

// backend chooses the path: the upstream Realtime session when the
// endpoint has one (and the assistant answers), else the cascade.
func (s *session) backend(ctx context.Context) backend {
	up := s.h.cfg.Upstream
	if up.Model != "" && s.model == "assistant" && s.h.cfg.Assistant != nil && !s.h.noUpstream.Load() {
		b, err := dialUpstream(ctx, s)
		if err == nil {
			return b
		}
		if errors.Is(err, errNoRealtime) {
			s.h.noUpstream.Store(true)
			s.h.cfg.Logger.Info("the model endpoint has no Realtime API; voice sessions run the cascade", "err", err)
		} else {
			s.h.cfg.Logger.Warn("the upstream Realtime session failed; this session runs the cascade", "err", err)
		}
	}
	return newCascade(ctx, s)
}

func (s *session) read(ctx context.Context, b backend) error {
	for {
		typ, data, err := s.conn.Read(ctx)
		if err != nil {
			return err
		}
		if typ != websocket.MessageText {
			s.fail(ctx, &ProtocolError{Code: "invalid_frame", Message: "events are JSON text frames"})
			continue
		}
		ev, err := ParseClientEvent(data)
		if err != nil {
			s.fail(ctx, err)
			continue
		}
		if ev.Type == "session.update" {
			s.dialect.Store(int32(ev.Session.dialect(Dialect(s.dialect.Load()))))
			if v := ev.Session.voice(); v != "" {
				s.voice.Store(v)
			}
		}
		b.handle(ctx, ev)
	}
}

// write owns the socket's writes.
func (s *session) write(ctx context.Context, cancel context.CancelFunc) {
	defer close(s.done)
	for {
		select {
		case <-ctx.Done():
			return
		case b := <-s.out:
			wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
			err := s.conn.Write(wctx, websocket.MessageText, b)
			wcancel()
			if err != nil {
				cancel()
				return
			}
		}
	}
}

// send queues a server event (its type in GA form, renamed for the
// client's dialect) with a fresh event_id.
func (s *session) send(ctx context.Context, ev map[string]any) {
	if t, ok := ev["type"].(string); ok {
		ev["type"] = eventName(Dialect(s.dialect.Load()), t)
	}
	ev["event_id"] = s.id("event")
	b, err := json.Marshal(ev)
	if err != nil {
		return
	}
	select {
	case s.out <- b:
	case <-ctx.Done():
	case <-s.done:
	}
}

// fail sends an error event.
func (s *session) fail(ctx context.Context, err error) {
	pe := &ProtocolError{Code: "server_error", Message: err.Error()}
	typ := "server_error"
	if errors.As(err, &pe) {
		typ = "invalid_request_error"
	}
	e := map[string]any{"type": typ, "code": pe.Code, "message": pe.Message}
	if pe.EventID != "" {
		e["event_id"] = pe.EventID
	}
	s.send(ctx, map[string]any{"type": "error", "error": e})
}

func (s *session) id(prefix string) string {
	return fmt.Sprintf("%s_%s%d", prefix, s.chatID, s.ids.Add(1))
}

func (s *session) voiceName(def string) string {
	if v, ok := s.voice.Load().(string); ok && v != "" {
		return v
	}
	return def
}

func newID(prefix string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}
