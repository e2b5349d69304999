// Package app assembles Sova from its configuration: the model client, the
// search providers, the fetcher, the store, the modes and the run service.
// `sova serve` and `sova ask` both start from here.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"github.com/sova-ai/sova/internal/auth"
	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/connectors"
	"github.com/sova-ai/sova/internal/fetch"
	"github.com/sova-ai/sova/internal/imageproxy"
	"github.com/sova-ai/sova/internal/limits"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mcp"
	"github.com/sova-ai/sova/internal/memory"
	"github.com/sova-ai/sova/internal/metrics"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/mode/assistant"
	"github.com/sova-ai/sova/internal/mode/chat"
	"github.com/sova-ai/sova/internal/mode/research"
	searchmode "github.com/sova-ai/sova/internal/mode/search"
	"github.com/sova-ai/sova/internal/mode/sgr"
	"github.com/sova-ai/sova/internal/realtime"
	"github.com/sova-ai/sova/internal/run"
	"github.com/sova-ai/sova/internal/search"
	"github.com/sova-ai/sova/internal/spaces"
	"github.com/sova-ai/sova/internal/store"
	"github.com/sova-ai/sova/internal/tools"
	"github.com/sova-ai/sova/internal/voice"
	"github.com/sova-ai/sova/internal/webcache"
)

// App is an assembled Sova.
type App struct {
	Config  *config.Config
	Store   store.Store
	Service *run.Service
	Model   *llm.Client
	Logger  *slog.Logger
	// WebCache keeps search answers and read pages (its Stats count hits).
	WebCache *webcache.Cache
	// Spaces are the document spaces (spaces.go).
	Spaces *spaces.Service
	// Auth tells the server whom each request is for (auth.go): the local
	// user while no account exists (SOVA_AUTH empty) or always
	// (SOVA_AUTH=none); the accounts otherwise.
	Auth auth.Authenticator
	// Accounts signs people in and out; nil with SOVA_AUTH=none.
	Accounts *auth.Accounts
	// Memory keeps people's memories (personal.go); Connectors keeps
	// connected spaces in sync: periodically once the server calls its
	// Start, until Close.
	Memory     memory.Service
	Connectors *connectors.Service
	// Images fetches remote images for the page (GET /api/image) through
	// the fetcher's guard.
	Images *imageproxy.Proxy
	// OIDC signs people in through SOVA_OIDC_ISSUER (auth.go); nil without.
	OIDC *auth.OIDC
	// Limits admits runs under SOVA_LIMIT_* (limits.go).
	Limits *limits.Limiter
	// shared is what the nodes hold together through Redis (limits.go).
	shared shared

	// Assistant is the assistant mode (seed 004), also serving
	// /api/supervisor and /api/tasks/execute; MCP its servers' client.
	Assistant *assistant.Mode
	MCP       *mcp.Client
	// Voice transcribes and speaks through the endpoint; nil when off.
	Voice *voice.Client
	// Realtime serves /v1/realtime (voice sessions); nil without a model.
	Realtime *realtime.Handler
	// Metrics counts runs, model and search calls and page reads for
	// GET /metrics; nil with SOVA_METRICS=false.
	Metrics *metrics.Metrics

	agentSweeper *sgr.Sweeper    // evicts old finished agents (SOVA_SGR_AGENT_TTL)
	eventSweeper *EventSweeper   // compacts and expires finished runs' event logs (eventsweeper.go)
	notifier     clusterNotifier // nil on SQLite
}

