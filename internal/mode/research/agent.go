package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sova-ai/sova"

	"golang.org/x/sync/errgroup"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/search"
)

// maxQueryRunes bounds a web_search query: search engines reject or
// mangle longer ones, and a model writing paragraphs into the query box
// should be told.
const maxQueryRunes = 400

// task is one agent's work on one todo.
type task struct {
	s     *session
	a     *agent
	t     *todo
	mu    sync.Mutex
	seen  map[string]bool // result URLs seen in this task
	hits  []search.Result // search results seen, for the note
	read  []*page         // pages read in this task
	notes map[int]string  // page number → what this task learnt from it
	// searches counts web_search calls; all but the first are
	// reformulations.
	searches int
	help     string
	reflect  []string
}

// runTask runs one todo as a ReAct loop with web_search, scrape_url and
// done (seed 001 §4, stage 3), then writes the note. A nil note with a nil
// error does not happen: a task that found nothing still writes a note
// saying so.
func (s *session) runTask(ctx context.Context, a *agent, t *todo) (*note, error) {
	tk := &task{s: s, a: a, t: t, seen: map[string]bool{}, notes: map[int]string{}}
	l := &loop{
		client:    s.r.model,
		temp:      s.temperature(),
		maxTokens: s.cfg.MaxTokens,
		messages:  s.agentMessages(ctx, a, t),
		tools:     tk.tools(),
		maxSteps:  s.cfg.AgentMaxSteps,
		before:    tk.beforeStep,
		// An agent that stops calling tools has said what it had to say.
		maxIdle: 1,
	}
	res, err := l.run(ctx)
	if err != nil {
		return nil, err
	}
	if res.end == endSteps {
		status(s.sink, "research", fmt.Sprintf("%s reached the step limit (%d) on %q", a.id, s.cfg.AgentMaxSteps, t.title), "")
	}
	return tk.writeNote(ctx, res)
}

// agentMessages is the agent's prompt: its role and its memory (its last
// notes, main.md's insights, the research context) — never the chat.
func (s *session) agentMessages(ctx context.Context, a *agent, t *todo) []llm.Message {
	p := a.profile
	sys := fmt.Sprintf(`You are %s, a researcher agent in a research team. Specialisation: %s. Working style: %s. Preferred sources: %s.
You work on one task at a time, in steps. Each step, call tools:
- web_search(query): a web search; write the query as a person would type it into a browser. Returns titles, URLs and snippets.
- scrape_url(urls): reads pages and returns what they say about your task. Only facts from pages you read count as findings; snippets are leads.
- done(): call when you have enough material for the task, or when nothing more can be found.
Plan your approach, search, judge whether the results are relevant, and if they are not, reformulate the query (at most %d reformulations per task). Read the most promising pages. Prefer specific facts, figures, dates and primary sources.
You have at most %d steps for this task. Write in %s. Current date: %s.`,
		a.id, p.Specialisation, orDash(p.Style), orDash(p.SourcePreferences), s.cfg.MaxReformulations, s.cfg.AgentMaxSteps, s.lang.Name, dateIn(s.in.Now, s.in.Timezone))

	var u strings.Builder
	u.WriteString(s.context())
	if ins := s.insights(ctx); ins != "" {
		fmt.Fprintf(&u, "\nKey insights of the research so far (main.md):\n%s\n", ins)
	}
	s.board.mu.Lock()
	mem := a.notes[max(0, len(a.notes)-s.cfg.MemoryNotes):]
	var memory strings.Builder
	for _, n := range mem {
		fmt.Fprintf(&memory, "- %s: %s\n", n.title, clip(n.findings, 400))
	}
	s.board.mu.Unlock()
	if memory.Len() > 0 {
		fmt.Fprintf(&u, "\nYour earlier notes:\n%s", memory.String())
	}
	fmt.Fprintf(&u, "\nYour current task: %s\nObjective: %s\n", t.title, orDash(t.objective))
	return []llm.Message{{Role: llm.RoleSystem, Content: sys}, {Role: llm.RoleUser, Content: u.String()}}
}

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "—"
	}
	return s
}

func (tk *task) tools() []tool {
	return []tool{
		{
			def: llm.Tool{Name: "web_search", Description: "Search the web. Returns results with title, url and snippet.",
				Parameters: object(map[string]any{"query": str("a natural search query, as typed into a browser")}, "query")},
			run: noStop(tk.webSearch),
		},
		{
			def: llm.Tool{Name: "scrape_url", Description: "Read web pages and return what they say about the task.",
				Parameters: object(map[string]any{"urls": map[string]any{
					"type": "array", "items": map[string]any{"type": "string"},
					"description": fmt.Sprintf("page URLs to read, at most %d", tk.s.cfg.ScrapeMaxURLs),
				}}, "urls")},
			run: noStop(tk.scrape),
		},
		{
			def: llm.Tool{Name: "done", Description: "Signal that the task is finished.", Parameters: object(map[string]any{})},
			run: func(context.Context, json.RawMessage) (string, bool, error) { return "Task finished.", true, nil },
		},
	}
}

