// Package sovatest starts the outside world a Sova run talks to, as local
// HTTP servers speaking the real wire formats: an OpenAI-compatible model
// that answers Sova's prompts (llmtest), a SearXNG instance answering
// /search?format=json, and a site of article pages wrapped in boilerplate.
// Mode, server and end-to-end tests share it.
package sovatest

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
)

// Article is one page of the fake site.
type Article struct {
	Slug  string
	Title string
	Body  string // paragraphs separated by blank lines; "## " starts a subheading
	// HTML, when set, is served as the page instead of Body in the
	// site's boilerplate (real-size pages, realpages.go).
	HTML string
}

// DefaultArticles is the default site: pages about the economy in the 1930s.
func DefaultArticles() []Article {
	return []Article{
		{Slug: "fdr-fireside", Title: "Roosevelt's first fireside chat on banking", Body: "On March 12, 1933 Franklin D. Roosevelt explained the banking crisis to the nation by radio.\n\nHe said the bank holiday would let sound banks reopen and asked people to keep their money in banks rather than under the mattress.\n\nDeposits returned within weeks, and the panic of the winter ended."},
		{Slug: "hoover-prosperity", Title: "Hoover and the promise of prosperity", Body: "In 1930 Herbert Hoover told Americans that the worst of the depression was over and that prosperity was just around the corner.\n\nUnemployment nonetheless rose from 8 percent in 1930 to 23 percent in 1932.\n\nHis speeches stressed voluntary cooperation between business and government."},
		{Slug: "new-deal-economy", Title: "The New Deal and the economy", Body: "The New Deal combined relief for the unemployed, recovery of industry and reform of finance.\n\nRoosevelt described the economy as a system that government had a duty to repair, speaking of forgotten men at the bottom of the economic pyramid.\n\nGDP grew strongly between 1933 and 1937 before the recession of 1937-38."},
		{Slug: "sotu-1936", Title: "State of the Union 1936", Body: "In his 1936 annual message Roosevelt attacked entrenched greed and described a recovery well under way.\n\nNational income had risen by more than 50 percent since 1933.\n\nHe framed economic security as a right of citizens."},
		{Slug: "dust-bowl", Title: "The Dust Bowl and farm prices", Body: "Farm prices collapsed by 60 percent between 1929 and 1932.\n\nThe Agricultural Adjustment Act of 1933 paid farmers to reduce production.\n\nDrought on the plains turned fields to dust through the middle of the decade."},
		{Slug: "gold-standard", Title: "Leaving the gold standard", Body: "In April 1933 the United States effectively left the gold standard.\n\nRoosevelt argued that a managed currency would raise prices and relieve debtors.\n\nThe Gold Reserve Act of 1934 fixed gold at 35 dollars an ounce."},
	}
}

// Site serves the articles at /a/<slug> inside navigation, cookie banner,
// sidebar and footer, so extraction has boilerplate to remove.
type Site struct {
	*httptest.Server
	hits  sync.Map     // path → *atomic.Int64
	delay atomic.Int64 // nanoseconds waited before each page is served
}

// SetDelay makes every page wait d before it is served; safe while
// pages are being served.
func (s *Site) SetDelay(d time.Duration) { s.delay.Store(int64(d)) }

// NewSite starts the site.
func NewSite(t testing.TB, articles []Article) *Site {
	s := &Site{}
	byPath := map[string]Article{}
	for _, a := range articles {
		byPath["/a/"+a.Slug] = a
	}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := s.hits.LoadOrStore(r.URL.Path, new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
		if d := time.Duration(s.delay.Load()); d > 0 {
			select {
			case <-time.After(d):
			case <-r.Context().Done():
				return
			}
		}
		a, ok := byPath[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if a.HTML != "" {
			fmt.Fprint(w, a.HTML)
			return
		}
		fmt.Fprint(w, Page(a))
	}))
	t.Cleanup(s.Close)
	return s
}

// Hits returns how often path was requested.
func (s *Site) Hits(path string) int64 {
	if n, ok := s.hits.Load(path); ok {
		return n.(*atomic.Int64).Load()
	}
	return 0
}

