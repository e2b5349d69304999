package sovatest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
)

// Providers is one local server standing in for the search groups'
// providers, each under its own path prefix and speaking its wire format
// with the fixtures of the provider packages (internal/provider/academic/testdata,
// …): OpenAlex (/openalex/works), arXiv (/arxiv/api/query, Atom),
// Invidious (/invidious/api/v1/search, /invidious/api/v1/captions/{id},
// WebVTT), Reddit (/reddit/search.json, /reddit/r/{sub}/search.json,
// /reddit/comments/{id}.json), xAI (/xai/responses with the
// x_search tool), Tavily (/tavily/search), Yahoo Finance
// (/yahoo/v8/finance/chart/{AAPL,7203.T}), Frankfurter
// (/frankfurter/latest), CoinGecko (/coingecko/api/v3/coins/bitcoin and
// its /ohlc), Open-Meteo (/openmeteo/v1/search, /openmeteo/v1/forecast),
// Nominatim (/nominatim/search), Overpass (/overpass/api/interpreter),
// AviationStack (/aviationstack/v1/flights) and TMDB
// (/tmdb/3/search/multi, /tmdb/3/movie/27205). ProviderEnv points Sova at
// it; the flight and film tools also need FlightAndFilmKeys.
type Providers struct {
	*httptest.Server
	mu    sync.Mutex
	reqs  []ProviderRequest
	fails map[string]ProviderReply
}

// ProviderRequest is what the fake saw of one request.
type ProviderRequest struct {
	Method string
	Path   string // without the provider's prefix
	Query  url.Values
	Header http.Header
	Body   []byte
}

// ProviderReply is a scripted answer that replaces a provider's.
type ProviderReply struct {
	Status int // 0: 200
	Body   string
	Delay  time.Duration
}

// Provider prefixes.
const (
	OpenAlex  = "/openalex"
	Arxiv     = "/arxiv"
	Invidious = "/invidious"
	Reddit    = "/reddit"
	XAI       = "/xai"
	Tavily    = "/tavily"
	Yahoo     = "/yahoo"
	Frankfurt = "/frankfurter"
	CoinGecko = "/coingecko"
	OpenMeteo = "/openmeteo"
	Nominatim = "/nominatim"
	Overpass  = "/overpass"
	Aviation  = "/aviationstack"
	TMDB      = "/tmdb"
)

// FlightAndFilmKeys are the settings that enable track_flight and
// movie_or_tv_search against the fakes.
var FlightAndFilmKeys = map[string]string{"AVIATIONSTACK_API_KEY": "as-test-key", "TMDB_API_KEY": "0123456789abcdef0123456789abcdef"}

// NewProviders starts the fake providers.
func NewProviders(t testing.TB) *Providers {
	p := &Providers{fails: map[string]ProviderReply{}}
	p.Server = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.Close)
	return p
}

// ProviderEnv is the configuration that points Sova's group tools at p,
// with no pause between arXiv requests.
func ProviderEnv(p *Providers) map[string]string {
	return map[string]string{
		"SOVA_OPENALEX_URL":   p.URL + OpenAlex,
		"SOVA_ARXIV_URL":      p.URL + Arxiv,
		"SOVA_ARXIV_INTERVAL": "0",
		"SOVA_YOUTUBE_URL":    p.URL + "/youtube",
		"SOVA_INVIDIOUS_URL":  p.URL + Invidious,
		"SOVA_REDDIT_URL":     p.URL + Reddit,
		"SOVA_XAI_URL":        p.URL + XAI,
		"SOVA_TAVILY_URL":     p.URL + Tavily,

		"SOVA_YAHOO_FINANCE_URL":        p.URL + Yahoo,
		"SOVA_FRANKFURTER_URL":          p.URL + Frankfurt,
		"SOVA_COINGECKO_URL":            p.URL + CoinGecko,
		"SOVA_OPEN_METEO_URL":           p.URL + OpenMeteo,
		"SOVA_OPEN_METEO_GEOCODING_URL": p.URL + OpenMeteo,
		"SOVA_NOMINATIM_URL":            p.URL + Nominatim,
		"SOVA_OVERPASS_URL":             p.URL + Overpass,
		"SOVA_AVIATIONSTACK_URL":        p.URL + Aviation,
		"SOVA_TMDB_URL":                 p.URL + TMDB,
		"SOVA_TMDB_IMAGE_URL":           p.URL + TMDB + "/img",
	}
}

// Fail makes every request under prefix answer r instead.
func (p *Providers) Fail(prefix string, r ProviderReply) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fails[prefix] = r
}