func (tk *task) webSearch(ctx context.Context, raw json.RawMessage) (string, error) {
	var args struct {
		Query string `json:"query"`
	}
	if msg := decodeArgs(raw, &args); msg != "" {
		return msg, nil
	}
	q := strings.Join(strings.Fields(args.Query), " ")
	if q == "" {
		return "Error: query is empty.", nil
	}
	if len([]rune(q)) > maxQueryRunes {
		return fmt.Sprintf("Error: the query is too long (%d characters); write a short search query of at most %d.", len([]rune(q)), maxQueryRunes), nil
	}
	s := tk.s
	tk.mu.Lock()
	if tk.searches > s.cfg.MaxReformulations {
		tk.mu.Unlock()
		return fmt.Sprintf("The limit of %d reformulations for this task is reached. Read the most promising pages with scrape_url, or call done.", s.cfg.MaxReformulations), nil
	}
	tk.searches++
	left := s.cfg.MaxReformulations - (tk.searches - 1)
	tk.mu.Unlock()

	round := s.nextRound()
	s.sink.Emit(event.Event{Type: event.TypeQuery, Time: time.Now(), Query: &event.Query{Query: q, Total: 1, Status: event.QueryStarted, Iteration: round}})
	res, err := s.provider.Search(ctx, search.Query{Text: q, MaxResults: s.cfg.MaxResults, Language: s.lang.Code})
	ev := &event.Query{Query: q, Total: 1, Iteration: round}
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		ev.Status, ev.Error = event.QueryError, err.Error()
		s.sink.Emit(event.Event{Type: event.TypeQuery, Time: time.Now(), Query: ev})
		return fmt.Sprintf("The search failed: %v. Try another query or read pages you already know of.", err), nil
	}
	res = search.Filter(search.Dedupe(res), s.cfg.BlockList)
	if len(res) > s.cfg.MaxResults {
		res = res[:s.cfg.MaxResults]
	}
	n, imgs := len(res), 0
	if n > 0 {
		ev.Provider = res[0].Provider
	}
	ev.Status, ev.ResultsCount, ev.ImagesCount = event.QueryCompleted, &n, &imgs
	s.sink.Emit(event.Event{Type: event.TypeQuery, Time: time.Now(), Query: ev})

	var b strings.Builder
	fresh := 0
	tk.mu.Lock()
	for i, r := range res {
		key := search.NormalizeURL(r.URL)
		if !tk.seen[key] {
			tk.seen[key] = true
			tk.hits = append(tk.hits, r)
			fresh++
		}
		fmt.Fprintf(&b, "%d. %s\n   URL: %s\n   %s\n", i+1, r.Title, r.URL, clip(r.Snippet, 300))
	}
	tk.mu.Unlock()
	for _, r := range res {
		s.sink.Emit(event.Event{Type: event.TypeSource, Time: time.Now(), Source: &sova.Source{
			URL: r.URL, Title: r.Title, Snippet: clip(r.Snippet, 300), Kind: sova.SourceWeb, Published: r.Published, Favicon: r.Favicon,
		}})
	}
	switch {
	case n == 0:
		return fmt.Sprintf("No results for %q. Reformulate the query (%d reformulations left).", q, left), nil
	case fresh == 0:
		return fmt.Sprintf("Results for %q repeat what you have already seen:\n%s\nReformulate the query (%d reformulations left) or read pages.", q, b.String(), left), nil
	}
	return fmt.Sprintf("Results for %q:\n%s\nJudge their relevance; read the most promising pages with scrape_url, or reformulate the query if they miss the task.", q, b.String()), nil
}

