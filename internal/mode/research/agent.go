package research

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	agentloop "github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/tools"
)

// maxQueryRunes bounds a web_search query: search engines reject or
// mangle longer ones, and a model writing paragraphs into the query box
// should be told.
const maxQueryRunes = 400

// scrapeURL is the name deep_research's prompts give the page-reading
// tool (tools.Retrieve).
const scrapeURL = "scrape_url"

// task is one agent's work on one todo.
type task struct {
	s     *session
	a     *agent
	t     *todo
	found tools.Found // search results seen in this task

	mu      sync.Mutex
	read    []*tools.Page  // pages read in this task
	notes   map[int]string // page number → what this task learnt from it
	help    string
	reflect []string
}

// runTask runs one todo as a ReAct loop with web_search, scrape_url and
// done (seed 001 §4, stage 3), then writes the note. A nil note with a nil
// error does not happen: a task that found nothing still writes a note
// saying so.
func (s *session) runTask(ctx context.Context, a *agent, t *todo) (*note, error) {
	tk := &task{s: s, a: a, t: t, notes: map[int]string{}}
	cfg := agentloop.Config{
		Tools:       untrusted(tk.tools()),
		MaxSteps:    s.cfg.AgentMaxSteps,
		PrepareStep: tk.reflectEvery,
		// An agent that stops calling tools has said what it had to say.
		MaxIdle: 1,
		// After each step (each reply with calls, each result) the task's
		// work so far goes into the checkpoint.
		Checkpoint: tk.checkpoint,
	}
	s.board.mu.Lock()
	pr := t.progress
	s.board.mu.Unlock()
	var msgs []llm.Message
	if pr != nil && len(pr.Steps) > 0 && len(pr.Messages) > 0 {
		cfg.Done, msgs = pr.Steps, pr.Messages
		tk.resume(pr)
		status(s.sink, "continue", fmt.Sprintf("%s resumes %q from step %d", a.id, t.title, len(pr.Steps)), "")
	} else {
		msgs = s.agentMessages(ctx, a, t)
	}
	res, err := s.loop(ctx, cfg, msgs)
	if err != nil {
		return nil, err
	}
	if res.End == agentloop.EndSteps {
		status(s.sink, "research", fmt.Sprintf("%s reached the step limit (%d) on %q", a.id, s.cfg.AgentMaxSteps, t.title), "")
	}
	return tk.writeNote(ctx, res)
}

// checkpoint keeps the task's work so far in the research's checkpoint.
func (tk *task) checkpoint(ctx context.Context, steps []agentloop.Step, msgs []llm.Message) error {
	tk.mu.Lock()
	pr := &savedProgress{Steps: steps, Messages: msgs, Summaries: maps.Clone(tk.notes), Found: tk.found.All(),
		Reflect: slices.Clone(tk.reflect), Help: tk.help}
	for _, p := range tk.read {
		pr.Read = append(pr.Read, p.N)
	}
	tk.mu.Unlock()
	tk.s.board.mu.Lock()
	tk.t.progress = pr
	tk.s.board.mu.Unlock()
	return tk.s.saveCheckpoint(ctx, phaseBoard)
}