// Requests returns the requests a provider (prefix) received, in order.
func (p *Providers) Requests(prefix string) []ProviderRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []ProviderRequest
	for _, r := range p.reqs {
		if rest, ok := strings.CutPrefix(r.Path, prefix+"/"); ok {
			r.Path = "/" + rest
			out = append(out, r)
		}
	}
	return out
}

func (p *Providers) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	p.reqs = append(p.reqs, ProviderRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), Body: body})
	var fail *ProviderReply
	for prefix, f := range p.fails {
		if strings.HasPrefix(r.URL.Path, prefix+"/") {
			fail = &f
		}
	}
	p.mu.Unlock()
	if fail != nil {
		if fail.Delay > 0 {
			select {
			case <-time.After(fail.Delay):
			case <-r.Context().Done():
				return
			}
		}
		st := fail.Status
		if st == 0 {
			st = http.StatusOK
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(st)
		_, _ = io.WriteString(w, fail.Body)
		return
	}
	path := r.URL.Path
	send := func(contentType, body string) {
		w.Header().Set("Content-Type", contentType)
		_, _ = io.WriteString(w, body)
	}
	const jsonType = "application/json; charset=utf-8"
	switch {
	case path == OpenAlex+"/works":
		send(jsonType, fixture("academic", "openalex_works.json"))
	case path == Arxiv+"/api/query":
		send("application/atom+xml; charset=utf-8", fixture("academic", "arxiv_feed.xml"))
	case path == Invidious+"/api/v1/search":
		// Thumbnails on the instance itself, as Invidious serves them.
		body := fixture("youtube", "invidious_search.json")
		for _, r := range [][2]string{{"https://inv.example/", p.URL + Invidious + "/"}, {"//yt3.ggpht.com/", p.URL + Invidious + "/ggpht/"},
			{`"/vi/`, `"` + p.URL + Invidious + "/vi/"}} {
			body = strings.ReplaceAll(body, r[0], r[1])
		}
		send(jsonType, body)
	case strings.HasPrefix(path, Invidious+"/vi/") || strings.HasPrefix(path, Invidious+"/ggpht/"):
		serveImage(w, &http.Request{URL: &url.URL{Path: "/img/" + fmt.Sprint(len(path)%4+1) + ".png"}})
	case strings.HasPrefix(path, Invidious+"/api/v1/captions/"):
		if r.URL.Query().Get("label") == "" {
			send(jsonType, fixture("youtube", "invidious_captions.json"))
			return
		}
		send("text/vtt; charset=utf-8", fixture("youtube", "captions_en.vtt"))
	case path == Reddit+"/search.json" || (strings.HasPrefix(path, Reddit+"/r/") && strings.HasSuffix(path, "/search.json")):
		send(jsonType, fixture("reddit", "search.json"))
	case strings.HasPrefix(path, Reddit+"/comments/"):
		send(jsonType, fixture("reddit", "post_comments.json"))
	case path == XAI+"/responses":
		send(jsonType, xaiAnswer)
	case path == Tavily+"/search":
		if strings.Contains(string(body), `"reddit.com"`) {
			send(jsonType, fixture("reddit", "tavily_reddit.json"))
			return
		}
		send(jsonType, tavilyCodeAnswer)
	case path == Yahoo+"/v8/finance/chart/AAPL":
		send(jsonType, fixture("markets", "chart_aapl_5d.json"))
	case path == Yahoo+"/v8/finance/chart/7203.T":
		send(jsonType, fixture("markets", "chart_toyota_5d.json"))
	case path == Frankfurt+"/latest":
		send(jsonType, fixture("markets", "frankfurter_latest.json"))
	case path == CoinGecko+"/api/v3/coins/bitcoin":
		send(jsonType, fixture("coins", "coin_bitcoin.json"))
	case path == CoinGecko+"/api/v3/coins/bitcoin/ohlc":
		send(jsonType, fixture("coins", "ohlc_bitcoin_7d.json"))
	case path == OpenMeteo+"/v1/search":
		send(jsonType, fixture("weather", "om_geocoding_berlin.json"))
	case path == OpenMeteo+"/v1/forecast":
		send(jsonType, fixture("weather", "om_forecast_berlin.json"))
	case path == Nominatim+"/search":
		send(jsonType, fixture("places", "nominatim_red_square.json"))
	case path == Overpass+"/api/interpreter":
		send(jsonType, fixture("places", "overpass_cafes.json"))
	case path == Aviation+"/v1/flights":
		send(jsonType, fixture("flights", "flights_ba283.json"))
	case path == TMDB+"/3/search/multi":
		send(jsonType, fixture("movies", "search_inception.json"))
	case path == TMDB+"/3/movie/27205":
		send(jsonType, fixture("movies", "movie_27205.json"))
	case strings.HasPrefix(path, TMDB+"/img/"):
		serveImage(w, &http.Request{URL: &url.URL{Path: "/img/" + fmt.Sprint(len(path)%4+1) + ".png"}})
	default:
		http.NotFound(w, r)
	}
}

