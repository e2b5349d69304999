// Package server is Sova's HTTP API: the AI SDK UI message stream endpoint,
// the OpenAI-compatible endpoint, chats and health. A middleware (user.go)
// learns from the request whom it acts for and puts the user in its
// context; handlers read it from there and only translate between HTTP and
// the run service; errors leave as JSON
// {"error":{"message","type","code"}} with the matching status.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/auth"
	"github.com/sova-ai/sova/internal/connectors"
	"github.com/sova-ai/sova/internal/imageproxy"
	"github.com/sova-ai/sova/internal/limits"
	"github.com/sova-ai/sova/internal/mcp"
	"github.com/sova-ai/sova/internal/memory"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/run"
	"github.com/sova-ai/sova/internal/spaces"
	"github.com/sova-ai/sova/internal/voice"
)

// Options configure the server.
type Options struct {
	Service *run.Service
	Store   interface {
		sova.ChatStore
		sova.RunStore
		sova.AgentStore
		GetDocument(ctx context.Context, userID, spaceID, docID string) (*sova.Document, error)
		Ping(ctx context.Context) error
	}
	// Redis is the Redis the nodes share (SOVA_REDIS_URL); nil when there
	// is none. /readyz reports it.
	Redis interface {
		Ping(ctx context.Context) error
	}
	// Auth tells whom each request is for (user.go); nil refuses every
	// request that needs a user.
	Auth auth.Authenticator
	// Accounts serves sign-in and sign-out (session.go); nil answers them
	// 404 (SOVA_AUTH=none).
	Accounts     *auth.Accounts
	Logger       *slog.Logger
	MaxBodyBytes int64
	Version      string
	// Spaces serves /api/spaces (spaces.go); nil leaves them out.
	Spaces         *spaces.Service
	MaxUploadBytes int64 // SOVA_SPACES_MAX_UPLOAD_BYTES: one upload request
	MaxFileBytes   int64 // SOVA_SPACES_MAX_FILE_BYTES: one uploaded file
	// Memory serves /api/memories, Connectors a space's connected source
	// (memories.go); nil leaves them out.
	Memory     memory.Service
	Connectors *connectors.Service
	// Who may reach the server (guard.go): SOVA_PUBLIC_URL,
	// SOVA_ALLOWED_HOSTS and the listen address. Loopback names are always
	// served.
	PublicURL    string
	AllowedHosts []string
	Addr         string
	// Assistant serves /api/supervisor and /api/tasks/execute
	// (assistant.go); MCPServers and MCPAdmin /api/mcp/servers. Nil leaves
	// them out.
	Assistant  Assistant
	MCPServers sova.MCPServerStore
	MCPAdmin   []mcp.Server
	// MCPCheckURL, when set, checks a server's address when a user adds
	// it (the egress guard of users' servers): a refusal is a 400.
	MCPCheckURL func(ctx context.Context, rawURL string) error
	// Voice serves /api/audio/* (voice.go); nil: off.
	Voice         *voice.Client
	MaxAudioBytes int64 // SOVA_AUDIO_MAX_BYTES
	// Realtime serves the WebSocket /v1/realtime (realtime.go); nil: 404.
	Realtime http.Handler
	// Images serves GET /api/image (image.go); nil answers it 404.
	Images *imageproxy.Proxy
	// Limits tells GET /api/me what the person's limits leave (limits.go);
	// the run service enforces them. Nil: no limits.
	Limits *limits.Limiter
	// ProFeatures keeps connectors and custom instructions for pro
	// accounts and administrators (SOVA_PRO_FEATURES, access.go).
	ProFeatures bool
	// Settings keeps each person's settings (GET/PUT /api/me, settings.go);
	// Models lists the endpoint's models (GET /api/models). Nil: none.
	Settings sova.SettingsStore
	Models   ModelLister
	// Usage is read by the admin's usage report (usage.go); nil: 404.
	Usage UsageReader
	// OIDC is single sign-on (oidc.go); nil without.
	OIDC *auth.OIDC
	// Metrics serves GET /metrics to anyone who reaches the server, or,
	// when MetricsToken is set, to requests bearing it (metrics.go); nil
	// answers it 404 (SOVA_METRICS=false).
	Metrics      http.Handler
	MetricsToken string
	// Setup reports what the start-up checks of the model endpoint found
	// wrong (setup.go); GET /api/modes passes it on to the UI's banner.
	// Nil: nothing checked.
	Setup SetupChecker
	// Shares keeps share links (share.go); nil: off (SOVA_SHARE_LINKS).
	Shares sova.ShareStore
	// MaxShareLinks caps one person's live share links (SOVA_SHARE_LINKS_MAX;
	// 0: no cap).
	MaxShareLinks int
}

// Server serves the API.
type Server struct {
	opt     Options
	mux     *http.ServeMux
	handler http.Handler // mux behind the guard (guard.go)
}