// Page renders an article inside boilerplate.
func Page(a Article) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>%s | History Monthly</title>
<script>window.tracker = "track";</script><style>body{font-family:serif}</style></head><body>
<header><nav><a href="/">Home</a> <a href="/topics">Topics</a> <a href="/subscribe">Subscribe now</a> <a href="/login">Log in</a></nav></header>
<div class="cookie-banner">We use cookies to improve your experience. Accept all cookies?</div>
<main><article><h1>%s</h1><p class="byline">By Staff Writer</p>`, a.Title, a.Title)
	for _, p := range strings.Split(a.Body, "\n\n") {
		if h, ok := strings.CutPrefix(p, "## "); ok {
			fmt.Fprintf(&b, "<h2>%s</h2>\n", h)
			continue
		}
		fmt.Fprintf(&b, "<p>%s</p>\n", p)
	}
	b.WriteString(`</article></main>
<aside class="sidebar"><h3>Most read</h3><ul><li><a href="/x">Ten recipes for summer</a></li><li><a href="/y">Celebrity gossip roundup</a></li></ul></aside>
<footer><p>Copyright 2024 History Monthly. All rights reserved.</p><a href="/privacy">Privacy policy</a> <a href="/terms">Terms</a></footer>
</body></html>`)
	return b.String()
}

// SearXNG is a fake SearXNG instance. Each query returns results pointing at
// the site's articles, in an order that depends on the query so that runs
// see overlapping but different results (dedupe has work to do).
type SearXNG struct {
	*httptest.Server
	mu           sync.Mutex
	queries      []string
	imageQueries []string
	// Fail, when set, makes every search answer this status.
	Fail atomic.Int32
	hits atomic.Int64 // requests for /search, answered or failed
	// Extra results appended to every answer (e.g. a blocked domain).
	Extra []map[string]any
	// Window, when set, answers each query with that many articles from
	// a place in the list that the query's hash picks, so that distinct
	// questions read distinct pages (load benchmarks).
	Window int
	delay  atomic.Int64 // nanoseconds waited before each answer
}

// Hits is how many search requests reached the instance, those Fail
// refused included: what a provider that is down is asked.
func (s *SearXNG) Hits() int { return int(s.hits.Load()) }

// SetDelay makes every search answer wait d; safe while searches run.
func (s *SearXNG) SetDelay(d time.Duration) { s.delay.Store(int64(d)) }

// NewSearXNG starts a fake SearXNG whose results link to site.
func NewSearXNG(t testing.TB, site *Site, articles []Article) *SearXNG {
	s := &SearXNG{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/img/") {
			serveImage(w, r)
			return
		}
		if r.URL.Path != "/search" {
			http.NotFound(w, r)
			return
		}
		s.hits.Add(1)
		if d := time.Duration(s.delay.Load()); d > 0 {
			select {
			case <-time.After(d):
			case <-r.Context().Done():
				return
			}
		}
		if st := s.Fail.Load(); st != 0 {
			http.Error(w, http.StatusText(int(st)), int(st))
			return
		}
		if r.URL.Query().Get("format") != "json" {
			http.Error(w, "format=json required", http.StatusForbidden)
			return
		}
		q := r.URL.Query().Get("q")
		if r.URL.Query().Get("categories") == "images" {
			s.mu.Lock()
			s.imageQueries = append(s.imageQueries, q)
			s.mu.Unlock()
			s.images(w, site, articles, q)
			return
		}
		s.mu.Lock()
		s.queries = append(s.queries, q)
		s.mu.Unlock()
		// Rotate the article list by the query's length so queries differ.
		n := len(articles)
		off := len(q) % n
		count := n
		if s.Window > 0 && s.Window < n {
			h := fnv.New32a()
			h.Write([]byte(q))
			off, count = int(h.Sum32()%uint32(n)), s.Window
		}
		var results []map[string]any
		for i := 0; i < count; i++ {
			a := articles[(i+off)%n]
			results = append(results, map[string]any{
				"url": site.URL + "/a/" + a.Slug, "title": a.Title,
				"content": strings.SplitN(a.Body, "\n\n", 2)[0], "engine": "duckduckgo",
				"engines": []string{"duckduckgo", "bing"}, "score": float64(n - i), "category": "general",
				"parsed_url": []string{"http", "x", "/a/" + a.Slug, "", "", ""}, "positions": []int{i + 1},
				"publishedDate": nil,
			})
		}
		results = append(results, s.Extra...)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"query": q, "number_of_results": len(results), "results": results,
			"answers": []any{}, "corrections": []any{}, "infoboxes": []any{}, "suggestions": []string{q + " history"},
			"unresponsive_engines": [][]string{{"wikidata", "timeout"}},
		})
	}))
	t.Cleanup(s.Close)
	return s
}

// images answers a search of the images category as SearXNG does:
// results with img_src, thumbnail_src and the page's url, the images
// served by the fake itself (PNGs, /img/{n}.png).
func (s *SearXNG) images(w http.ResponseWriter, site *Site, articles []Article, q string) {
	var results []map[string]any
	for i, a := range articles[:min(len(articles), 4)] {
		results = append(results, map[string]any{
			"template": "images.html", "url": site.URL + "/a/" + a.Slug, "title": a.Title + " (photo)", "content": "",
			"img_src": fmt.Sprintf("%s/img/%d.png", s.URL, i+1), "thumbnail_src": fmt.Sprintf("%s/img/%d.png?thumb=1", s.URL, i+1),
			"img_format": "png", "resolution": "320 x 200", "engine": "bing images", "engines": []string{"bing images"},
			"positions": []int{i + 1}, "score": 1.0, "category": "images",
		})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"query": q, "number_of_results": len(results), "results": results,
		"answers": []any{}, "corrections": []any{}, "infoboxes": []any{}, "suggestions": []string{}, "unresponsive_engines": [][]string{},
	})
}

// serveImage draws the fake's image n: a PNG in a colour of its own.
func serveImage(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/img/"), ".png"))
	if err != nil || n < 1 || n > 16 {
		http.NotFound(w, r)
		return
	}
	img := image.NewRGBA(image.Rect(0, 0, 320, 200))
	hue := []color.RGBA{{70, 110, 180, 255}, {200, 120, 60, 255}, {90, 160, 100, 255}, {160, 80, 150, 255}}[(n-1)%4]
	for y := range 200 {
		for x := range 320 {
			k := uint8((x + y) * 60 / 520)
			img.Set(x, y, color.RGBA{hue.R - hue.R/4 + k, hue.G - hue.G/4 + k, hue.B - hue.B/4 + k, 255})
		}
	}
	w.Header().Set("Content-Type", "image/png")
	_ = png.Encode(w, img)
}

// ImageQueries returns the queries of the images category received.
func (s *SearXNG) ImageQueries() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.imageQueries...)
}

// Queries returns the queries received, in order of arrival.
func (s *SearXNG) Queries() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.queries...)
}

// Model answers Sova's prompts the way a capable model would, so whole
// pipelines run against it. Tests may wrap Respond to change one step.
type Model struct {
	*llmtest.Server
	// Answer is the synthesis text; by default it cites [1], [2] and a
	// source that does not exist, [9].
	Answer string
	// FollowUps is how many follow-up queries each follow-up step returns.
	FollowUps int
	// Latency is waited before every answer (benchmarks of fan-out).
	Latency time.Duration
	// GroupCalls, when set, makes the first step of a search group call
	// these tools instead of the group's own (groups.go); nil: its own.
	GroupCalls func(r *llmtest.Request) []llm.ToolCall
	// Misbehave, when positive, makes one in every Misbehave replies bad
	// the way real models' are (misbehave.go): calls as text, broken
	// arguments, json_schema refused, JSON among prose. Misbehaved counts
	// them by kind.
	Misbehave int
	// NoNativeTools makes it a model served without native tool calling
	// (prompttools.go): a request with a tools field is refused with a
	// 400, tools are read from the system prompt and calls written as
	// text, in each of the real formats in turn; Misbehaved counts them
	// as "text:<format>".
	NoNativeTools bool
	misMu         sync.Mutex
	misbehaved    map[string]int
}

// Misbehaved returns how many replies misbehaved, by kind.
func (m *Model) Misbehaved() map[string]int {
	m.misMu.Lock()
	defer m.misMu.Unlock()
	out := map[string]int{}
	for k, v := range m.misbehaved {
		out[k] = v
	}
	return out
}

// NewModel starts the scripted model.
func NewModel(t testing.TB) *Model {
	m := &Model{
		Server: llmtest.New(t),
		Answer: "Presidents in the 1930s described the economy first as a passing storm [2] and then as a system to repair [1]. " +
			"Roosevelt told the nation that sound banks would reopen [1], while recovery was claimed by 1936 [3]. An invented claim [9].",
		FollowUps: 2,
	}
	m.Handle(m.Respond)
	return m
}

// Respond answers one request by recognising which of Sova's steps sent it.
func (m *Model) Respond(r *llmtest.Request) llmtest.Reply {
	var reply llmtest.Reply
	if m.NoNativeTools {
		var format string
		if reply, format = m.withoutNativeTools(r); format != "" {
			m.count("text:" + format)
		}
	} else {
		reply = m.respond(r)
	}
	if bad, kind := m.misbehave(r, reply); kind != "" {
		m.count(kind)
		reply = bad
	}
	reply.Delay = m.Latency
	return reply
}

func (m *Model) count(kind string) {
	m.misMu.Lock()
	defer m.misMu.Unlock()
	if m.misbehaved == nil {
		m.misbehaved = map[string]int{}
	}
	m.misbehaved[kind]++
}

func (m *Model) respond(r *llmtest.Request) llmtest.Reply {
	if reply, ok := m.research(r); ok {
		return reply
	}
	if reply, ok := m.sgr(r); ok {
		return reply
	}
	if reply, ok := m.docs(r); ok {
		return reply
	}
	if reply, ok := m.group(r); ok {
		return reply
	}
	if reply, ok := m.extreme(r); ok {
		return reply
	}
	usage := llmtest.Tokens(100, 20)
	sys := r.System()
	switch {
	case r.SchemaName() == "QueryRewrite":
		// The rewrite writes the first queries too (search mode); a
		// caller that asks for the rewrite alone ignores them.
		q := strings.TrimPrefix(r.LastUser(), "Question: ")
		return llmtest.Reply{Content: mustJSON(map[string]any{"rewritten_query": q + " (rewritten)", "queries": firstQueries()}), Usage: usage}
	case r.SchemaName() == "SearchQueries":
		user := r.LastUser()
		if strings.Contains(user, "follow-up") {
			var qs []string
			for i := 0; i < m.FollowUps; i++ {
				qs = append(qs, fmt.Sprintf("follow-up query %d about %d", i+1, r.Index))
			}
			return llmtest.Reply{Content: mustJSON(map[string]any{"queries": qs}), Usage: usage}
		}
		return llmtest.Reply{Content: mustJSON(map[string]any{"queries": firstQueries()}), Usage: usage}
	case r.SchemaName() == "SynthesizedAnswer":
		return llmtest.Reply{Content: mustJSON(map[string]any{
			"reasoning": "The question is simple.", "answer": "Canberra is the capital of Australia.",
			"key_points": []string{"Canberra was purpose-built", "It became the capital in 1913"},
		}), Usage: usage}
	case strings.Contains(sys, "summarise a web page"):
		return llmtest.Reply{Content: "Summary: " + firstLine(r.LastUser(), "Page content:"), Usage: usage}
	case strings.Contains(sys, "follow-up questions the person might ask"):
		return llmtest.Reply{Content: "1. What did Hoover say in 1931?\n2. How did the New Deal change banking?\n- Why did recovery stall in 1937?", Usage: usage}
	case strings.Contains(sys, "short title"):
		return llmtest.Reply{Content: "Economy in the 1930s", Usage: usage}
	case strings.Contains(sys, "answers from web sources"):
		return llmtest.Reply{Content: m.Answer, Usage: llmtest.Tokens(1000, 200)}
	}
	return llmtest.Fail(400, "sovatest model: unrecognised request: "+sys)
}

// firstQueries are the model's first search queries.
func firstQueries() []string {
	return []string{"economy 1930s presidents", "Roosevelt fireside chat economy", "Hoover depression speeches prosperity"}
}

func firstLine(s, after string) string {
	if _, rest, ok := strings.Cut(s, after); ok {
		s = rest
	}
	s = strings.TrimSpace(s)
	if line, _, ok := strings.Cut(s, "\n"); ok {
		return line
	}
	return s
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Env is the configuration that points Sova at a Model, SearXNG and Site.
func Env(model *Model, sx *SearXNG, dataDir string) map[string]string {
	return map[string]string{
		"SOVA_LLM_BASE_URL":      model.URL(),
		"SOVA_LLM_API_KEY":       "test-key",
		"SOVA_MODEL":             "main-model",
		"SOVA_FAST_MODEL":        "fast-model",
		"SOVA_SEARCH_PROVIDER":   "searxng",
		"SOVA_SEARXNG_URL":       sx.URL,
		"SOVA_DATA_DIR":          dataDir,
		"SOVA_FETCH_ALLOW_HOSTS": "127.0.0.1",
		"SOVA_LLM_MAX_RETRIES":   "2",
		// Every run reaches the fakes, as tests of timing and counts
		// expect; tests of the web cache turn it on.
		"SOVA_SEARCH_CACHE_TTL": "0",
		"SOVA_PAGE_CACHE_TTL":   "0",
		// Suggestions add a model call to every run; tests of them turn
		// them on.
		"SOVA_DISABLE_FOLLOWUPS": "true",
	}
}
