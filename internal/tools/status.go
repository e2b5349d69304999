package tools

import (
	"errors"
	"strings"

	"github.com/sova-ai/sova/internal/sandbox"
)

// Status says whether a tool can be offered, which provider serves it,
// and which settings enable it or choose its provider (GET /api/providers,
// and the note a run gives when a tool is withdrawn).
type Status struct {
	Name      string `json:"name"`
	Available bool   `json:"available"`
	// Provider names the service that answers now.
	Provider string `json:"provider,omitempty"`
	// Reason says why the tool is withdrawn.
	Reason string `json:"reason,omitempty"`
	// Note says what a setting would change for an available tool.
	Note string `json:"note,omitempty"`
	// Settings are the settings that enable the tool or choose its
	// provider; the first enables a withdrawn tool.
	Settings []string `json:"settings,omitempty"`
}

// Status reports a tool's availability with these providers; ok is false
// for a name the search groups do not know.
func (p Providers) Status(name string) (s Status, ok bool) {
	s = Status{Name: name, Available: true}
	switch name {
	case WebSearchName:
		s.Settings = []string{"SOVA_SEARCH_PROVIDER", "SOVA_SEARXNG_URL", "TAVILY_API_KEY", "EXA_API_KEY", "BRAVE_API_KEY"}
		s.Provider = nameOf(p.Search, "web search")
		s.Available = p.Search != nil
	case RetrieveName:
		s.Settings = []string{"SOVA_FETCH_ALLOW_HOSTS", "SOVA_READER_FALLBACK"}
		s.Provider = "page fetcher"
		s.Available = p.Reader != nil
	case DatetimeName:
		s.Provider = "clock"
	case TextTranslateName:
		s.Settings = []string{"SOVA_FAST_MODEL"}
		s.Provider = "the fast model"
		s.Available = p.Model != nil
	case AcademicSearchName:
		s.Settings = []string{"EXA_API_KEY", "SOVA_OPENALEX_URL", "OPENALEX_API_KEY", "SOVA_ARXIV_URL"}
		s.Available = p.Academic != nil
		if p.Academic != nil {
			s.Provider = p.Academic.Name()
			if !strings.Contains(s.Provider, "exa") {
				s.Note = "EXA_API_KEY switches to Exa's research-paper search"
			}
		}
	case YouTubeSearchName:
		s.Settings = []string{"YOUTUBE_API_KEY", "SOVA_YOUTUBE_URL", "SOVA_INVIDIOUS_URL"}
		s.Available = p.YouTube != nil
		switch {
		case p.YouTube == nil:
		case p.YouTube.HasKey():
			s.Provider = "youtube+invidious"
		default:
			s.Provider = "invidious"
			s.Note = "YOUTUBE_API_KEY switches the search to the YouTube Data API (transcripts stay with Invidious)"
		}
	case RedditSearchName:
		s.Settings = []string{"TAVILY_API_KEY", "SOVA_REDDIT_URL", "SOVA_REDDIT_USER_AGENT"}
		s.Available = p.Reddit != nil
		switch {
		case p.Reddit == nil:
		case p.Reddit.HasTavily():
			s.Provider = "tavily"
		default:
			s.Provider = "reddit"
			s.Note = "TAVILY_API_KEY switches to Tavily limited to reddit.com (Reddit often refuses server addresses)"
		}
	case CodeContextName:
		s.Settings = []string{"TAVILY_API_KEY"}
		switch {
		case p.Code != nil:
			s.Provider = "tavily"
		case p.Search != nil:
			s.Provider = nameOf(p.Search, "web search") + ", documentation sites first"
			s.Note = "TAVILY_API_KEY switches to Tavily's advanced search with the pages' Markdown"
		default:
			s.Available = false
		}
	case XSearchName:
		s.Settings = []string{"XAI_API_KEY", "SOVA_XAI_URL", "SOVA_XAI_MODEL"}
		s.Available = p.X != nil
		if p.X != nil {
			s.Provider = "xai"
		}
	case GetWeatherDataName:
		s.Settings = []string{"OPENWEATHER_API_KEY", "SOVA_OPEN_METEO_URL", "SOVA_OPEN_METEO_GEOCODING_URL", "SOVA_OPENWEATHER_URL"}
		s.Available = p.Weather != nil
		if p.Weather != nil {
			s.Provider = p.Weather.Provider()
			if s.Provider != "OpenWeather" {
				s.Note = "OPENWEATHER_API_KEY switches to OpenWeather"
			}
		} else {
			s.Reason = "not configured"
		}
	case NearbyPlacesSearchName:
		s.Settings = []string{"GOOGLE_MAPS_API_KEY", "SOVA_NOMINATIM_URL", "SOVA_OVERPASS_URL", "SOVA_NOMINATIM_USER_AGENT"}
		s.Available = p.Places != nil
		if p.Places != nil {
			s.Provider = p.Places.Provider()
			if s.Provider != "Google Places" {
				s.Note = "GOOGLE_MAPS_API_KEY switches the places to Google Places"
			}
		} else {
			s.Reason = "not configured"
		}
	case StockChartName, CurrencyConverterName:
		s.Settings, s.Provider = []string{"SOVA_YAHOO_FINANCE_URL"}, "yahoo finance"
		if name == CurrencyConverterName {
			s.Settings, s.Provider = []string{"SOVA_FRANKFURTER_URL"}, "frankfurter"
		}
		s.Available = p.Markets != nil
		if p.Markets == nil {
			s.Provider, s.Reason = "", "not configured"
		}
	case CoinDataName, CoinOHLCName, CoinDataByContractName:
		s.Settings = []string{"COINGECKO_API_KEY", "SOVA_COINGECKO_URL", "SOVA_COINGECKO_PLAN"}
		s.Available = p.Coins != nil
		switch {
		case p.Coins == nil:
			s.Reason = "not configured"
		case p.Coins.Plan() != "":
			s.Provider = "coingecko (" + p.Coins.Plan() + ")"
		default:
			s.Provider = "coingecko"
			s.Note = "COINGECKO_API_KEY raises CoinGecko's rate limit"
		}
	case SearchMemoriesName, AddMemoryName:
		s.Settings = []string{"SUPERMEMORY_API_KEY", "SOVA_SUPERMEMORY_URL"}
		s.Available = p.Memory != nil
		if p.Memory != nil {
			s.Provider = p.Memory.Name()
			if s.Provider != "supermemory" {
				s.Note = "SUPERMEMORY_API_KEY keeps the memories in Supermemory instead"
			}
		}
	case ConnectorsSearchName:
		s.Settings = []string{"SOVA_CONNECTORS_SYNC_INTERVAL"}
		s.Available = p.Connectors != nil && p.Documents != nil
		s.Provider = "connected spaces"
		if !s.Available {
			s.Provider, s.Reason = "", "document spaces are not available"
		}
	case TrackFlightName:
		s.Settings = []string{"AVIATIONSTACK_API_KEY", "SOVA_AVIATIONSTACK_URL"}
		s.Available = p.Flights != nil
		if p.Flights != nil {
			s.Provider = "aviationstack"
		}
	case MovieOrTVSearchName:
		s.Settings = []string{"TMDB_API_KEY", "SOVA_TMDB_URL"}
		s.Available = p.Movies != nil
		if p.Movies != nil {
			s.Provider = "tmdb"
		}
	case CodeInterpreterName:
		s.Settings = []string{"SOVA_SANDBOX_ENABLED", "SOVA_SANDBOX_BWRAP", "SOVA_SANDBOX_PYTHON"}
		s.Available = p.Sandbox != nil
		if p.Sandbox != nil {
			s.Provider = "sandbox (bubblewrap)"
			break
		}
		s.Reason = "the code sandbox cannot run on this server"
		var u *sandbox.UnavailableError
		switch {
		case errors.As(p.SandboxErr, &u):
			s.Reason += " (" + u.Reason + ")"
		case p.SandboxErr != nil:
			s.Reason += " (" + p.SandboxErr.Error() + ")"
		}
	default:
		return Status{}, false
	}
	if !s.Available && s.Reason == "" {
		s.Reason = "not configured"
		if len(s.Settings) > 0 {
			s.Reason = "needs " + s.Settings[0]
		}
	}
	return s, true
}

// nameOf is a provider's name when it has one.
func nameOf(v any, def string) string {
	if n, ok := v.(interface{ Name() string }); ok && v != nil {
		return n.Name()
	}
	return def
}