func (tk *task) scrape(ctx context.Context, raw json.RawMessage) (string, error) {
	var args struct {
		URLs stringList `json:"urls"`
	}
	if msg := decodeArgs(raw, &args); msg != "" {
		return msg, nil
	}
	s := tk.s
	var urls []string
	seen := map[string]bool{}
	for _, u := range args.URLs {
		u = strings.TrimSpace(u)
		if u == "" || seen[search.NormalizeURL(u)] {
			continue
		}
		seen[search.NormalizeURL(u)] = true
		urls = append(urls, u)
	}
	if len(urls) == 0 {
		return "Error: give at least one URL.", nil
	}
	var extra string
	if len(urls) > s.cfg.ScrapeMaxURLs {
		extra = fmt.Sprintf("\nOnly the first %d URLs were read; ask again for the others if needed.", s.cfg.ScrapeMaxURLs)
		urls = urls[:s.cfg.ScrapeMaxURLs]
	}
	out := make([]string, len(urls))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, s.cfg.Concurrency))
	for i, u := range urls {
		g.Go(func() error {
			text, err := tk.readOne(gctx, u)
			out[i] = text
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return "", err
	}
	return strings.Join(out, "\n\n") + extra, nil
}

// readOne reads and summarises one page for the task. Only a context
// error is returned; a page that cannot be read is reported as text.
func (tk *task) readOne(ctx context.Context, u string) (string, error) {
	s := tk.s
	if blocked := !s.cfg.BlockList.Allowed(search.Result{URL: u}); blocked {
		return fmt.Sprintf("Not read %s: the site is on the block list.", u), nil
	}
	title := tk.titleOf(u)
	// A page another agent read already is not fetched again, nor shown
	// as read again.
	again := s.pages.fetched(u)
	if !again {
		s.sink.Emit(event.Event{Type: event.TypePage, Time: time.Now(), Page: &event.Page{URL: u, Title: title, State: event.PageReading}})
	}
	pg, _, err := s.pages.fetch(ctx, s.r.reader, u)
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		s.sink.Emit(event.Event{Type: event.TypePage, Time: time.Now(), Page: &event.Page{URL: u, Title: title, State: event.PageFailed, Error: err.Error()}})
		return fmt.Sprintf("Could not read %s: %v", u, err), nil
	}
	if pg.Title != "" {
		title = pg.Title
	}
	summary, err := s.summarise(ctx, tk.t, title, pg.Markdown)
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		// The page was read; its text serves when no summary can be made.
		summary = clip(pg.Markdown, 1500)
	}
	src := sova.Source{URL: u, Title: title, Snippet: clip(summary, 300), Kind: sova.SourceWeb, Published: pg.Published}
	if r, ok := tk.hit(u); ok {
		src.Favicon = r.Favicon
		if src.Published == "" {
			src.Published = r.Published
		}
	}
	p := s.pages.add(src, summary)
	tk.mu.Lock()
	if _, dup := tk.notes[p.n]; !dup {
		tk.read = append(tk.read, p)
	}
	tk.notes[p.n] = summary
	tk.mu.Unlock()
	if !again {
		s.sink.Emit(event.Event{Type: event.TypePage, Time: time.Now(), Page: &event.Page{URL: u, Title: title, State: event.PageRead, Chars: pg.Chars}})
	}
	return fmt.Sprintf("[%d] %s\nURL: %s\n%s", p.n, title, u, summary), nil
}

func (tk *task) hit(u string) (search.Result, bool) {
	key := search.NormalizeURL(u)
	tk.mu.Lock()
	defer tk.mu.Unlock()
	for _, r := range tk.hits {
		if search.NormalizeURL(r.URL) == key {
			return r, true
		}
	}
	return search.Result{}, false
}

func (tk *task) titleOf(u string) string {
	if r, ok := tk.hit(u); ok {
		return r.Title
	}
	return ""
}

// summarise condenses a page for a task with the fast model.
func (s *session) summarise(ctx context.Context, t *todo, title, content string) (string, error) {
	sys := "You condense a web page for a researcher. Keep every fact, number, date, name and quotation that bears on the task; " +
		"drop navigation, adverts, cookie notices and anything unrelated. At most 250 words, in " + s.lang.Name +
		". If the page says nothing relevant, say so in one sentence."
	user := fmt.Sprintf("Research request: %s\nTask: %s — %s\n\nPage title: %s\n\nPage content:\n%s", s.question, t.title, t.objective, title, content)
	resp, err := s.r.fast.Complete(ctx, llm.Request{Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: sys}, {Role: llm.RoleUser, Content: user},
	}})
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(resp.Content) == "" {
		return "", errors.New("empty summary")
	}
	return strings.TrimSpace(resp.Content), nil
}