// XPosts are the posts the fake xAI cites.
var XPosts = []string{"https://x.com/golang/status/1790000000000000001", "https://x.com/rob_pike/status/1790000000000000002"}

// XPostTexts are the words the fake xAI quotes of XPosts.
var XPostTexts = []string{`@golang: "Go 1.23 is released with range-over-func iterators."`, `@rob_pike: "Iterators are a careful change."`}

// xaiAnswer is a Responses API answer with the x_search tool: a
// server-side search, then a message quoting each post on its own line
// with an inline citation and its url_citation annotation, and every URL
// the search met (a profile among them).
var xaiAnswer = func() string {
	var text strings.Builder
	var notes []any
	for i, post := range XPosts {
		if i > 0 {
			text.WriteString("\n")
		}
		text.WriteString("- " + XPostTexts[i] + " ")
		cite := fmt.Sprintf("[[%d]](%s)", i+1, post)
		start := len([]rune(text.String()))
		text.WriteString(cite)
		notes = append(notes, map[string]any{"type": "url_citation", "url": post, "start_index": start, "end_index": start + len(cite), "title": fmt.Sprint(i + 1)})
	}
	return mustJSON(map[string]any{
		"id": "resp_1", "object": "response", "created_at": 1716883200, "model": "grok-4-fast-non-reasoning", "status": "completed",
		"output": []any{
			map[string]any{"type": "custom_tool_call", "id": "ctc_1", "call_id": "xs_1", "name": "x_keyword_search", "input": `{"query":"go 1.23"}`, "status": "completed"},
			map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": []any{
				map[string]any{"type": "output_text", "text": text.String(), "annotations": notes}}},
		},
		"citations": append(append([]string(nil), XPosts...), "https://x.com/i/user/1912644073896206336"),
		"usage":     map[string]any{"input_tokens": 20, "output_tokens": 30, "total_tokens": 50},
	})
}()

// TavilyCodeURL is the page the fake Tavily returns first for code_context.
const TavilyCodeURL = "https://pkg.go.dev/iter"

var tavilyCodeAnswer = mustJSON(map[string]any{
	"query": "q", "response_time": 1.2, "images": []any{},
	"results": []any{
		map[string]any{"title": "iter package - Go Packages", "url": TavilyCodeURL, "score": 0.93,
			"content":     "Package iter provides basic definitions related to iterators over sequences.",
			"raw_content": "# iter\n\nPackage iter provides basic definitions.\n\n```go\nfunc All() iter.Seq[int]\n```"},
		map[string]any{"title": "Range over function types", "url": "https://go.dev/blog/range-functions", "score": 0.81,
			"content": "Go 1.23 added range over function types.", "raw_content": "Go 1.23 added range over function types."},
	},
})

// fixture reads a provider package's test fixture.
func fixture(pkg, name string) string {
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "provider", pkg, "testdata", name))
	if err != nil {
		panic(fmt.Sprintf("sovatest: fixture %s/%s: %v", pkg, name, err))
	}
	return string(b)
}

// GroupAnswer is what the scripted model answers in a search group once
// its tools have run: it cites the first two results and a number that
// does not exist.
const GroupAnswer = "The sources agree on the main point [1] and add detail [2]. An invented claim [9]."

// groupTools are the tools a search group's first step calls, with
// arguments made from the question.
var groupTools = []struct {
	name string
	args func(q string) string
}{
	{"web_search", func(q string) string {
		return mustJSON(map[string]any{"queries": []string{q, q + " history", q + " analysis"}, "topics": []string{"general", "general", "news"}})
	}},
	{"academic_search", func(q string) string {
		return mustJSON(map[string]any{"queries": []string{q}, "maxResults": []int{5}})
	}},
	{"youtube_search", func(q string) string { return mustJSON(map[string]any{"query": q}) }},
	{"reddit_search", func(q string) string {
		return mustJSON(map[string]any{"queries": []string{q + " r/golang"}, "timeRange": []string{"month"}})
	}},
	{"code_context", func(q string) string { return mustJSON(map[string]any{"query": q}) }},
	{"stock_chart", func(q string) string {
		return mustJSON(map[string]any{"title": q, "symbols": []string{"AAPL", "7203.T"}, "range": "5d"})
	}},
	{"coin_data", func(q string) string { return mustJSON(map[string]any{"coinId": "bitcoin"}) }},
	{"connectors_search", func(q string) string { return mustJSON(map[string]any{"query": q}) }},
	{"x_search", func(q string) string {
		return mustJSON(map[string]any{"queries": []string{q}, "includeXHandles": []string{"@GoLang"}, "startDate": "2024-06-01", "endDate": "2024-06-30"})
	}},
}

