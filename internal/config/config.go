// Package config reads Sova's settings from SOVA_* environment variables
// (and the conventional provider names such as OPENAI_API_KEY), with the
// defaults the seed documents give. docs/configuration.md lists every one.
package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/sova-ai/sova/internal/provider"
	"github.com/sova-ai/sova/internal/provider/all"
)

// Config is every setting Sova reads at start-up.
type Config struct {
	Addr        string `env:"SOVA_ADDR" envDefault:"127.0.0.1:8080"`
	DataDir     string `env:"SOVA_DATA_DIR"`
	DatabaseURL string `env:"SOVA_DATABASE_URL"`
	RedisURL    string `env:"SOVA_REDIS_URL"`
	// Connection budget (docs/scaling.md): the most connections this node
	// opens to PostgreSQL (pool_max_conns in the URL wins) and to SQLite.
	DatabaseMaxConns int `env:"SOVA_DATABASE_MAX_CONNS" envDefault:"16"`
	SQLiteMaxConns   int `env:"SOVA_SQLITE_MAX_CONNS" envDefault:"8"`
	// Nodes sharing one PostgreSQL database (docs/scaling.md): this node's
	// name (empty: a random one per start) and how long a run stays with a
	// node that stops renewing it.
	NodeID   string        `env:"SOVA_NODE_ID"`
	RunLease time.Duration `env:"SOVA_RUN_LEASE" envDefault:"15s"`
	// MaxRunning is the most runs a node executes at once; more wait in a
	// queue their stream reports. 0: RunsPerCore for each CPU; -1: no bound.
	MaxRunning int `env:"SOVA_MAX_RUNNING" envDefault:"0"`
	// Prometheus metrics at GET /metrics (docs/scaling.md), and the Bearer
	// token a scraper must send when set.
	Metrics      bool   `env:"SOVA_METRICS" envDefault:"true"`
	MetricsToken string `env:"SOVA_METRICS_TOKEN"`
	LogLevel     string `env:"SOVA_LOG_LEVEL" envDefault:"info"`

	// Who may reach the server (access.go validates them): the address
	// people use when it is not the listen address (behind a proxy), and
	// more Host names to serve besides the loopback ones.
	PublicURL    string   `env:"SOVA_PUBLIC_URL"`
	AllowedHosts []string `env:"SOVA_ALLOWED_HOSTS" envSeparator:","`

	// Model endpoint.
	LLMBaseURL        string        `env:"SOVA_LLM_BASE_URL"`
	LLMAPIKey         string        `env:"SOVA_LLM_API_KEY"`
	OpenAIAPIKey      string        `env:"OPENAI_API_KEY"`
	OpenAIBaseURL     string        `env:"OPENAI_BASE_URL"`
	Model             string        `env:"SOVA_MODEL" envDefault:"gpt-4o-mini"`
	FastModel         string        `env:"SOVA_FAST_MODEL"`
	FallbackModel     string        `env:"SOVA_FALLBACK_MODEL"`
	LLMTimeout        time.Duration `env:"SOVA_LLM_TIMEOUT" envDefault:"60s"`
	LLMMaxRetries     int           `env:"SOVA_LLM_MAX_RETRIES" envDefault:"5"`
	StructuredRetries int           `env:"SOVA_MAX_STRUCTURED_OUTPUT_RETRIES" envDefault:"3"`
	// LLMToolCalling is how tools reach the model: auto, native or prompt.
	LLMToolCalling       string        `env:"SOVA_LLM_TOOL_CALLING" envDefault:"auto"`
	ChatMaxTokens        int           `env:"SOVA_CHAT_MAX_TOKENS" envDefault:"16384"`
	ChatHistoryLimit     int           `env:"SOVA_CHAT_HISTORY_LIMIT" envDefault:"10"`
	ChatTemperature      float64       `env:"SOVA_TEMPERATURE" envDefault:"0.3"`
	RunTimeout           time.Duration `env:"SOVA_RUN_TIMEOUT" envDefault:"5m"`
	MaxRequestBodyBytes  int64         `env:"SOVA_MAX_BODY_BYTES" envDefault:"1048576"`
	MaxQuestionChars     int           `env:"SOVA_MAX_QUESTION_CHARS" envDefault:"20000"`
	TitleGenerationOff   bool          `env:"SOVA_DISABLE_TITLES"`
	FollowUpsOff         bool          `env:"SOVA_DISABLE_FOLLOWUPS"`
	SearchProvider       string        `env:"SOVA_SEARCH_PROVIDER" envDefault:"auto"`
	SearchFallback       []string      `env:"SOVA_SEARCH_FALLBACK" envSeparator:","`
	SearXNGURL           string        `env:"SOVA_SEARXNG_URL"`
	TavilyAPIKey         string        `env:"TAVILY_API_KEY"`
	TavilyURL            string        `env:"SOVA_TAVILY_URL" envDefault:"https://api.tavily.com"`
	SearchTimeout        time.Duration `env:"SOVA_SEARCH_TIMEOUT" envDefault:"30s"`
	SearchConcurrency    int           `env:"SOVA_SEARCH_CONCURRENCY" envDefault:"4"`
	BlockedDomains       []string      `env:"SOVA_SEARCH_BLOCKED_DOMAINS" envSeparator:","`
	BlockedKeywords      []string      `env:"SOVA_SEARCH_BLOCKED_KEYWORDS" envSeparator:","`
	DeepSearchQueries    int           `env:"SOVA_DEEP_SEARCH_QUERIES" envDefault:"3"`
	SpeedMaxIterations   int           `env:"SOVA_SEARCH_MAX_ITERATIONS" envDefault:"2"`
	BalancedIterations   int           `env:"SOVA_DEEP_SEARCH_MAX_ITERATIONS" envDefault:"6"`
	DeepSearchMaxResults int           `env:"SOVA_DEEP_SEARCH_MAX_RESULTS" envDefault:"8"`
	RerankTopK           int           `env:"SOVA_DEEP_SEARCH_RERANK_TOP_K" envDefault:"6"`
	ScrapeTopN           int           `env:"SOVA_DEEP_SEARCH_SCRAPE_TOP_N" envDefault:"4"`

	// Fetcher.
	FetchAllowHosts []string      `env:"SOVA_FETCH_ALLOW_HOSTS" envSeparator:","`
	FetchMaxBytes   int64         `env:"SOVA_FETCH_MAX_BYTES" envDefault:"5242880"`
	FetchTimeout    time.Duration `env:"SOVA_FETCH_TIMEOUT" envDefault:"20s"`
	// ReadGrace: once a run has read its first page, pages still loading
	// this long after are given up (search, deep_search); 0 waits for all.
	ReadGrace         time.Duration `env:"SOVA_READ_GRACE" envDefault:"2s"`
	FetchMaxRedirects int           `env:"SOVA_FETCH_MAX_REDIRECTS" envDefault:"5"`
	ContentMaxChars   int           `env:"SOVA_CONTENT_MAX_CHARS" envDefault:"3000"`
	// The image proxy (GET /api/image): the largest image and the time
	// one may take, through the fetcher's guard.
	ImageProxyMaxBytes ByteSize      `env:"SOVA_IMAGE_PROXY_MAX_BYTES" envDefault:"5MiB"`
	ImageProxyTimeout  time.Duration `env:"SOVA_IMAGE_PROXY_TIMEOUT" envDefault:"10s"`

	// Parsing of untrusted files (PDF, DOCX, HTML; parse.go validates).
	ParseTimeout time.Duration `env:"SOVA_PARSE_TIMEOUT" envDefault:"20s"`
	ParseMemory  ByteSize      `env:"SOVA_PARSE_MEMORY" envDefault:"512MiB"`

	// Retrieval: more providers, limits, cache, reader fallback, embedding
	// rerank, deep_search breadth (retrieval.go validates them).
	ExaAPIKey          string            `env:"EXA_API_KEY"`
	ExaURL             string            `env:"SOVA_EXA_URL" envDefault:"https://api.exa.ai"`
	BraveAPIKey        string            `env:"BRAVE_API_KEY"`
	BraveURL           string            `env:"SOVA_BRAVE_URL" envDefault:"https://api.search.brave.com"`
	DuckDuckGoURL      string            `env:"SOVA_DUCKDUCKGO_URL" envDefault:"https://html.duckduckgo.com"`
	WikipediaURL       string            `env:"SOVA_WIKIPEDIA_URL" envDefault:"https://{lang}.wikipedia.org"`
	SearchLimits       map[string]string `env:"SOVA_SEARCH_LIMITS" envSeparator:"," envKeyValSeparator:"="`
	SearchCacheTTL     time.Duration     `env:"SOVA_SEARCH_CACHE_TTL" envDefault:"1h"`
	PageCacheTTL       time.Duration     `env:"SOVA_PAGE_CACHE_TTL" envDefault:"24h"`
	ReaderFallback     string            `env:"SOVA_READER_FALLBACK"`
	ReaderURL          string            `env:"SOVA_READER_URL"`
	ReaderAPIKey       string            `env:"SOVA_READER_API_KEY"`
	JinaAPIKey         string            `env:"JINA_API_KEY"`
	FirecrawlAPIKey    string            `env:"FIRECRAWL_API_KEY"`
	ReaderTimeout      time.Duration     `env:"SOVA_READER_TIMEOUT" envDefault:"40s"`
	ReaderMinChars     int               `env:"SOVA_READER_MIN_CHARS" envDefault:"100"`
	EmbedModel         string            `env:"SOVA_EMBED_MODEL"`
	EmbedBaseURL       string            `env:"SOVA_EMBED_BASE_URL"`
	EmbedAPIKey        string            `env:"SOVA_EMBED_API_KEY"`
	EmbedThreshold     float64           `env:"SOVA_EMBED_THRESHOLD" envDefault:"0.2"`
	EmbedTopK          int               `env:"SOVA_EMBED_TOP_K" envDefault:"50"`
	EmbedWeight        float64           `env:"SOVA_EMBED_WEIGHT" envDefault:"0.7"`
	BalancedRerankTopK int               `env:"SOVA_DEEP_SEARCH_SOURCES" envDefault:"12"`
	BalancedScrapeTopN int               `env:"SOVA_DEEP_SEARCH_PAGES" envDefault:"8"`

	// Deep research (seed 001 §4).
	DeepResearchNumAgents          int  `env:"SOVA_DEEP_RESEARCH_NUM_AGENTS" envDefault:"4"`
	DeepResearchMaxSupervisorCalls int  `env:"SOVA_DEEP_RESEARCH_MAX_SUPERVISOR_CALLS" envDefault:"6"`
	DeepResearchAgentMaxSteps      int  `env:"SOVA_DEEP_RESEARCH_AGENT_MAX_STEPS" envDefault:"5"`
	DeepResearchSupervisorMaxIter  int  `env:"SOVA_DEEP_RESEARCH_SUPERVISOR_MAX_ITERATIONS" envDefault:"10"`
	DeepResearchMaxIterations      int  `env:"SOVA_DEEP_RESEARCH_DEFAULT_MAX_ITERATIONS" envDefault:"15"`
	DeepResearchDeepSearchFirst    bool `env:"SOVA_DEEP_RESEARCH_RUN_DEEP_SEARCH_FIRST" envDefault:"true"`
	DeepResearchClarify            bool `env:"SOVA_DEEP_RESEARCH_ENABLE_CLARIFYING_QUESTIONS" envDefault:"true"`
	DeepResearchReflectEvery       int  `env:"SOVA_DEEP_RESEARCH_REFLECT_EVERY" envDefault:"3"`
	DeepResearchMaxReformulations  int  `env:"SOVA_DEEP_RESEARCH_MAX_REFORMULATIONS" envDefault:"5"`
	DeepResearchMemoryNotes        int  `env:"SOVA_DEEP_RESEARCH_AGENT_MEMORY_NOTES" envDefault:"10"`
	DeepResearchSupervisorFindings int  `env:"SOVA_DEEP_RESEARCH_SUPERVISOR_FINDINGS" envDefault:"15"`
	DeepResearchMinDraftChars      int  `env:"SOVA_DEEP_RESEARCH_MIN_DRAFT_CHARS" envDefault:"1000"`
	DeepResearchMinReportChars     int  `env:"SOVA_DEEP_RESEARCH_MIN_REPORT_CHARS" envDefault:"1500"`
	// DeepResearchTimeout replaces SOVA_RUN_TIMEOUT for deep_research,
	// whose runs take minutes (seed 001: 2–10).
	DeepResearchTimeout time.Duration `env:"SOVA_DEEP_RESEARCH_TIMEOUT" envDefault:"30m"`

	// The extreme mode (seed 000 §2): extreme.go validates it.
	Extreme Extreme

	// SGR agent (seed 002): limits over an agent's whole life, and how long
	// a finished agent is kept.
	SGRMaxSteps          int           `env:"SOVA_SGR_MAX_STEPS" envDefault:"6"`
	SGRMaxSearches       int           `env:"SOVA_SGR_MAX_SEARCHES" envDefault:"4"`
	SGRMaxClarifications int           `env:"SOVA_SGR_MAX_CLARIFICATIONS" envDefault:"3"`
	SGRAgentTTL          time.Duration `env:"SOVA_SGR_AGENT_TTL" envDefault:"24h"`

	// The assistant (seed 004) and its MCP servers.
	MCPConfig             string        `env:"SOVA_MCP_CONFIG"`
	MCPTimeout            time.Duration `env:"SOVA_MCP_TIMEOUT" envDefault:"30s"`
	MCPAllowHosts         []string      `env:"SOVA_MCP_ALLOW_HOSTS" envSeparator:","`
	AssistantMaxSteps     int           `env:"SOVA_ASSISTANT_MAX_STEPS" envDefault:"10"`
	AssistantPlannerSteps int           `env:"SOVA_ASSISTANT_PLANNER_MAX_STEPS" envDefault:"12"`
	AssistantTaskSubtasks int           `env:"SOVA_ASSISTANT_TASK_MAX_SUBTASKS" envDefault:"12"`
	AssistantTaskTimeout  time.Duration `env:"SOVA_ASSISTANT_TIMEOUT" envDefault:"20m"`
	STTModel              string        `env:"SOVA_STT_MODEL"`
	TTSModel              string        `env:"SOVA_TTS_MODEL"`
	TTSVoice              string        `env:"SOVA_TTS_VOICE" envDefault:"sage"`
	AudioMaxBytes         int64         `env:"SOVA_AUDIO_MAX_BYTES" envDefault:"26214400"`
	// /v1/realtime: the endpoint's Realtime model ("" or "off": every
	// voice session runs the cascade), one client message's limit, and a
	// session's longest life.
	RealtimeModel         string        `env:"SOVA_REALTIME_MODEL" envDefault:"gpt-4o-realtime-mini"`
	RealtimeMaxFrameBytes int64         `env:"SOVA_REALTIME_MAX_FRAME_BYTES" envDefault:"1048576"`
	RealtimeMaxSession    time.Duration `env:"SOVA_REALTIME_MAX_SESSION" envDefault:"30m"`
	// Run event logs: finished runs' text deltas merged after
	// RunEventsCompactAfter, their logs deleted after RunEventsRetention
	// (0: never), by the app's event sweeper.
	RunEventsCompactAfter time.Duration `env:"SOVA_RUN_EVENTS_COMPACT_AFTER" envDefault:"10m"`
	RunEventsRetention    time.Duration `env:"SOVA_RUN_EVENTS_RETENTION" envDefault:"720h"`

	// Document spaces and the docs mode (seed 003); spaces.go validates them.
	SpacesChunkChars     int           `env:"SOVA_SPACES_CHUNK_CHARS" envDefault:"1200"`
	SpacesChunkOverlap   int           `env:"SOVA_SPACES_CHUNK_OVERLAP" envDefault:"150"`
	SpacesMaxFileBytes   int64         `env:"SOVA_SPACES_MAX_FILE_BYTES" envDefault:"52428800"`
	SpacesMaxUploadBytes int64         `env:"SOVA_SPACES_MAX_UPLOAD_BYTES" envDefault:"104857600"`
	SpacesIdleClose      time.Duration `env:"SOVA_SPACES_IDLE_CLOSE" envDefault:"1m"`
	SpacesSearchTopK     int           `env:"SOVA_SPACES_SEARCH_TOP_K" envDefault:"5"`
	UserName             string        `env:"SOVA_USER_NAME"`
	DocsMaxDocQueries    int           `env:"SOVA_DOCS_MAX_DOC_QUERIES" envDefault:"5"`
	DocsMaxWebQueries    int           `env:"SOVA_DOCS_MAX_WEB_QUERIES" envDefault:"3"`
	DocsWebSearch        bool          `env:"SOVA_DOCS_WEB_SEARCH" envDefault:"false"`
	DocsResults          int           `env:"SOVA_DOCS_RESULTS" envDefault:"8"`
	DocsMaxSteps         int           `env:"SOVA_DOCS_MAX_STEPS" envDefault:"10"`
	DocsTemperature      float64       `env:"SOVA_DOCS_TEMPERATURE" envDefault:"0.6"`

	// The code sandbox (DESIGN §9): bubblewrap, the system's Python and
	// the limits of one code cell; sandbox.go validates them.
	SandboxEnabled     bool          `env:"SOVA_SANDBOX_ENABLED" envDefault:"true"`
	SandboxBwrap       string        `env:"SOVA_SANDBOX_BWRAP" envDefault:"bwrap"`
	SandboxPython      string        `env:"SOVA_SANDBOX_PYTHON" envDefault:"/usr/bin/python3"`
	SandboxCPUTime     time.Duration `env:"SOVA_SANDBOX_CPU_TIME" envDefault:"30s"`
	SandboxWallTime    time.Duration `env:"SOVA_SANDBOX_WALL_TIME" envDefault:"60s"`
	SandboxMemoryBytes ByteSize      `env:"SOVA_SANDBOX_MEMORY_BYTES" envDefault:"1GiB"`
	SandboxProcesses   int           `env:"SOVA_SANDBOX_PROCESSES" envDefault:"32"`
	SandboxOutputBytes ByteSize      `env:"SOVA_SANDBOX_OUTPUT_BYTES" envDefault:"256KiB"`
	SandboxFileBytes   ByteSize      `env:"SOVA_SANDBOX_FILE_BYTES" envDefault:"16MiB"`
	SandboxWorkBytes   ByteSize      `env:"SOVA_SANDBOX_WORK_DIR_BYTES" envDefault:"64MiB"`
	SandboxMaxFiles    int           `env:"SOVA_SANDBOX_MAX_FILES" envDefault:"16"`
	SandboxConcurrency int           `env:"SOVA_SANDBOX_CONCURRENCY" envDefault:"2"`
	SandboxUID         int           `env:"SOVA_SANDBOX_UID" envDefault:"65534"`
	SandboxGID         int           `env:"SOVA_SANDBOX_GID" envDefault:"65534"`
	// Accounts, sign-in and limits (accounts.go).
	Accounts
	// Memories and connected sources (memory.go).
	Memory     Memory
	Connectors Connectors
	// Providers are the settings of the provider packages that
	// internal/provider/all lists, read through their packages' env tags
	// and checked by the packages (provider.Get gives one back).
	Providers []provider.Settings `env:"-"`
}