// New returns a Server.
func New(opt Options) *Server {
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if opt.Auth == nil {
		opt.Auth = auth.Func(func(*http.Request) (sova.User, error) { return sova.User{}, auth.ErrUnauthenticated })
	}
	if opt.MaxBodyBytes <= 0 {
		opt.MaxBodyBytes = 1 << 20
	}
	s := &Server{opt: opt, mux: http.NewServeMux()}
	s.routes()
	s.handler = newGuard(opt, validText(s.mux, opt.MaxBodyBytes))
	return s
}

func (s *Server) routes() {
	// For anyone: the health check, and the browser UI's page and files
	// (a JSON 404 for unknown /api/ and /v1/ paths).
	s.mux.HandleFunc("GET /healthz", s.health)
	s.mux.HandleFunc("GET /readyz", s.ready)
	s.metricsRoute() // metrics.go
	s.mux.Handle("/", s.ui())
	// Everything else acts for the request's user (user.go).
	s.handle("GET /api/modes", s.listModes)
	s.handle("GET /api/providers", s.listProviders) // providers.go
	s.handle("GET /api/image", s.image)             // image.go
	s.handle("POST /api/search", s.search)
	s.handle("GET /api/chats", s.listChats)
	s.handle("GET /api/chats/{id}", s.getChat)
	s.handle("DELETE /api/chats/{id}", s.deleteChat)
	s.handle("GET /api/chats/{id}/stream", s.chatStream)
	s.handle("PATCH /api/chats/{id}", s.renameChat)         // chat_extra.go
	s.handle("GET /api/chats/{id}/export.md", s.exportChat) // chat_extra.go
	s.handle("GET /api/passages", s.passage)                // chat_extra.go
	s.handle("GET /api/runs/{id}", s.getRun)
	s.handle("GET /api/runs/{id}/stream", s.runStream)
	s.handle("POST /api/runs/{id}/cancel", s.cancelRun)
	s.handle("POST /api/runs/{id}/restart", s.restartRun)
	s.handle("GET /api/runs/{id}/files", s.listRunFiles)
	s.handle("GET /api/runs/{id}/files.zip", s.exportRunFiles)
	s.handle("GET /api/runs/{id}/files/{path...}", s.getRunFile)
	s.handle("GET /api/runs/{id}/report.md", s.runReportMarkdown)
	s.handle("GET /api/runs/{id}/report.pdf", s.runReportPDF)
	s.handle("GET /v1/models", s.models)
	s.handle("POST /v1/chat/completions", s.chatCompletions)
	s.handle("GET /agents", s.listAgents)
	s.handle("GET /agents/{id}/state", s.getAgentState)
	s.spaceRoutes()
	s.personalRoutes()  // memories.go
	s.sessionRoutes()   // session.go
	s.oidcRoutes()      // oidc.go
	s.assistantRoutes() // assistant.go
	s.voiceRoutes()     // voice.go
	s.shareRoutes()     // share.go
	s.realtimeRoute()   // realtime.go
}

// ServeHTTP implements http.Handler: panics become 500s and every request
// is logged once.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rw := &statusWriter{ResponseWriter: w}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.opt.Logger.Error("handler panic", "method", r.Method, "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
			if !rw.wrote {
				writeError(rw, http.StatusInternalServerError, "server_error", "internal", "internal error")
			}
		}
		s.opt.Logger.Debug("request", "method", r.Method, "path", r.URL.Path, "status", rw.status, "duration", time.Since(start))
	}()
	s.handler.ServeHTTP(rw, r)
}

// statusWriter remembers the status for the log and whether anything was
// written; it passes Flush through via Unwrap for http.ResponseController.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.status, w.wrote = http.StatusOK, true
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// apiError is the JSON error body.
type apiError struct {
	Error apiErrorBody `json:"error"`
}

type apiErrorBody struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    string `json:"code"`
}

func writeError(w http.ResponseWriter, status int, typ, code, msg string) {
	writeJSON(w, status, apiError{Error: apiErrorBody{Message: msg, Type: typ, Code: code}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// decode reads a JSON body under the size limit, answering the error
// itself when it fails.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if !requireJSON(w, r) {
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.opt.MaxBodyBytes)
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			writeError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "body_too_large",
				"request body is larger than the limit of "+itoa(tooBig.Limit)+" bytes (SOVA_MAX_BODY_BYTES)")
		default:
			writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_json", jsonProblem(err))
		}
		return false
	}
	return true
}

// jsonProblem says what is wrong with a JSON body in the person's words:
// where its syntax breaks, or which field has the wrong type; never
// encoding/json's own text, which names Go types.
func jsonProblem(err error) string {
	var (
		syntax *json.SyntaxError
		typ    *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syntax):
		return "request body is not valid JSON (at byte " + itoa(syntax.Offset) + ")"
	case errors.As(err, &typ) && typ.Field != "":
		return "request body: the field \"" + typ.Field + "\" must be " + jsonKind(typ.Type.Kind().String()) + ", not " + typ.Value
	case errors.As(err, &typ):
		return "request body must be " + jsonKind(typ.Type.Kind().String()) + ", not " + typ.Value
	case errors.Is(err, io.EOF):
		return "request body is empty: send a JSON object"
	}
	return "request body is not valid JSON"
}

