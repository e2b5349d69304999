package doctor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/doctor"
	"github.com/sova-ai/sova/internal/sandbox"
	"github.com/sova-ai/sova/internal/sovatest"
)

// setup is a good setup: a model endpoint that wants the key and lists the
// configured models, a SearXNG, a fresh data directory.
type setup struct {
	model *sovatest.Model
	sx    *sovatest.SearXNG
	env   map[string]string
}

func newSetup(t *testing.T) *setup {
	t.Helper()
	arts := sovatest.DefaultArticles()
	s := &setup{model: sovatest.NewModel(t)}
	s.sx = sovatest.NewSearXNG(t, sovatest.NewSite(t, arts), arts)
	s.model.SetModels("main-model", "fast-model", "other-model")
	s.model.RequireKey("test-key")
	s.env = sovatest.Env(s.model, s.sx, t.TempDir())
	return s
}

func (s *setup) config(t *testing.T, kv ...string) *config.Config {
	t.Helper()
	env := map[string]string{}
	for k, v := range s.env {
		env[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		env[kv[i]] = kv[i+1]
	}
	cfg, err := config.FromEnv(env)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// sandboxPresent answers as a sandbox that runs.
func sandboxPresent(context.Context, *config.Config) (string, error) {
	return "bubblewrap 0.11.0, Python 3.11.2 with numpy 1.24.2, pandas 1.5.3, matplotlib 3.6.3", nil
}

var opts = doctor.Options{Timeout: 5 * time.Second, Sandbox: sandboxPresent}

// refusedURL is a base URL on whose port nothing listens.
func refusedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return "http://" + addr + "/v1"
}

func text(t *testing.T, r doctor.Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func find(t *testing.T, r doctor.Report, name string) doctor.Check {
	t.Helper()
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %q in\n%s", name, text(t, r))
	return doctor.Check{}
}

func TestGoodSetup(t *testing.T) {
	s := newSetup(t)
	cfg := s.config(t)
	r := doctor.Run(context.Background(), cfg, opts)
	out := text(t, r)
	if !r.OK {
		t.Fatalf("a good setup failed:\n%s", out)
	}
	wantLines := []string{
		"✓ model endpoint: " + s.model.URL() + " answers (3 models)",
		"✓ API key: accepted",
		"✓ main model: main-model is served",
		"✓ fast model: fast-model is served",
		`✓ web search: searxng: answered "open source" with 3 results`,
		"✓ data directory: " + cfg.DataDir + " is writable",
		"✓ database: SQLite " + filepath.Join(cfg.DataDir, "sova.db") + " opens, schema up to date",
		"✓ code sandbox (optional): available (bubblewrap 0.11.0, Python 3.11.2 with numpy 1.24.2, pandas 1.5.3, matplotlib 3.6.3)",
		"All required checks passed.",
	}
	var got []string // the tools' lines are TestToolChecks'
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.Contains(l, " tool ") {
			got = append(got, l)
		}
	}
	if strings.Join(got, "\n") != strings.Join(wantLines, "\n") {
		t.Errorf("report:\n%s\nwant:\n%s", out, strings.Join(wantLines, "\n"))
	}
	if len(s.sx.Queries()) != 1 {
		t.Errorf("SearXNG got %d queries, want 1", len(s.sx.Queries()))
	}
	if s.model.Count() != 0 {
		t.Errorf("the check made %d chat calls, want none", s.model.Count())
	}
	if _, err := os.Stat(filepath.Join(cfg.DataDir, "sova.db")); err != nil {
		t.Errorf("database not created: %v", err)
	}

	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var decoded struct {
		OK     bool
		Checks []map[string]any
	}
	if err := json.Unmarshal(b.Bytes(), &decoded); err != nil || !decoded.OK || len(decoded.Checks) != len(r.Checks) ||
		decoded.Checks[0]["name"] != "model endpoint" || decoded.Checks[0]["status"] != "ok" || decoded.Checks[0]["required"] != true {
		t.Errorf("JSON %s (%v)", b.String(), err)
	}
}

func TestUnreachableEndpoint(t *testing.T) {
	s := newSetup(t)
	cfg := s.config(t, "SOVA_LLM_BASE_URL", refusedURL(t))
	start := time.Now()
	r := doctor.Run(context.Background(), cfg, opts)
	elapsed := time.Since(start)
	out := text(t, r)
	if r.OK || len(r.Failed()) != 1 {
		t.Fatalf("want one failure:\n%s", out)
	}
	ep := find(t, r, doctor.CheckEndpoint)
	if ep.Status != doctor.Fail || !strings.HasPrefix(ep.Line(), "✗ model endpoint: "+cfg.LLMBaseURL+" cannot be reached: connection refused — fix: is the server running? set SOVA_LLM_BASE_URL") {
		t.Errorf("endpoint line: %s", ep.Line())
	}
	for _, name := range []string{doctor.CheckKey, doctor.CheckModel, doctor.CheckFastModel} {
		if c := find(t, r, name); c.Status != doctor.Skip || !strings.HasPrefix(c.Line(), "– "+name+": not checked") {
			t.Errorf("%s: %s", name, c.Line())
		}
	}
	if c := find(t, r, "web search: searxng"); c.Status != doctor.OK {
		t.Errorf("search: %s", c.Line())
	}
	if !strings.HasSuffix(out, "1 required check failed.\n") {
		t.Errorf("summary:\n%s", out)
	}
	if elapsed > 3*time.Second {
		t.Errorf("took %s", elapsed)
	}
}

func TestModelEndpointProblems(t *testing.T) {
	s := newSetup(t)
	tests := []struct {
		name  string
		kv    []string
		check string
		want  string
	}{
		{"key refused", []string{"SOVA_LLM_API_KEY", "wrong-key"}, doctor.CheckKey,
			"✗ API key: the endpoint refused the key (401 Unauthorized): Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys. — fix: set SOVA_LLM_API_KEY or OPENAI_API_KEY"},
		{"no key", []string{"SOVA_LLM_API_KEY", ""}, doctor.CheckKey,
			"✗ API key: no key is set and the endpoint asks for one (401 Unauthorized) — fix: set SOVA_LLM_API_KEY or OPENAI_API_KEY"},
		{"main model not served", []string{"SOVA_MODEL", "gpt-9"}, doctor.CheckModel,
			"✗ main model: gpt-9 is not among the 3 models the endpoint lists — fix: set SOVA_MODEL to one of: fast-model, main-model, other-model"},
		{"fast model not served", []string{"SOVA_FAST_MODEL", "tiny"}, doctor.CheckFastModel,
			"✗ fast model: tiny is not among the 3 models the endpoint lists — fix: set SOVA_FAST_MODEL to one of: fast-model, main-model, other-model"},
		{"base URL without /v1", []string{"SOVA_LLM_BASE_URL", strings.TrimSuffix(s.model.URL(), "/v1")}, doctor.CheckEndpoint,
			"✗ model endpoint: GET " + strings.TrimSuffix(s.model.URL(), "/v1") + "/models answered 404 Not Found: this is not the base URL of an OpenAI-compatible API — fix: check SOVA_LLM_BASE_URL: it usually ends in /v1"},
		{"unresolvable host", []string{"SOVA_LLM_BASE_URL", "http://model.sova-test.invalid/v1"}, doctor.CheckEndpoint,
			"✗ model endpoint: http://model.sova-test.invalid/v1 cannot be reached: no such host — fix: check the host name in SOVA_LLM_BASE_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if strings.Contains(tt.name, "unresolvable") {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				var dnsErr *net.DNSError
				if _, err := net.DefaultResolver.LookupHost(ctx, "model.sova-test.invalid"); !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
					t.Skipf("this machine's resolver does not answer NXDOMAIN for .invalid: %v", err)
				}
			}
			r := doctor.NewReport(doctor.Model(context.Background(), s.config(t, tt.kv...), opts))
			if r.OK {
				t.Fatalf("passed:\n%s", text(t, r))
			}
			if got := find(t, r, tt.check).Line(); got != tt.want {
				t.Errorf("line\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestFallbackModelIsOptional(t *testing.T) {
	s := newSetup(t)
	r := doctor.NewReport(doctor.Model(context.Background(), s.config(t, "SOVA_FALLBACK_MODEL", "spare"), opts))
	c := find(t, r, doctor.CheckFallback)
	if !r.OK || c.Status != doctor.Fail || !strings.HasPrefix(c.Line(), "✗ fallback model (optional): spare is not among") {
		t.Errorf("fallback: %s\n%s", c.Line(), text(t, r))
	}
	// Ollama lists "name:latest" for "name".
	s.model.SetModels("main-model:latest", "fast-model")
	if r := doctor.NewReport(doctor.Model(context.Background(), s.config(t), opts)); !r.OK {
		t.Errorf("name:latest not matched:\n%s", text(t, r))
	}
}

func TestSearchProblems(t *testing.T) {
	s := newSetup(t)
	s.sx.Fail.Store(http.StatusForbidden)
	r := doctor.NewReport(doctor.Search(context.Background(), s.config(t), opts))
	c := find(t, r, "web search: searxng")
	if r.OK || c.Status != doctor.Fail || !c.Required || !strings.Contains(c.Line(), "— fix: check SOVA_SEARXNG_URL") {
		t.Errorf("failing SearXNG: %s", text(t, r))
	}

	// With a fallback provider that answers, the failing one is optional.
	tavily := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"query":"q","results":[{"title":"T","url":"https://example.com/a","content":"c","score":0.5}]}`))
	}))
	t.Cleanup(tavily.Close)
	r = doctor.NewReport(doctor.Search(context.Background(), s.config(t, "SOVA_SEARCH_FALLBACK", "tavily",
		"TAVILY_API_KEY", "tvly-test", "SOVA_TAVILY_URL", tavily.URL), opts))
	out := text(t, r)
	if !r.OK || !strings.Contains(out, "✗ web search: searxng (optional): ") || !strings.Contains(out, `✓ web search: tavily: answered "open source" with 1 result`) {
		t.Errorf("with a fallback:\n%s", out)
	}

	r = doctor.NewReport(doctor.Search(context.Background(), s.config(t, "SOVA_SEARCH_PROVIDER", "brave"), opts))
	if out := text(t, r); r.OK || !strings.Contains(out, "✗ web search: the brave search provider needs BRAVE_API_KEY — fix: ") {
		t.Errorf("unconfigured provider:\n%s", out)
	}
}

func TestStorageProblems(t *testing.T) {
	s := newSetup(t)
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r := doctor.NewReport(doctor.Storage(context.Background(), s.config(t, "SOVA_DATA_DIR", file)))
	out := text(t, r)
	if r.OK || len(r.Failed()) != 2 || !strings.Contains(out, "✗ data directory: ") || !strings.Contains(out, "— fix: set SOVA_DATA_DIR") ||
		!strings.Contains(out, "✗ database: SQLite ") {
		t.Errorf("a file as data directory:\n%s", out)
	}
	r = doctor.NewReport(doctor.Storage(context.Background(), s.config(t, "SOVA_DATABASE_URL", "mysql://u:secret@h/db")))
	if out := text(t, r); r.OK || strings.Contains(out, "secret") || !strings.Contains(out, "fix: use a postgres:// URL") {
		t.Errorf("unsupported database URL:\n%s", out)
	}
}

func TestSandbox(t *testing.T) {
	s := newSetup(t)
	cfg := s.config(t)
	// The sandbox's own reasons, with their fixes, as sandbox.New gives them.
	missing := func(ctx context.Context, _ *config.Config) (string, error) {
		_, err := sandbox.New(ctx, sandbox.Config{Bwrap: "/nonexistent/bwrap"})
		return "", err
	}
	noNamespaces := func(context.Context, *config.Config) (string, error) {
		return "", &sandbox.UnavailableError{Reason: "bubblewrap cannot set up the sandbox here: bwrap: No permissions to create a new namespace", Fix: "allow unprivileged user namespaces"}
	}
	for _, tt := range []struct {
		start func(context.Context, *config.Config) (string, error)
		want  string
	}{
		{missing, "✗ code sandbox (optional): unavailable: bubblewrap (/nonexistent/bwrap) is not installed — fix: install bubblewrap"},
		{noNamespaces, "✗ code sandbox (optional): unavailable: bubblewrap cannot set up the sandbox here: bwrap: No permissions to create a new namespace — fix: allow unprivileged user namespaces"},
	} {
		c := doctor.Sandbox(context.Background(), cfg, doctor.Options{Sandbox: tt.start})
		if !strings.HasPrefix(c.Line(), tt.want) || c.Required {
			t.Errorf("line %s\nwant %s", c.Line(), tt.want)
		}
		if r := doctor.NewReport([]doctor.Check{c}); !r.OK {
			t.Error("an unavailable sandbox failed the report")
		}
	}
	c := doctor.Sandbox(context.Background(), s.config(t, "SOVA_SANDBOX_ENABLED", "false"), doctor.Options{})
	if c.Line() != "– code sandbox (optional): turned off (SOVA_SANDBOX_ENABLED=false)" {
		t.Errorf("turned off: %s", c.Line())
	}
	// The real sandbox, whatever this machine has: bubblewrap really runs.
	c = doctor.Sandbox(context.Background(), cfg, doctor.Options{})
	t.Logf("this machine: %s", c.Line())
	_, lookErr := exec.LookPath("bwrap")
	switch {
	case c.Status == doctor.OK:
		if !strings.HasPrefix(c.Detail, "available (bubblewrap ") || !strings.Contains(c.Detail, "numpy") {
			t.Errorf("sandbox: %s", c.Line())
		}
	case c.Status != doctor.Fail || !strings.HasPrefix(c.Detail, "unavailable: ") || c.Fix == "":
		t.Errorf("sandbox: %s", c.Line())
	case lookErr != nil && !strings.Contains(c.Detail, "bubblewrap (bwrap) is not installed"):
		t.Errorf("without bwrap: %s", c.Line())
	}
}

func TestAtStart(t *testing.T) {
	s := newSetup(t)
	logs := func(cfg *config.Config) string {
		var b bytes.Buffer
		doctor.AtStart(context.Background(), cfg, slog.New(slog.NewTextHandler(&b, nil)), opts)
		return b.String()
	}
	if out := logs(s.config(t)); out != "" {
		t.Errorf("a good endpoint logged:\n%s", out)
	}
	out := logs(s.config(t, "SOVA_LLM_BASE_URL", refusedURL(t)))
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, "level=WARN") || !strings.Contains(out, "MODEL ENDPOINT NOT USABLE") ||
		!strings.Contains(out, "connection refused") || !strings.Contains(out, `fix="is the server running? set SOVA_LLM_BASE_URL"`) {
		t.Errorf("unreachable endpoint logged:\n%s", out)
	}
	out = logs(s.config(t, "SOVA_MODEL", "gpt-9", "SOVA_FAST_MODEL", "gpt-9-mini"))
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, "main model: gpt-9 is not among") || !strings.Contains(out, "fast model: gpt-9-mini") ||
		!strings.Contains(out, "set SOVA_MODEL to one of") {
		t.Errorf("unknown models logged:\n%s", out)
	}
	out = logs(s.config(t, "SOVA_LLM_API_KEY", "wrong"))
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, "refused the key") || !strings.Contains(out, "set SOVA_LLM_API_KEY or OPENAI_API_KEY") {
		t.Errorf("refused key logged:\n%s", out)
	}
	// Search that answers nowhere is reported as well, apart from the model.
	cfg := s.config(t, "SOVA_SEARXNG_URL", refusedURL(t))
	var b bytes.Buffer
	r := doctor.AtStart(context.Background(), cfg, slog.New(slog.NewTextHandler(&b, nil)), opts)
	out = b.String()
	failed := r.Failed()
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, "WEB SEARCH NOT USABLE") || !strings.Contains(out, "SOVA_SEARXNG_URL") ||
		len(failed) != 1 || !strings.HasPrefix(failed[0].Name, doctor.CheckSearch) || !strings.Contains(failed[0].Fix, "SOVA_SEARXNG_URL") {
		t.Errorf("unusable search: %+v logged:\n%s", failed, out)
	}
}

// With nothing configured Sova asks OpenAI without a key: the fix names
// both ways out. Another endpoint that wants a key gets the plain fix.
func TestFirstRunWithoutKey(t *testing.T) {
	openai := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":{"message":"You didn't provide an API key.","type":"invalid_request_error","param":null,"code":null}}`))
	}))
	t.Cleanup(openai.Close)
	// Every connection, TLS ones included, goes to the local stand-in,
	// which speaks plain HTTP: a connection from DialTLSContext is taken
	// as already secured.
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, openai.Listener.Addr().String())
	}
	client := &http.Client{Transport: &http.Transport{DialContext: dial, DialTLSContext: dial}}
	cfg, err := config.FromEnv(map[string]string{"HOME": t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.LLMBaseURL != config.DefaultOpenAIURL || cfg.LLMAPIKey != "" {
		t.Fatalf("defaults: %q, key %q", cfg.LLMBaseURL, cfg.LLMAPIKey)
	}
	r := doctor.NewReport(doctor.Model(context.Background(), cfg, doctor.Options{HTTPClient: client}))
	want := "✗ API key: no key is set and the endpoint asks for one (401 Unauthorized) — fix: set OPENAI_API_KEY, or SOVA_LLM_BASE_URL to another endpoint (Ollama: http://localhost:11434/v1)"
	if got := find(t, r, doctor.CheckKey).Line(); got != want {
		t.Errorf("the default endpoint:\n%s\nwant\n%s", got, want)
	}
	cfg.LLMBaseURL = "https://llm.example.com/v1"
	r = doctor.NewReport(doctor.Model(context.Background(), cfg, doctor.Options{HTTPClient: client}))
	if got := find(t, r, doctor.CheckKey).Line(); !strings.HasSuffix(got, "— fix: set SOVA_LLM_API_KEY or OPENAI_API_KEY") {
		t.Errorf("another endpoint: %s", got)
	}
}

// Without SOVA_FAST_MODEL the fast model is the main one: one line says
// whether it is served, the other refers to it.
func TestFastModelSameAsMain(t *testing.T) {
	s := newSetup(t)
	r := doctor.NewReport(doctor.Model(context.Background(), s.config(t, "SOVA_FAST_MODEL", ""), opts))
	if got := find(t, r, doctor.CheckFastModel).Line(); !r.OK || got != "✓ fast model: same as the main model" {
		t.Errorf("fast model: %s\n%s", got, text(t, r))
	}
	r = doctor.NewReport(doctor.Model(context.Background(), s.config(t, "SOVA_MODEL", "gpt-9", "SOVA_FAST_MODEL", ""), opts))
	if got := find(t, r, doctor.CheckFastModel).Line(); len(r.Failed()) != 1 || got != "– fast model: not checked: same as the main model" {
		t.Errorf("fast model: %s\n%s", got, text(t, r))
	}
}

// The search groups' tools: available with their provider and groups, or
// withdrawn with the setting that enables them; optional either way.
func TestToolChecks(t *testing.T) {
	s := newSetup(t)
	r := doctor.Run(context.Background(), s.config(t), opts)
	if !r.OK {
		t.Fatalf("withdrawn tools failed the setup:\n%s", text(t, r))
	}
	for name, want := range map[string]string{
		"tool web_search":         "✓ tool web_search (optional): chain(searxng) · in web",
		"tool academic_search":    "✓ tool academic_search (optional): openalex+arxiv · in academic; EXA_API_KEY switches to Exa's research-paper search",
		"tool x_search":           "✗ tool x_search (optional): withdrawn: needs XAI_API_KEY · in x — fix: set XAI_API_KEY",
		"tool track_flight":       "✗ tool track_flight (optional): withdrawn: needs AVIATIONSTACK_API_KEY · in web — fix: set AVIATIONSTACK_API_KEY",
		"tool movie_or_tv_search": "✗ tool movie_or_tv_search (optional): withdrawn: needs TMDB_API_KEY · in web — fix: set TMDB_API_KEY",
		"tool datetime":           "✓ tool datetime (optional): clock · in web, academic, youtube, reddit, stocks, crypto, memory, connectors",
		"tool text_translate":     "✓ tool text_translate (optional): the fast model · in web",
		"tool search_memories":    "✓ tool search_memories (optional): built-in · in memory; SUPERMEMORY_API_KEY keeps the memories in Supermemory instead",
		"tool connectors_search":  "✓ tool connectors_search (optional): connected spaces · in connectors",
	} {
		if got := find(t, r, name).Line(); got != want {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
	s.env["AVIATIONSTACK_API_KEY"] = "k"
	s.env["XAI_API_KEY"] = "k"
	r = doctor.Run(context.Background(), s.config(t), opts)
	if c := find(t, r, "tool track_flight"); c.Status != doctor.OK || c.Detail != "aviationstack · in web" {
		t.Errorf("with a key: %s", c.Line())
	}
	if c := find(t, r, "tool x_search"); c.Status != doctor.OK {
		t.Errorf("with a key: %s", c.Line())
	}
}