// RunsPerCore is how many runs a node executes at once per CPU core when
// SOVA_MAX_RUNNING is 0. A run spends most of its time waiting for the
// model, search engines and pages; its own CPU is tens of milliseconds
// (docs/benchmarks.md).
const RunsPerCore = 64

// RunSlots is the most runs a node executes at once (0: no bound) for
// SOVA_MAX_RUNNING and the CPUs the process may use.
func (c *Config) RunSlots(cpus int) int {
	switch {
	case c.MaxRunning < 0:
		return 0
	case c.MaxRunning == 0:
		return RunsPerCore * max(cpus, 1)
	}
	return c.MaxRunning
}

// DefaultOpenAIURL is used when no endpoint is configured.
const DefaultOpenAIURL = "https://api.openai.com/v1"

// Load reads the process environment.
func Load() (*Config, error) { return FromEnv(envMap(os.Environ())) }

// FromEnv reads settings from the given variables only (tests use this so
// the process environment cannot leak in).
func FromEnv(vars map[string]string) (*Config, error) {
	vars = withAliases(vars)
	cfg, err := env.ParseAsWithOptions[Config](env.Options{Environment: vars})
	if err != nil {
		return nil, friendly(err, reflect.TypeFor[Config](), vars)
	}
	cfg.Providers = all.Settings()
	var unread []error
	for _, p := range cfg.Providers {
		if err := env.ParseWithOptions(p.Env, env.Options{Environment: vars}); err != nil {
			unread = append(unread, friendly(err, reflect.TypeOf(p.Env).Elem(), vars))
		}
	}
	if len(unread) > 0 {
		return nil, errors.Join(unread...)
	}
	if cfg.DataDir == "" {
		cfg.DataDir = defaultDataDir(vars)
	}
	if cfg.LLMAPIKey == "" {
		cfg.LLMAPIKey = cfg.OpenAIAPIKey
	}
	if cfg.LLMBaseURL == "" {
		cfg.LLMBaseURL = cfg.OpenAIBaseURL
	}
	if cfg.LLMBaseURL == "" {
		cfg.LLMBaseURL = DefaultOpenAIURL
	}
	if cfg.FastModel == "" {
		cfg.FastModel = cfg.Model
	}
	cfg.SearchProvider = strings.ToLower(strings.TrimSpace(cfg.SearchProvider))
	cfg.SearchFallback = trimAll(cfg.SearchFallback)
	cfg.BlockedDomains = trimAll(cfg.BlockedDomains)
	cfg.BlockedKeywords = trimAll(cfg.BlockedKeywords)
	cfg.FetchAllowHosts = trimAll(cfg.FetchAllowHosts)
	cfg.normalizeRetrieval()
	cfg.normalizeAccess()
	cfg.Accounts.normalize()
	cfg.normalizeMemory()
	cfg.Accounts.oidcRedirect(cfg.PublicURL)
	return &cfg, cfg.validate()
}