// beforeStep makes the agent reflect every ReflectEvery steps: a short look
// at how the task goes, which may change the approach or ask the
// supervisor for help.
func (tk *task) beforeStep(ctx context.Context, step int, msgs []llm.Message) ([]llm.Message, error) {
	s := tk.s
	if (step-1)%s.cfg.ReflectEvery != 0 {
		return msgs, nil
	}
	tk.s.board.setState(tk.a, AgentReflecting, "")
	if err := s.board.publish(ctx, tk.a); err != nil {
		return nil, err
	}
	sys := fmt.Sprintf("You are %s (%s), a researcher agent, reflecting on your task after %d steps. Judge whether your results serve the task; if not, say how to change the approach (a reformulated query, other sources) or whether to stop. Ask the supervisor for help only if you are stuck. Write in %s.",
		tk.a.id, tk.a.profile.Specialisation, step-1, s.lang.Name)
	var b strings.Builder
	fmt.Fprintf(&b, "Research request: %s\nTask: %s — %s\n\nYour work so far:\n", s.question, tk.t.title, tk.t.objective)
	for _, m := range msgs[2:] {
		switch {
		case m.Role == llm.RoleAssistant && len(m.ToolCalls) > 0:
			for _, c := range m.ToolCalls {
				fmt.Fprintf(&b, "- called %s %s\n", c.Name, clip(c.Arguments, 200))
			}
		case m.Role == llm.RoleTool:
			fmt.Fprintf(&b, "  result: %s\n", clip(m.Content, 600))
		}
	}
	r, _, err := llm.Structured[AgentReflection](ctx, s.r.fast, llm.Request{
		Messages: []llm.Message{{Role: llm.RoleSystem, Content: sys}, {Role: llm.RoleUser, Content: b.String()}},
	}, llm.WithSchemaName("AgentReflection"))
	detail := ""
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// A failed reflection costs the agent nothing but the reflection.
		tk.s.board.setState(tk.a, AgentWorking, "")
		return msgs, nil
	}
	msg := fmt.Sprintf("Reflection after %d steps: %s", step-1, r.Assessment)
	if !r.OnTrack && r.NextApproach != "" {
		msg += "\nChange of approach: " + r.NextApproach
	} else if r.NextApproach != "" {
		msg += "\nNext: " + r.NextApproach
	}
	if r.NeedsHelp && strings.TrimSpace(r.HelpRequest) != "" {
		tk.mu.Lock()
		tk.help = strings.TrimSpace(r.HelpRequest)
		tk.mu.Unlock()
		msg += "\nYour request for help goes to the supervisor with your note; carry on as well as you can."
		detail = "asks the supervisor: " + clip(r.HelpRequest, 160)
	} else {
		detail = clip(r.Assessment, 160)
	}
	tk.mu.Lock()
	tk.reflect = append(tk.reflect, msg)
	tk.mu.Unlock()
	tk.s.board.setState(tk.a, AgentWorking, detail)
	if err := s.board.publish(ctx, tk.a); err != nil {
		return nil, err
	}
	return append(msgs, llm.Message{Role: llm.RoleUser, Content: msg + fmt.Sprintf("\nYou have %d steps left.", s.cfg.AgentMaxSteps-step+1)}), nil
}

