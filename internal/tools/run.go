package tools

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/fetch"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/provider"
	"github.com/sova-ai/sova/internal/provider/academic"
	"github.com/sova-ai/sova/internal/provider/coins"
	"github.com/sova-ai/sova/internal/provider/flights"
	"github.com/sova-ai/sova/internal/provider/markets"
	"github.com/sova-ai/sova/internal/provider/movies"
	"github.com/sova-ai/sova/internal/provider/places"
	"github.com/sova-ai/sova/internal/provider/reddit"
	"github.com/sova-ai/sova/internal/provider/weather"
	"github.com/sova-ai/sova/internal/provider/xai"
	"github.com/sova-ai/sova/internal/provider/youtube"
	"github.com/sova-ai/sova/internal/search"
	"github.com/sova-ai/sova/internal/spaces"
)

// PageReader reads a web page into Markdown (*fetch.Fetcher, or the web
// cache in front of it).
type PageReader interface {
	Fetch(ctx context.Context, url string) (*fetch.Page, error)
}

// DocumentSearcher finds passages in a person's document spaces.
// *spaces.Service implements it.
type DocumentSearcher interface {
	// Spaces lists the user's spaces with their document counts.
	Spaces(ctx context.Context, userID string) ([]sova.Space, error)
	// Search finds passages in the given spaces (IDs) of the user.
	Search(ctx context.Context, userID string, spaceIDs []string, text string, limit int) ([]spaces.Hit, error)
}

// Searcher is a web search: a search.Chain, or the chain with a run's
// failover reports (any search.Provider).
type Searcher interface {
	Search(ctx context.Context, q search.Query) ([]search.Result, error)
}

// Providers are what the tools are built from.
type Providers struct {
	// Search is the web search; nil: no web search.
	Search Searcher
	// Reader reads pages; nil: no page reading.
	Reader PageReader
	// Documents searches the person's document spaces; nil: none.
	Documents DocumentSearcher

	// The search groups' providers (seed 000 §1.2; each package's
	// Provider says which tools it serves, and Specs lists them). A nil
	// one withdraws its tools.

	// Academic searches papers (academic_search).
	Academic academic.Searcher
	// YouTube searches videos and reads transcripts (youtube_search).
	YouTube *youtube.Client
	// Reddit searches Reddit (reddit_search).
	Reddit *reddit.Client
	// X searches posts on X (x_search); nil without XAI_API_KEY.
	X *xai.Client
	// Code is code_context's own search (Tavily, advanced depth, pages as
	// Markdown); nil: Search, documentation sites first.
	Code Searcher
	// Model writes text_translate's translations (the fast model).
	Model llm.Model
	// Sandbox runs code_interpreter's Python (*sandbox.Sandbox); nil
	// withdraws the tool, and SandboxErr says why (sandbox.New's
	// ErrUnavailable, or turned off).
	Sandbox    CodeRunner
	SandboxErr error

	// The data tools' providers; all work without a key.

	// Weather gives forecasts (get_weather_data).
	Weather *weather.Client
	// Places finds places near a point (nearby_places_search).
	Places *places.Client
	// Markets gives price charts and exchange rates (stock_chart,
	// currency_converter).
	Markets *markets.Client
	// Coins asks CoinGecko (coin_data, coin_ohlc, coin_data_by_contract).
	Coins *coins.Client

	// Memory keeps the person's memories (search_memories, add_memory).
	Memory Memories
	// Connectors lists the spaces kept in sync with a source; with
	// Documents, connectors_search searches them.
	Connectors ConnectorLister
	// Flights tracks flights (track_flight); nil without
	// AVIATIONSTACK_API_KEY.
	Flights *flights.Client
	// Movies finds films and series (movie_or_tv_search); nil without
	// TMDB_API_KEY.
	Movies *movies.Client

	// Extra are providers whose tools are built outside this package;
	// Status reports their tools as well.
	Extra []provider.Spec
}

// Specs describe the providers: Sova's own tools (status.go), then one
// line for each provider package above (its Provider function says what
// it serves and how), then Extra.
func (p Providers) Specs() []provider.Spec {
	specs := p.core()
	specs = append(specs,
		academic.Provider(p.Academic),
		youtube.Provider(p.YouTube),
		reddit.Provider(p.Reddit),
		xai.Provider(p.X),
		weather.Provider(p.Weather),
		places.Provider(p.Places),
		markets.Provider(p.Markets),
		coins.Provider(p.Coins),
		flights.Provider(p.Flights),
		movies.Provider(p.Movies),
	)
	return append(specs, p.Extra...)
}

// Run is what one run's tools share: the providers, where their progress
// goes, the search rounds so far and the pages read. A mode makes one for
// each run; tools made from it for one agent loop keep their own counts
// (budgets, reformulations), so several loops of a run (deep_research's
// agents) can share a Run.
type Run struct {
	p     Providers
	sink  event.Sink // nil: no progress events
	pages *Pages

	mu      sync.Mutex
	rounds  int
	focus   []string // the question and the queries searched: what pages are read for
	focused map[string]bool
	// searchErr is the failure of the run's last web search (nil when it
	// answered), so that an answer without sources can say the search
	// provider was the cause.
	searchErr error
}