// resume sets the task's gathered material to what its checkpoint kept.
func (tk *task) resume(pr *savedProgress) {
	tk.mu.Lock()
	defer tk.mu.Unlock()
	for _, n := range pr.Read {
		if p, ok := tk.s.pages.Get(n); ok {
			tk.read = append(tk.read, p)
		}
	}
	maps.Copy(tk.notes, pr.Summaries)
	tk.found.Restore(pr.Found)
	tk.reflect = slices.Clone(pr.Reflect)
	tk.help = pr.Help
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
You have at most %d steps for this task. Write in %s. Current date: %s.

%s`,
		a.id, p.Specialisation, orDash(p.Style), orDash(p.SourcePreferences), s.cfg.MaxReformulations, s.cfg.AgentMaxSteps, s.lang.Name, dateIn(s.in.Now, s.in.Timezone), agentloop.UntrustedRule)

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

func (tk *task) tools() []agentloop.Tool {
	s := tk.s
	return []agentloop.Tool{
		tools.WebSearch(s.tools, tools.WebSearchOptions{
			Results: s.cfg.MaxResults, Reformulations: s.cfg.MaxReformulations, MaxQueryRunes: maxQueryRunes,
			Language: s.lang.Code, BlockList: s.cfg.BlockList, Format: tools.Text, Found: &tk.found,
			ReadTool: scrapeURL, DoneTool: "done",
		}),
		tools.Retrieve(s.tools, tools.RetrieveOptions{
			Name: scrapeURL, MaxURLs: s.cfg.ScrapeMaxURLs, Concurrency: s.cfg.Concurrency, BlockList: s.cfg.BlockList,
			Found: &tk.found, Description: "Read web pages and return what they say about the task.",
			Summarise: func(ctx context.Context, title, content string) (string, error) {
				return s.summarise(ctx, tk.t, title, content)
			},
			OnRead: func(p *tools.Page, summary string) {
				tk.mu.Lock()
				defer tk.mu.Unlock()
				if _, dup := tk.notes[p.N]; !dup {
					tk.read = append(tk.read, p)
				}
				tk.notes[p.N] = summary
			},
		}),
		agentloop.NewTool("done", "Signal that the task is finished.", func(context.Context, struct{}) (agentloop.Output, error) {
			return agentloop.Output{Text: "Task finished.", Stop: true}, nil
		}),
	}
}

// summarise condenses a page for a task with the fast model.
func (s *session) summarise(ctx context.Context, t *todo, title, content string) (string, error) {
	sys := "You condense a web page for a researcher. Keep every fact, number, date, name and quotation that bears on the task; " +
		"drop navigation, adverts, cookie notices and anything unrelated. At most 250 words, in " + s.lang.Name +
		". If the page says nothing relevant, say so in one sentence.\n\n" + agentloop.UntrustedRule
	user := fmt.Sprintf("Research request: %s\nTask: %s — %s\n\nPage title: %s\n\nPage content:\n%s", s.question, t.title, t.objective, title, agentloop.Untrusted("web page: "+title, content))
	return tools.Condense(ctx, s.r.fast, sys, user)
}

// reflectEvery is the agent's step policy: every ReflectEvery steps it
// reflects, a short look at how the task goes, which may change the
// approach or ask the supervisor for help. The tools stay offered at
// every step.
func (tk *task) reflectEvery(ctx context.Context, p *agentloop.StepPlan) error {
	if p.Step == 1 {
		return nil
	}
	msgs, err := tk.reflection(ctx, p.Step, p.Messages)
	p.Messages = msgs
	return err
}

// reflection returns msgs with the agent's reflection after step-1 steps
// when one is due.
func (tk *task) reflection(ctx context.Context, step int, msgs []llm.Message) ([]llm.Message, error) {
	s := tk.s
	if (step-1)%s.cfg.ReflectEvery != 0 {
		return msgs, nil
	}
	tk.s.board.setState(tk.a, AgentReflecting, "")
	if err := s.board.publish(ctx, tk.a); err != nil {
		return msgs, err
	}
	sys := fmt.Sprintf("You are %s (%s), a researcher agent, reflecting on your task after %d steps. Judge whether your results serve the task; if not, say how to change the approach (a reformulated query, other sources) or whether to stop. Ask the supervisor for help only if you are stuck. Write in %s.\n\n%s",
		tk.a.id, tk.a.profile.Specialisation, step-1, s.lang.Name, agentloop.UntrustedRule)
	var b strings.Builder
	fmt.Fprintf(&b, "Research request: %s\nTask: %s — %s\n\nYour work so far:\n", s.question, tk.t.title, tk.t.objective)
	var work strings.Builder // what the tools returned is in it: data
	for _, m := range msgs[2:] {
		switch {
		case m.Role == llm.RoleAssistant && len(m.ToolCalls) > 0:
			for _, c := range m.ToolCalls {
				fmt.Fprintf(&work, "- called %s %s\n", c.Name, clip(c.Arguments, 200))
			}
		case m.Role == llm.RoleTool:
			fmt.Fprintf(&work, "  result: %s\n", clip(m.Content, 600))
		}
	}
	b.WriteString(agentloop.Untrusted("the agent's tool calls and results", work.String()))
	r, _, err := llm.Structured[AgentReflection](ctx, s.r.fast, llm.Request{
		Messages: []llm.Message{{Role: llm.RoleSystem, Content: sys}, {Role: llm.RoleUser, Content: b.String()}},
	}, llm.WithSchemaName("AgentReflection"))
	detail := ""
	if err != nil {
		if ctx.Err() != nil {
			return msgs, ctx.Err()
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
		return msgs, err
	}
	return append(msgs, llm.Message{Role: llm.RoleUser, Content: msg + fmt.Sprintf("\nYou have %d steps left.", s.cfg.AgentMaxSteps-step+1)}), nil
}

// writeNote turns the task's material into a note (only findings, no
// metadata) and saves it to items/ and the agent's file.
func (tk *task) writeNote(ctx context.Context, res *agentloop.Outcome) (*note, error) {
	s := tk.s
	tk.mu.Lock()
	read := slices.Clone(tk.read)
	hits := tk.found.All()
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
		if text := res.LastText(); text != "" {
			n.findings += " " + clip(text, 500)
		}
		n.relevance = "low"
	} else {
		sys := fmt.Sprintf(`You are %s (%s). Write the note for the task you just finished: only the important findings — facts, figures, dates, names, conclusions — no metadata, no page descriptions, no navigation text.
Cite the read pages with their numbers in square brackets, like [3], right after each claim; cite only the numbers listed under "Pages read". Search snippets are unverified leads: mention them only as open leads, without citations.
Write in %s.

%s`, tk.a.id, tk.a.profile.Specialisation, s.lang.Name, agentloop.UntrustedRule)
		var b strings.Builder
		fmt.Fprintf(&b, "Research request: %s\nTask: %s — %s\n\nPages read:\n", s.question, tk.t.title, tk.t.objective)
		for _, p := range read {
			fmt.Fprintf(&b, "[%d] %s — %s\n%s\n\n", p.N, p.Source.Title, p.Source.URL, agentloop.Untrusted(p.Source.URL, summaries[p.N]))
		}
		if len(read) == 0 {
			b.WriteString("(none)\n\n")
		}
		b.WriteString("Search snippets (not read):\n")
		var snippets strings.Builder
		for i, h := range hits[:min(len(hits), 12)] {
			fmt.Fprintf(&snippets, "%d. %s — %s\n", i+1, h.Title, clip(h.Snippet, 200))
		}
		b.WriteString(agentloop.Untrusted("search snippets", snippets.String()))
		for _, r := range reflections {
			fmt.Fprintf(&b, "\n%s\n", r)
		}
		if text := res.LastText(); text != "" {
			fmt.Fprintf(&b, "\nYour last remark: %s\n", clip(text, 800))
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
				fmt.Fprintf(&f, "%s [%d]\n\n", summaries[p.N], p.N)
			}
			out.Findings = strings.TrimSpace(f.String())
			if out.Findings == "" {
				out.Findings, out.Relevance = "Only search snippets were found; no page could be read.", "low"
			}
		}
		n.title = strings.TrimSpace(out.Title)
		n.findings = s.pages.KeepKnownMarkers(strings.TrimSpace(out.Findings))
		for _, f := range out.KeyFacts {
			if f = strings.TrimSpace(f); f != "" {
				n.keyFacts = append(n.keyFacts, s.pages.KeepKnownMarkers(f))
			}
		}
		n.relevance = string(out.Relevance) // one of Relevance.Enum: Structured checked it
		n.sources = noteSources(s.pages, out, read)
	}
	n.item = s.nextItem()
	if err := s.ws.Write(ctx, itemFile(n.item), s.noteDoc(n, 1)); err != nil {
		return nil, agentloop.Fatal(fmt.Errorf("writing %s: %w", itemFile(n.item), err))
	}
	d := NoteData{Item: n.item, Agent: n.agent, Todo: n.todo, Title: n.title, Relevance: n.relevance, File: itemFile(n.item), Sources: []NoteSource{}}
	for _, num := range n.sources {
		if p, ok := s.pages.Get(num); ok {
			d.Sources = append(d.Sources, NoteSource{Number: p.N, URL: p.Source.URL, Title: p.Source.Title})
		}
	}
	emitData(s.sink, DataNote, fmt.Sprintf("note-%d", n.item), d)
	return n, nil
}

// noteSources are the read pages a note relies on: those it cites, and
// those whose URLs it lists, if the run read them.
func noteSources(reg *tools.Pages, out AgentNote, read []*tools.Page) []int {
	var nums []int
	seen := map[int]bool{}
	add := func(n int) {
		if !seen[n] {
			seen[n] = true
			nums = append(nums, n)
		}
	}
	for _, n := range reg.Markers(out.Findings + "\n" + strings.Join(out.KeyFacts, "\n")) {
		add(n)
	}
	for _, u := range out.Sources {
		if p, ok := reg.Lookup(u); ok {
			add(p.N)
		}
	}
	if len(nums) == 0 {
		for _, p := range read {
			add(p.N)
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
			if p, ok := s.pages.Get(num); ok {
				fmt.Fprintf(&b, "- [%d] %s — %s\n", p.N, p.Source.Title, p.Source.URL)
			}
		}
		b.WriteString("\n")
	}
	if n.help != "" {
		fmt.Fprintf(&b, "Request to the supervisor: %s\n\n", n.help)
	}
	return b.String()
}

// untrusted marks what the researcher's tools return as data for its
// model (agent.UntrustedTools).
func untrusted(ts []agentloop.Tool) []agentloop.Tool { return agentloop.UntrustedTools("", ts) }