// writeNote turns the task's material into a note (only findings, no
// metadata) and saves it to items/ and the agent's file.
func (tk *task) writeNote(ctx context.Context, res *loopResult) (*note, error) {
	s := tk.s
	tk.mu.Lock()
	read := slices.Clone(tk.read)
	hits := slices.Clone(tk.hits)
	help := tk.help
	reflections := slices.Clone(tk.reflect)
	summaries := map[int]string{}
	for k, v := range tk.notes {
		summaries[k] = v
	}
	tk.mu.Unlock()

	n := &note{agent: tk.a.id, todo: tk.t.title, help: help}
	if len(read) == 0 && len(hits) == 0 {
		n.title = tk.t.title
		n.findings = "Nothing relevant was found for this task."
		if res.text != "" {
			n.findings += " " + clip(res.text, 500)
		}
		n.relevance = "low"
	} else {
		sys := fmt.Sprintf(`You are %s (%s). Write the note for the task you just finished: only the important findings — facts, figures, dates, names, conclusions — no metadata, no page descriptions, no navigation text.
Cite the read pages with their numbers in square brackets, like [3], right after each claim; cite only the numbers listed under "Pages read". Search snippets are unverified leads: mention them only as open leads, without citations.
Write in %s.`, tk.a.id, tk.a.profile.Specialisation, s.lang.Name)
		var b strings.Builder
		fmt.Fprintf(&b, "Research request: %s\nTask: %s — %s\n\nPages read:\n", s.question, tk.t.title, tk.t.objective)
		for _, p := range read {
			fmt.Fprintf(&b, "[%d] %s — %s\n%s\n\n", p.n, p.src.Title, p.src.URL, summaries[p.n])
		}
		if len(read) == 0 {
			b.WriteString("(none)\n\n")
		}
		b.WriteString("Search snippets (not read):\n")
		for i, h := range hits[:min(len(hits), 12)] {
			fmt.Fprintf(&b, "%d. %s — %s\n", i+1, h.Title, clip(h.Snippet, 200))
		}
		for _, r := range reflections {
			fmt.Fprintf(&b, "\n%s\n", r)
		}
		if res.text != "" {
			fmt.Fprintf(&b, "\nYour last remark: %s\n", clip(res.text, 800))
		}
		out, _, err := llm.Structured[AgentNote](ctx, s.r.model, llm.Request{
			Messages:    []llm.Message{{Role: llm.RoleSystem, Content: sys}, {Role: llm.RoleUser, Content: b.String()}},
			Temperature: s.temperature(),
		}, llm.WithSchemaName("AgentNote"))
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			// The material is there; a plain note keeps it.
			status(s.sink, "research", fmt.Sprintf("%s could not write its note; keeping the page summaries", tk.a.id), err.Error())
			out = AgentNote{Title: tk.t.title, Relevance: "medium"}
			var f strings.Builder
			for _, p := range read {
				fmt.Fprintf(&f, "%s [%d]\n\n", summaries[p.n], p.n)
			}
			out.Findings = strings.TrimSpace(f.String())
			if out.Findings == "" {
				out.Findings, out.Relevance = "Only search snippets were found; no page could be read.", "low"
			}
		}
		n.title = strings.TrimSpace(out.Title)
		n.findings = s.pages.keepKnownMarkers(strings.TrimSpace(out.Findings))
		for _, f := range out.KeyFacts {
			if f = strings.TrimSpace(f); f != "" {
				n.keyFacts = append(n.keyFacts, s.pages.keepKnownMarkers(f))
			}
		}
		n.relevance = strings.ToLower(strings.TrimSpace(out.Relevance))
		n.sources = noteSources(s.pages, out, read)
	}
	n.item = s.nextItem()
	if err := s.ws.Write(ctx, itemFile(n.item), s.noteDoc(n, 1)); err != nil {
		return nil, fatal(fmt.Errorf("writing %s: %w", itemFile(n.item), err))
	}
	d := NoteData{Item: n.item, Agent: n.agent, Todo: n.todo, Title: n.title, Relevance: n.relevance, File: itemFile(n.item), Sources: []NoteSource{}}
	for _, num := range n.sources {
		if p, ok := s.pages.get(num); ok {
			d.Sources = append(d.Sources, NoteSource{Number: p.n, URL: p.src.URL, Title: p.src.Title})
		}
	}
	emitData(s.sink, DataNote, fmt.Sprintf("note-%d", n.item), d)
	return n, nil
}

// noteSources are the read pages a note relies on: those it cites, and
// those whose URLs it lists, if the run read them.
func noteSources(reg *registry, out AgentNote, read []*page) []int {
	var nums []int
	seen := map[int]bool{}
	add := func(n int) {
		if !seen[n] {
			seen[n] = true
			nums = append(nums, n)
		}
	}
	for _, n := range reg.markers(out.Findings + "\n" + strings.Join(out.KeyFacts, "\n")) {
		add(n)
	}
	for _, u := range out.Sources {
		if p, ok := reg.lookup(u); ok {
			add(p.n)
		}
	}
	if len(nums) == 0 {
		for _, p := range read {
			add(p.n)
		}
	}
	return nums
}

// noteDoc renders a note as Markdown with its sources; level is the
// heading level.
func (s *session) noteDoc(n *note, level int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s Item %d: %s\n\n", strings.Repeat("#", level), n.item, n.title)
	fmt.Fprintf(&b, "Agent: %s · Task: %s", n.agent, n.todo)
	if n.relevance != "" {
		fmt.Fprintf(&b, " · Relevance: %s", n.relevance)
	}
	b.WriteString("\n\n")
	b.WriteString(n.findings)
	b.WriteString("\n\n")
	if len(n.keyFacts) > 0 {
		b.WriteString("Key facts:\n")
		for _, f := range n.keyFacts {
			fmt.Fprintf(&b, "- %s\n", f)
		}
		b.WriteString("\n")
	}
	if len(n.sources) > 0 {
		b.WriteString("Sources:\n")
		for _, num := range n.sources {
			if p, ok := s.pages.get(num); ok {
				fmt.Fprintf(&b, "- [%d] %s — %s\n", p.n, p.src.Title, p.src.URL)
			}
		}
		b.WriteString("\n")
	}
	if n.help != "" {
		fmt.Fprintf(&b, "Request to the supervisor: %s\n\n", n.help)
	}
	return b.String()
}