func (c *Config) validate() error {
	var errs []error
	positive := map[string]int{
		"SOVA_DEEP_SEARCH_QUERIES":        c.DeepSearchQueries,
		"SOVA_SEARCH_MAX_ITERATIONS":      c.SpeedMaxIterations,
		"SOVA_DEEP_SEARCH_MAX_ITERATIONS": c.BalancedIterations,
		"SOVA_DEEP_SEARCH_MAX_RESULTS":    c.DeepSearchMaxResults,
		"SOVA_DEEP_SEARCH_RERANK_TOP_K":   c.RerankTopK,
		"SOVA_DEEP_SEARCH_SCRAPE_TOP_N":   c.ScrapeTopN,
		"SOVA_SEARCH_CONCURRENCY":         c.SearchConcurrency,
		"SOVA_CHAT_HISTORY_LIMIT":         c.ChatHistoryLimit,
		"SOVA_CONTENT_MAX_CHARS":          c.ContentMaxChars,
		"SOVA_MAX_QUESTION_CHARS":         c.MaxQuestionChars,
		"SOVA_DATABASE_MAX_CONNS":         c.DatabaseMaxConns,
		"SOVA_SQLITE_MAX_CONNS":           c.SQLiteMaxConns,
	}
	for name, v := range positive {
		if v < 1 {
			errs = append(errs, fmt.Errorf("%s must be at least 1, got %d", settingName(name), v))
		}
	}
	if c.MaxRunning < -1 {
		errs = append(errs, fmt.Errorf("SOVA_MAX_RUNNING must be -1 (no bound), 0 (%d per CPU core) or more, got %d", RunsPerCore, c.MaxRunning))
	}
	if c.RunEventsCompactAfter < 0 || c.RunEventsRetention < 0 ||
		c.RunEventsRetention > 0 && c.RunEventsCompactAfter > 0 && c.RunEventsRetention < c.RunEventsCompactAfter {
		errs = append(errs, fmt.Errorf("SOVA_RUN_EVENTS_COMPACT_AFTER (%s) and SOVA_RUN_EVENTS_RETENTION (%s) must not be negative (0 turns each off), and the retention not shorter than the compaction delay",
			c.RunEventsCompactAfter, c.RunEventsRetention))
	}
	if c.SGRMaxSteps < 1 || c.SGRMaxSearches < 0 || c.SGRMaxClarifications < 0 || c.SGRAgentTTL <= 0 {
		errs = append(errs, fmt.Errorf("SOVA_SGR_MAX_STEPS must be at least 1 (got %d), SOVA_SGR_MAX_SEARCHES and SOVA_SGR_MAX_CLARIFICATIONS not negative (got %d, %d), SOVA_SGR_AGENT_TTL positive (got %s)",
			c.SGRMaxSteps, c.SGRMaxSearches, c.SGRMaxClarifications, c.SGRAgentTTL))
	}
	deepResearch := map[string]int{
		"SOVA_DEEP_RESEARCH_NUM_AGENTS":                c.DeepResearchNumAgents,
		"SOVA_DEEP_RESEARCH_MAX_SUPERVISOR_CALLS":      c.DeepResearchMaxSupervisorCalls,
		"SOVA_DEEP_RESEARCH_AGENT_MAX_STEPS":           c.DeepResearchAgentMaxSteps,
		"SOVA_DEEP_RESEARCH_SUPERVISOR_MAX_ITERATIONS": c.DeepResearchSupervisorMaxIter,
		"SOVA_DEEP_RESEARCH_DEFAULT_MAX_ITERATIONS":    c.DeepResearchMaxIterations,
		"SOVA_DEEP_RESEARCH_REFLECT_EVERY":             c.DeepResearchReflectEvery,
		"SOVA_DEEP_RESEARCH_MAX_REFORMULATIONS":        c.DeepResearchMaxReformulations,
		"SOVA_DEEP_RESEARCH_AGENT_MEMORY_NOTES":        c.DeepResearchMemoryNotes,
		"SOVA_DEEP_RESEARCH_SUPERVISOR_FINDINGS":       c.DeepResearchSupervisorFindings,
		"SOVA_DEEP_RESEARCH_MIN_DRAFT_CHARS":           c.DeepResearchMinDraftChars,
		"SOVA_DEEP_RESEARCH_MIN_REPORT_CHARS":          c.DeepResearchMinReportChars,
	}
	for name, v := range deepResearch {
		if v < 1 {
			errs = append(errs, fmt.Errorf("%s must be at least 1, got %d", settingName(name), v))
		}
	}
	// The seed's team has 1 to 5 agents; more multiplies cost and load
	// on the model endpoint for little gain.
	if c.DeepResearchNumAgents > 10 {
		errs = append(errs, fmt.Errorf("SOVA_DEEP_RESEARCH_NUM_AGENTS must be at most 10, got %d", c.DeepResearchNumAgents))
	}
	errs = append(errs, c.validateRetrieval()...)
	errs = append(errs, c.validateSpaces()...)
	errs = append(errs, c.validateMemory()...)
	errs = append(errs, c.validateSandbox()...)
	errs = append(errs, c.Extreme.validate()...)
	errs = append(errs, c.validateAccess()...)
	errs = append(errs, c.validateParse()...)
	for _, p := range c.Providers {
		if p.Check != nil {
			errs = append(errs, p.Check()...)
		}
	}
	errs = append(errs, c.Accounts.validate()...)
	if c.ReadGrace < 0 {
		errs = append(errs, fmt.Errorf("SOVA_READ_GRACE must not be negative (0 waits for every page), got %s", c.ReadGrace))
	}
	if c.LLMMaxRetries < 0 || c.StructuredRetries < 0 {
		errs = append(errs, errors.New("SOVA_LLM_MAX_RETRIES and SOVA_MAX_STRUCTURED_OUTPUT_RETRIES must not be negative"))
	}
	switch c.LLMToolCalling {
	case "auto", "native", "prompt":
	default:
		errs = append(errs, fmt.Errorf("SOVA_LLM_TOOL_CALLING must be auto, native or prompt, got %q", c.LLMToolCalling))
	}
	if c.MaxRequestBodyBytes < 1024 {
		errs = append(errs, fmt.Errorf("SOVA_MAX_BODY_BYTES must be at least 1024, got %d", c.MaxRequestBodyBytes))
	}
	return errors.Join(errs...)
}

func defaultDataDir(vars map[string]string) string {
	if d := vars["XDG_DATA_HOME"]; d != "" {
		return filepath.Join(d, "sova")
	}
	if h := vars["HOME"]; h != "" {
		return filepath.Join(h, ".local", "share", "sova")
	}
	return "sova-data"
}

func trimAll(in []string) []string {
	out := in[:0]
	for _, s := range in {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func envMap(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// friendly rewrites the parser's errors to name the variable and the value
// a person has to fix, instead of the Go field.
func friendly(err error, t reflect.Type, vars map[string]string) error {
	var agg env.AggregateError
	if !errors.As(err, &agg) {
		return fmt.Errorf("reading configuration: %w", err)
	}
	var out []error
	for _, e := range agg.Errors {
		var pe env.ParseError
		if errors.As(e, &pe) {
			if f, ok := t.FieldByName(pe.Name); ok {
				key := f.Tag.Get("env")
				out = append(out, fmt.Errorf("%s=%q is not a valid %s: %w", settingName(key), vars[key], pe.Type, pe.Err))
				continue
			}
		}
		out = append(out, e)
	}
	return fmt.Errorf("reading configuration: %w", errors.Join(out...))
}