// New assembles Sova. Close releases what it opened.
func New(ctx context.Context, cfg *config.Config, logger *slog.Logger) (_ *App, err error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// With SOVA_REDIS_URL the nodes share the limits, the search
	// providers' slots and rates (limits.go).
	sh, err := openShared(ctx, cfg, logger)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = sh.close()
		}
	}()
	var mtr *metrics.Metrics
	if cfg.Metrics {
		mtr = metrics.New()
	}
	model, err := llm.New(llm.Config{
		BaseURL:              cfg.LLMBaseURL,
		APIKey:               cfg.LLMAPIKey,
		Model:                cfg.Model,
		FastModel:            cfg.FastModel,
		FallbackModel:        cfg.FallbackModel,
		Timeout:              cfg.LLMTimeout,
		MaxRetries:           cfg.LLMMaxRetries,
		MaxStructuredRetries: cfg.StructuredRetries,
		ToolCalling:          cfg.LLMToolCalling,
		Logger:               logger,
		Metrics:              mtr,
	})
	if err != nil {
		return nil, fmt.Errorf("model client: %w", err)
	}
	fast := model.Fast()

	chain, err := providers(cfg, sh.coordinator(), logger) // retrieval.go
	if err != nil {
		// Chat works without search; the search modes report the problem
		// when they are used, so a missing setting doesn't stop the server.
		logger.Warn("web search is not configured", "err", err)
		chain = search.NewChain(unavailable{err})
	}
	chain.Logger = logger // failed provider calls, with the addresses errors leave out
	chain.Metrics = mtr
	redirects := cfg.FetchMaxRedirects
	if redirects == 0 {
		redirects = -1 // SOVA_FETCH_MAX_REDIRECTS=0 means follow none
	}
	fcfg := fetch.Config{
		AllowHosts:   cfg.FetchAllowHosts,
		MaxBytes:     cfg.FetchMaxBytes,
		Timeout:      cfg.FetchTimeout,
		MaxRedirects: redirects,
		MaxChars:     cfg.ContentMaxChars,
		Parse:        ParseLimits(cfg),
		Logger:       logger,
		Metrics:      mtr,
	}
	if err := fcfg.Validate(); err != nil {
		return nil, fmt.Errorf("SOVA_FETCH_ALLOW_HOSTS: %w", err)
	}
	fetcher := fetch.New(fcfg)

	st, err := store.OpenPool(ctx, cfg.DatabaseURL, cfg.DataDir, store.Pool{Postgres: cfg.DatabaseMaxConns, SQLite: cfg.SQLiteMaxConns})
	if err != nil {
		return nil, fmt.Errorf("opening the store: %w", err)
	}
	retr, err := newRetrieval(ctx, cfg, chain, fetcher, st, logger) // retrieval.go
	if err != nil {
		_ = st.Close()
		return nil, err
	}

	// The code sandbox is started once (its probe takes a second or so);
	// where it cannot run, code_interpreter is withdrawn with the reason.
	sb, sbErr := Sandbox(ctx, cfg)
	if sbErr != nil {
		logger.Info("the code sandbox is not available; code_interpreter is withdrawn", "err", sbErr)
	}

	block := search.BlockList{Domains: cfg.BlockedDomains, Keywords: cfg.BlockedKeywords}
	searchCfg := func(id, desc string, iterations int, words string) searchmode.Config {
		return searchmode.Config{
			ID: id, Description: desc,
			Queries: cfg.DeepSearchQueries, Iterations: iterations, MaxResults: cfg.DeepSearchMaxResults,
			RerankTopK: cfg.RerankTopK, ScrapeTopN: cfg.ScrapeTopN, Concurrency: cfg.SearchConcurrency,
			ReadGrace: cfg.ReadGrace, AnswerWords: words, BlockList: block, HistoryLimit: cfg.ChatHistoryLimit,
			Temperature: cfg.ChatTemperature, MaxTokens: cfg.ChatMaxTokens, Reranker: retr.reranker,
		}
	}
	// deep_research runs deep_search first, for context.
	deepCfg := searchCfg("deep_search", "Deeper web search: the search pipeline with more iterations and sources, cited answer of 800–1200 words.", cfg.BalancedIterations, "800-1200")
	deepCfg.RerankTopK, deepCfg.ScrapeTopN = cfg.BalancedRerankTopK, cfg.BalancedScrapeTopN
	deepSearch := searchmode.New(deepCfg, model, fast, chain, retr.reader)
	docSpaces, err := OpenSpaces(cfg, st, retr.embed, logger) // spaces.go
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	asst, mcpClient, err := newAssistant(cfg, model, fast, st, docSpaces, chain, logger) // assistant.go
	if err != nil {
		_ = docSpaces.Close()
		_ = st.Close()
		return nil, err
	}
	mem, err := Memories(cfg, st) // personal.go
	if err != nil {
		_ = docSpaces.Close()
		_ = st.Close()
		return nil, fmt.Errorf("memories: %w", err)
	}
	personal := tools.Providers{Memory: mem, Connectors: st, Documents: docSpaces}
	modes, err := mode.NewRegistry(append([]mode.Mode{
		chat.New(chat.Config{HistoryLimit: cfg.ChatHistoryLimit, MaxTokens: cfg.ChatMaxTokens, Temperature: cfg.ChatTemperature}, model),
		searchmode.New(searchCfg("search", "Fast web search: query rewrite, parallel multi-query search, reads the best pages, cited answer of 400–600 words.", cfg.SpeedMaxIterations, "400-600"), model, fast, chain, retr.reader).WithDocuments(docSpaces, cfg.SpacesSearchTopK),
		deepSearch.WithDocuments(docSpaces, cfg.SpacesSearchTopK),
		docsMode(cfg, model, fast, docSpaces, chain, block),
		research.New(research.Config{
			NumAgents: cfg.DeepResearchNumAgents, MaxSupervisorCalls: cfg.DeepResearchMaxSupervisorCalls,
			AgentMaxSteps: cfg.DeepResearchAgentMaxSteps, SupervisorMaxIterations: cfg.DeepResearchSupervisorMaxIter,
			MaxIterations: cfg.DeepResearchMaxIterations, RunDeepSearchFirst: cfg.DeepResearchDeepSearchFirst,
			ClarifyingQuestions: cfg.DeepResearchClarify, ReflectEvery: cfg.DeepResearchReflectEvery,
			MaxReformulations: cfg.DeepResearchMaxReformulations, MemoryNotes: cfg.DeepResearchMemoryNotes,
			SupervisorFindings: cfg.DeepResearchSupervisorFindings, MinDraftChars: cfg.DeepResearchMinDraftChars,
			MinReportChars: cfg.DeepResearchMinReportChars, MaxResults: cfg.DeepSearchMaxResults,
			ScrapeMaxURLs: cfg.ScrapeTopN, Concurrency: cfg.SearchConcurrency, BlockList: block,
			Temperature: cfg.ChatTemperature, MaxTokens: cfg.ChatMaxTokens,
		}, model, fast, chain, retr.reader, deepSearch),
		sgr.New(sgr.Config{
			MaxSteps: cfg.SGRMaxSteps, MaxSearches: cfg.SGRMaxSearches, MaxClarifications: cfg.SGRMaxClarifications,
			MaxResults: cfg.DeepSearchMaxResults, Concurrency: cfg.SearchConcurrency, BlockList: block,
			HistoryLimit: cfg.ChatHistoryLimit, Temperature: cfg.ChatTemperature, MaxTokens: cfg.ChatMaxTokens, Logger: logger,
		}, model, chain, retr.reader, st),
		extremeMode(cfg, model, fast, chain, retr.reader, block, sb, sbErr),
	}, append(groupModes(cfg, model, fast, chain, retr.reader, block, sb, sbErr, personal), asst, asst.TaskMode())...)...)
	if err != nil {
		_ = docSpaces.Close()
		_ = st.Close()
		return nil, err
	}
	limiter := newLimiter(cfg, st, sh) // limits.go
	limiter.SetLogger(logger)
	var titler run.Titler
	if !cfg.TitleGenerationOff {
		titler = run.ModelTitler{Model: fast}
	}
	// On PostgreSQL, nodes sharing the database tell each other of new run
	// events and of cancels (cluster.go), so a client on any node follows
	// and stops any run.
	notifier, err := newNotifier(ctx, cfg, logger)
	if err != nil {
		_ = docSpaces.Close()
		_ = st.Close()
		return nil, err
	}
	var runNotifier run.Notifier
	if notifier != nil {
		runNotifier = notifier
	}
	var followUps run.FollowUpper
	if !cfg.FollowUpsOff {
		followUps = run.ModelFollowUps{Model: fast}
	}
	svc := run.NewService(run.Options{
		Store: st, Modes: modes, Titler: titler, FollowUps: followUps, Logger: logger, Notifier: runNotifier,
		NodeID: cfg.NodeID, Lease: cfg.RunLease, Exclusive: cfg.DatabaseURL == "", Metrics: mtr,
		Timeout: cfg.RunTimeout, MaxQuestionChars: cfg.MaxQuestionChars, MaxRunning: cfg.RunSlots(runtime.GOMAXPROCS(0)),
		ModeTimeouts: map[string]time.Duration{"deep_research": cfg.DeepResearchTimeout, "extreme": cfg.Extreme.Timeout, "assistant": cfg.AssistantTaskTimeout, assistant.TaskModeID: cfg.AssistantTaskTimeout},
		Limiter:      limiter,
		Settings:     st, Prune: mode.SeedPruning, Model: cfg.Model, Usage: st, ProFeatures: cfg.ProFeatures,
	})
	// Runs whose node stopped (this one before a restart, or another whose
	// lease passed) are continued from their last checkpoint, or marked
	// interrupted, before anything new starts, so none is left looking alive.
	if n, rerr := svc.Recover(ctx); rerr != nil {
		closeNotifier(notifier)
		_ = docSpaces.Close()
		_ = st.Close()
		err = fmt.Errorf("recovering interrupted runs: %w", rerr) // closes the shared connection (above)
		return nil, err
	} else if n > 0 {
		logger.Warn("runs whose node stopped were taken over: continued from their checkpoints, or marked interrupted (restart those with POST /api/runs/{id}/restart)", "count", n)
	}
	a := &App{Config: cfg, Store: st, Service: svc, Model: model, Logger: logger, WebCache: retr.cache, Spaces: docSpaces, notifier: notifier,
		Assistant: asst, MCP: mcpClient, Voice: newVoice(cfg), Metrics: mtr,
		Memory: mem, Connectors: Connectors(cfg, st, docSpaces, logger),
		Images: &imageproxy.Proxy{Client: fetcher.Client(), MaxBytes: int64(cfg.ImageProxyMaxBytes), Timeout: cfg.ImageProxyTimeout},
		Limits: limiter, shared: sh}
	a.Realtime = newRealtime(cfg, a, logger) // assistant.go
	if err = a.wireAuth(); err != nil {      // auth.go
		closeNotifier(notifier)
		_ = docSpaces.Close()
		_ = st.Close()
		return nil, err
	}
	if err := a.wireOIDC(ctx); err != nil { // auth.go
		_ = a.Close(context.Background())
		return nil, err
	}
	a.agentSweeper = &sgr.Sweeper{Store: st, TTL: cfg.SGRAgentTTL, Logger: logger}
	if cfg.RunTimeout > 0 {
		// A run cannot outlive its time limit, and an agent is saved after
		// every step: one quiet for longer lost its run.
		a.agentSweeper.StaleAfter = cfg.RunTimeout + time.Minute
	}
	a.agentSweeper.Start()
	a.eventSweeper = &EventSweeper{Store: st, CompactAfter: cfg.RunEventsCompactAfter, Retention: cfg.RunEventsRetention, Logger: logger}
	a.eventSweeper.Start()
	return a, nil
}

// Close waits for background work and closes the store.
func (a *App) Close(ctx context.Context) error {
	if a.agentSweeper != nil {
		a.agentSweeper.Stop()
	}
	if a.Connectors != nil {
		a.Connectors.Stop() // before the spaces it writes to close
	}
	if a.eventSweeper != nil {
		a.eventSweeper.Stop()
	}
	err := a.Service.Close(ctx) // the runs end and their events are published first
	closeNotifier(a.notifier)
	var mcpErr error
	if a.MCP != nil {
		mcpErr = a.MCP.Close() // the admin's stdio servers end with their sessions
	}
	// Redis last: the runs that ended gave their places back there.
	return errors.Join(err, mcpErr, a.Spaces.Close(), a.Store.Close(), a.shared.close())
}

// unavailable stands in for a search provider that is not configured.
type unavailable struct{ err error }

func (u unavailable) Name() string { return "unconfigured" }

func (u unavailable) Search(context.Context, search.Query) ([]search.Result, error) {
	return nil, u.err
}