// group answers the steps of a search group (recognised by its shared
// citation rules): the group's tool first, then GroupAnswer. A group
// without tools (x without XAI_API_KEY) answers at once, naming what is
// switched off. GroupCalls, when set, chooses the first step's calls.
func (m *Model) group(r *llmtest.Request) (llmtest.Reply, bool) {
	sys := r.System()
	if reply, ok := memoryGroup(r); ok {
		return reply, true
	}
	if !strings.Contains(sys, "Tool results are numbered") {
		return llmtest.Reply{}, false
	}
	usage := llmtest.Tokens(200, 40)
	answered := false
	for _, msg := range r.Messages {
		if msg.Role == llm.RoleTool {
			answered = true
		}
	}
	if !answered && len(r.Tools) > 0 && r.ToolChoice != "none" {
		if m.GroupCalls != nil {
			if calls := m.GroupCalls(r); calls != nil {
				return llmtest.Reply{ToolCalls: calls, Usage: usage}, true
			}
		}
		for _, g := range groupTools {
			if r.HasTool(g.name) {
				return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "call_1", Name: g.name, Arguments: g.args(r.LastUser())}}, Usage: usage}, true
			}
		}
	}
	if len(r.Tools) == 0 && strings.Contains(sys, "Not available on this server") {
		setting := ""
		if i := strings.Index(sys, "Setting "); i >= 0 {
			setting = strings.Fields(sys[i+len("Setting "):])[0]
		}
		return llmtest.Reply{Content: "Searching X is switched off on this server; setting " + setting + " enables it.", Usage: usage}, true
	}
	return llmtest.Reply{Content: GroupAnswer, Usage: usage}, true
}

// memoryGroup answers the memory group (recognised by its tools): a
// question that starts with "Remember" is saved with add_memory, any
// other is looked up with search_memories; then the answer repeats what
// the tool returned ("Saved: …", "From your memories: …", or that
// nothing was found).
func memoryGroup(r *llmtest.Request) (llmtest.Reply, bool) {
	if !r.HasTool("search_memories") && !strings.Contains(r.System(), "memory of what the person told you") {
		return llmtest.Reply{}, false
	}
	usage := llmtest.Tokens(150, 30)
	var result string
	for _, msg := range r.Messages {
		if msg.Role == llm.RoleTool {
			result = unmarked(msg.Content)
		}
	}
	q := r.LastUser()
	if result == "" && r.ToolChoice != "none" && len(r.Tools) > 0 {
		call := llm.ToolCall{ID: "call_1", Name: "search_memories", Arguments: mustJSON(map[string]any{"query": q})}
		if rest, ok := strings.CutPrefix(q, "Remember that "); ok {
			call = llm.ToolCall{ID: "call_1", Name: "add_memory", Arguments: mustJSON(map[string]any{"memory": rest})}
		}
		return llmtest.Reply{ToolCalls: []llm.ToolCall{call}, Usage: usage}, true
	}
	var out struct {
		Success  bool                       `json:"success"`
		Memory   struct{ Content string }   `json:"memory"`
		Memories []struct{ Content string } `json:"memories"`
	}
	_ = json.Unmarshal([]byte(result), &out)
	switch {
	case out.Success:
		return llmtest.Reply{Content: "Saved: " + out.Memory.Content, Usage: usage}, true
	case len(out.Memories) > 0:
		return llmtest.Reply{Content: "From your memories: " + out.Memories[0].Content, Usage: usage}, true
	}
	return llmtest.Reply{Content: "I have no memory of that.", Usage: usage}, true
}

// unmarked is a tool result without the untrusted-data markers around it
// (agent.Untrusted): the text the model reads inside them.
func unmarked(s string) string {
	if !strings.HasPrefix(s, "<untrusted-data ") {
		return s
	}
	_, inner, ok := strings.Cut(s, "\n")
	if !ok {
		return s
	}
	return strings.TrimSuffix(inner, "\n</untrusted-data>")
}