// jsonKind names a Go kind as JSON does.
func jsonKind(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float32", "float64":
		return "a number"
	}
	return "of another type"
}

// runError maps a validation error from the run service to a response.
func (s *Server) runError(w http.ResponseWriter, r *http.Request, err error, unknownCode string) {
	if rateLimited(w, r, err) { // limits.go
		return
	}
	bad := func(code, fallback string) {
		s.refuse(w, r, http.StatusBadRequest, "invalid_request_error", code, err, fallback)
	}
	switch {
	case errors.Is(err, run.ErrUnknownMode):
		bad(unknownCode, "unknown mode")
	case errors.Is(err, run.ErrDecision):
		bad("invalid_decision", "invalid decision")
	case errors.Is(err, run.ErrEmptyQuestion):
		bad("empty_messages", run.ErrEmptyQuestion.Error())
	case errors.Is(err, run.ErrNothingToRegenerate):
		bad("nothing_to_regenerate", run.ErrNothingToRegenerate.Error())
	case errors.Is(err, run.ErrTooLong):
		bad("question_too_long", run.ErrTooLong.Error())
	case errors.Is(err, run.ErrInvalidChatID):
		bad("invalid_chat_id", run.ErrInvalidChatID.Error())
	case errors.Is(err, run.ErrRunInProgress):
		writeError(w, http.StatusConflict, "invalid_request_error", "run_in_progress",
			"this chat has a run in progress; wait for it to end (GET /api/chats/{id}/stream) or cancel it (POST /api/runs/{id}/cancel), then ask again")
	case errors.Is(err, sova.ErrNotFound), errors.Is(err, sova.ErrConflict):
		// A chat id that is someone else's looks exactly like one that
		// does not exist.
		writeError(w, http.StatusNotFound, "not_found", "chat_not_found", "no such chat")
	default:
		s.failure(w, r, err, "starting the run")
	}
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	if err := s.opt.Store.Ping(r.Context()); err != nil {
		if cancelled(r.Context(), err) {
			w.WriteHeader(StatusClientClosedRequest)
			return
		}
		s.opt.Logger.Warn("health check: the store does not answer", "err", err)
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "store": "unavailable"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "version": s.opt.Version})
}

// ready answers whether this node should get traffic and run work: the
// store (and Redis, when shared) answers and the node takes part in running runs (it renews its
// run leases and is not stopping). A load balancer stops sending requests
// to a node that is not ready, e.g. while it drains on SIGTERM.
func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	checks := map[string]string{"store": "ok", "runs": "ok"}
	ok := true
	if err := s.opt.Store.Ping(r.Context()); err != nil {
		s.opt.Logger.Warn("readiness: the store does not answer", "err", err)
		checks["store"], ok = "unavailable", false
	}
	if err := s.opt.Service.Ready(); err != nil {
		// The leases' error names the store: for the log only.
		s.opt.Logger.Warn("readiness: this node does not run runs", "err", err)
		checks["runs"], ok = "unavailable", false
	}
	if s.opt.Redis != nil {
		checks["redis"] = "ok"
		if err := s.opt.Redis.Ping(r.Context()); err != nil {
			// The error names Redis's address: for the log only.
			s.opt.Logger.Warn("readiness: Redis does not answer", "err", err)
			checks["redis"], ok = "unavailable", false
		}
	}
	if r.Context().Err() != nil {
		// The probe went away: what failed is its own leaving.
		w.WriteHeader(StatusClientClosedRequest)
		return
	}
	status, code := "ok", http.StatusOK
	if !ok {
		status, code = "unavailable", http.StatusServiceUnavailable
	}
	writeJSON(w, code, map[string]any{"status": status, "node": s.opt.Service.NodeID(), "checks": checks})
}

func (s *Server) listModes(w http.ResponseWriter, r *http.Request) {
	type modeInfo struct {
		ID          string `json:"id"`
		Description string `json:"description"`
		// Withdrawn says why a group none of whose tools can run here is
		// not offered (setup.go).
		Withdrawn string `json:"withdrawn,omitempty"`
	}
	var out []modeInfo
	for _, m := range s.opt.Service.Modes().All() {
		if u, ok := m.(mode.Unlisted); ok && u.Unlisted() {
			continue
		}
		out = append(out, modeInfo{m.ID(), m.Description(), withdrawnReason(m)})
	}
	body := map[string]any{"modes": out}
	if p := s.setupProblems(); len(p) > 0 {
		body["setup"] = p
	}
	writeJSON(w, http.StatusOK, body)
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