// NoteSearch records the outcome of a web search; Search and the
// multi-query web search record theirs, a mode's own search tool calls
// it.
func (r *Run) NoteSearch(err error) {
	if errors.Is(err, context.Canceled) {
		return // the run is ending; that says nothing of the provider
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.searchErr = err
}

// SearchFailure is the failure of the run's last web search, nil when it
// answered or none was made.
func (r *Run) SearchFailure() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.searchErr
}

// SetQuestion records the run's question: pages read are cut to the
// passages that answer it (and the queries searched).
func (r *Run) SetQuestion(q string) { r.addFocus(q) }

func (r *Run) addFocus(s string) {
	s = strings.TrimSpace(s)
	r.mu.Lock()
	defer r.mu.Unlock()
	if s == "" || r.focused[strings.ToLower(s)] {
		return
	}
	if r.focused == nil {
		r.focused = map[string]bool{}
	}
	r.focused[strings.ToLower(s)] = true
	r.focus = append(r.focus, s)
}

// Focus is what the run's pages are read for: its question and the
// queries searched so far.
func (r *Run) Focus() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.focus...)
}

// NewRun returns the tools' state for one run. sink receives the tools'
// progress (queries, sources found, pages read); nil keeps it quiet.
func NewRun(p Providers, sink event.Sink) *Run {
	return &Run{p: p, sink: sink, pages: NewPages()}
}

// Pages are the pages the run read, numbered.
func (r *Run) Pages() *Pages { return r.pages }

// NextRound hands out the id of the next search round: the iteration of
// its query events.
func (r *Run) NextRound() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rounds++
	return r.rounds
}

// SetRounds sets the rounds run so far (a resumed run goes on counting).
func (r *Run) SetRounds(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rounds = n
}

// Rounds is the number of search rounds so far.
func (r *Run) Rounds() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rounds
}

func (r *Run) emit(e event.Event) {
	if r.sink != nil {
		e.Time = time.Now()
		r.sink.Emit(e)
	}
}

// Query is one web search.
type Query struct {
	Text     string
	Results  int // at most this many results are kept
	Language string
	// BlockList filters the results.
	BlockList search.BlockList
	// Round is the iteration of the query events (Run.NextRound, or a
	// step number).
	Round int
}

// Search runs one web search: the provider's results, deduplicated,
// without blocked sites, at most q.Results. The run's sink sees the query
// start and complete (data-query_completion).
func (r *Run) Search(ctx context.Context, q Query) ([]search.Result, error) {
	if r.p.Search == nil {
		return nil, errors.New("web search is not available")
	}
	r.addFocus(q.Text)
	r.emit(event.Event{Type: event.TypeQuery, Query: &event.Query{Query: q.Text, Total: 1, Status: event.QueryStarted, Iteration: q.Round}})
	res, err := r.p.Search.Search(ctx, search.Query{Text: q.Text, MaxResults: q.Results, Language: q.Language})
	r.NoteSearch(err)
	ev := &event.Query{Query: q.Text, Total: 1, Iteration: q.Round}
	if err != nil {
		ev.Status, ev.Error = event.QueryError, err.Error()
		r.emit(event.Event{Type: event.TypeQuery, Query: ev})
		return nil, err
	}
	res = search.Filter(search.Dedupe(res), q.BlockList)
	if len(res) > q.Results {
		res = res[:q.Results]
	}
	n, imgs := len(res), 0
	for _, x := range res {
		imgs += len(x.Images)
	}
	if n > 0 {
		ev.Provider = res[0].Provider
	}
	ev.Status, ev.ResultsCount, ev.ImagesCount = event.QueryCompleted, &n, &imgs
	r.emit(event.Event{Type: event.TypeQuery, Query: ev})
	return res, nil
}

// errNoText is a page without readable text.
var errNoText = errors.New("no readable text on the page")

// Read reads a page, once per run: a page asked for again (by another
// agent, or while it is still being read) is not fetched again, nor shown
// as read again. title is the page's title as far as it is known (from a
// search result), for the progress events.
func (r *Run) Read(ctx context.Context, url, title string) (*fetch.Page, error) {
	if r.p.Reader == nil {
		return nil, errors.New("reading pages is not available")
	}
	again := r.pages.Fetched(url)
	if !again {
		r.emit(event.Event{Type: event.TypePage, Page: &event.Page{URL: url, Title: title, State: event.PageReading}})
	}
	pg, err := r.pages.fetch(ctx, r.p.Reader, url)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		r.emit(event.Event{Type: event.TypePage, Page: &event.Page{URL: url, Title: title, State: event.PageFailed, Error: err.Error()}})
		return nil, err
	}
	if pg.Title != "" {
		title = pg.Title
	}
	if !again {
		r.emit(event.Event{Type: event.TypePage, Page: &event.Page{URL: url, Title: title, State: event.PageRead, Chars: pg.Chars}})
	}
	return pg, nil
}

// SourceOf is a search result as a source the run found (not yet read).
func SourceOf(r search.Result) sova.Source {
	return sova.Source{URL: r.URL, Title: r.Title, Snippet: clip(r.Snippet, 300), Kind: sova.SourceWeb, Published: r.Published, Favicon: r.Favicon}
}

// clip shortens s, trimmed, to at most n runes.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
