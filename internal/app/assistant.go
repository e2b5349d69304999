package app

import (
	"log/slog"
	"strings"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mcp"
	"github.com/sova-ai/sova/internal/mode/assistant"
	"github.com/sova-ai/sova/internal/realtime"
	"github.com/sova-ai/sova/internal/search"
	"github.com/sova-ai/sova/internal/spaces"
	"github.com/sova-ai/sova/internal/store"
	"github.com/sova-ai/sova/internal/voice"
)

// newAssistant builds the MCP client of the admin's servers
// (SOVA_MCP_CONFIG) and the assistant mode (seed 004).
func newAssistant(cfg *config.Config, model, fast *llm.Client, st store.Store, docs *spaces.Service, chain *search.Chain, logger *slog.Logger) (*assistant.Mode, *mcp.Client, error) {
	servers, err := mcp.LoadConfig(cfg.MCPConfig)
	if err != nil {
		return nil, nil, err
	}
	client := mcp.NewClient(servers, mcp.Options{Timeout: cfg.MCPTimeout, AllowHosts: cfg.MCPAllowHosts, Logger: logger})
	d := assistant.Deps{Model: model, Fast: fast, MCP: client, Servers: st, Messages: st, Chats: st, Search: chain, Runs: st}
	if docs != nil {
		d.Documents = docs
	}
	d.Settings = settingsStore(st)
	m := assistant.New(assistant.Config{
		MaxSteps: cfg.AssistantMaxSteps, PlannerMaxSteps: cfg.AssistantPlannerSteps, TaskMaxSubtasks: cfg.AssistantTaskSubtasks,
		HistoryLimit: cfg.ChatHistoryLimit, Temperature: cfg.ChatTemperature, MaxTokens: cfg.ChatMaxTokens,
	}, d)
	return m, client, nil
}

// settingsStore is where the interview agent keeps preferences: the
// store's user settings (GET/PUT /api/me). Until the store implements
// sova.SettingsStore, preferences cannot be saved and the interview says so.
func settingsStore(st store.Store) sova.SettingsStore {
	if s, ok := any(st).(sova.SettingsStore); ok {
		return s
	}
	return nil
}

// newVoice is the endpoint's audio API (SOVA_STT_MODEL, SOVA_TTS_MODEL);
// nil when neither model is set.
func newVoice(cfg *config.Config) *voice.Client {
	if cfg.STTModel == "" && cfg.TTSModel == "" {
		return nil
	}
	return voice.New(voice.Config{BaseURL: cfg.LLMBaseURL, APIKey: cfg.LLMAPIKey, STTModel: cfg.STTModel, TTSModel: cfg.TTSModel, Voice: cfg.TTSVoice})
}

// newRealtime is /v1/realtime: the upstream Realtime model of the
// endpoint when it has one (SOVA_REALTIME_MODEL), else the cascade over
// the endpoint's audio API.
func newRealtime(cfg *config.Config, a *App, logger *slog.Logger) *realtime.Handler {
	model := cfg.RealtimeModel
	if strings.EqualFold(model, "off") {
		model = ""
	}
	v := a.Voice
	if v == nil {
		v = voice.New(voice.Config{BaseURL: cfg.LLMBaseURL, APIKey: cfg.LLMAPIKey, Voice: cfg.TTSVoice})
	}
	return realtime.New(realtime.Config{
		Runs: a.Service, Voice: v, Assistant: a.Assistant, Chats: a.Store, Limiter: a.Limits,
		Upstream:      realtime.Upstream{BaseURL: cfg.LLMBaseURL, APIKey: cfg.LLMAPIKey, Model: model, Voice: cfg.TTSVoice, TranscribeModel: cfg.STTModel},
		MaxFrameBytes: cfg.RealtimeMaxFrameBytes, MaxAudioBytes: cfg.AudioMaxBytes, MaxSession: cfg.RealtimeMaxSession, Logger: logger,
	})
}
