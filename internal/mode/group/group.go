// Package group is the search groups (seed 000 §1.2): web, academic,
// youtube, reddit, code, x, stocks, crypto, memory and connectors. A group is a list of tools and its
// instructions, run as a tool-calling agent on the one loop with seed 000
// §9.3's policy: one round of tools, then the answer, whose citations are
// checked as it streams (as in the docs mode). A tool whose provider
// needs a setting that is missing is withdrawn, and the run says so: a
// status event, and the instructions tell the model which setting would
// enable it.
//
// Groups is the table; New makes the Mode of one entry.
package group

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/lang"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/search"
	"github.com/sova-ai/sova/internal/tools"
)

// Fallback is the group an unknown group id falls back to (000 §6.1).
const Fallback = "web"

// Config tunes the groups.
type Config struct {
	// Providers are what the tools are built from; a nil provider
	// withdraws its tools.
	Providers tools.Providers
	// MaxSteps bounds the model calls of a run (default 3: the tool round,
	// the answer, and one to spare).
	MaxSteps     int
	Temperature  float64
	MaxTokens    int
	HistoryLimit int
	BlockList    search.BlockList
	// Now is the clock of the datetime tool; nil: time.Now.
	Now func() time.Time
}

// Mode is one search group.
type Mode struct {
	spec   Spec
	cfg    Config
	model  llm.Model
	repair llm.Model
}

// New returns the mode of one group. repair (the fast model) fixes
// malformed tool calls; nil uses model.
func New(spec Spec, cfg Config, model, repair llm.Model) *Mode {
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = 3
	}
	return &Mode{spec: spec, cfg: cfg, model: model, repair: repair}
}

// All returns the modes of every group of the table, in its order.
func All(cfg Config, model, repair llm.Model) []mode.Mode {
	out := make([]mode.Mode, 0, len(Groups))
	for _, g := range Groups {
		out = append(out, New(g, cfg, model, repair))
	}
	return out
}

// ID implements mode.Mode.
func (m *Mode) ID() string { return m.spec.ID }

// Description implements mode.Mode.
func (m *Mode) Description() string { return m.spec.Description }

// Tools implements mode.ToolReporter: the group's tools this build has,
// available or withdrawn.
func (m *Mode) Tools() []mode.ToolStatus {
	var out []mode.ToolStatus
	for _, name := range m.spec.Tools {
		if st, ok := m.status(name); ok {
			out = append(out, st)
		}
	}
	return out
}

// status is a tool's availability; ok is false for a tool this build has
// no builder for (a hook of the table).
func (m *Mode) status(name string) (mode.ToolStatus, bool) {
	if _, ok := builders[name]; !ok {
		return mode.ToolStatus{}, false
	}
	return m.cfg.Providers.Status(name)
}

// build is what a run's tools are made from.
type build struct {
	cfg      Config
	run      *tools.Run
	cite     *tools.Citations
	in       mode.Input
	language lang.Language
}

// record is what the stored message keeps of a run.
type record struct {
	Group       string            `json:"group"`
	Steps       []agent.Step      `json:"steps"`
	ToolCalls   []agent.Call      `json:"toolCalls"`
	ToolResults []agent.Result    `json:"toolResults"`
	Withdrawn   []mode.ToolStatus `json:"withdrawn,omitempty"`
	Usage       llm.Usage         `json:"usage"`
	// ToolData is the structured result each call showed in the stream
	// where it differs from the text the model read (videos, code cells),
	// so that a reopened chat draws the same cards.
	ToolData []toolData `json:"toolData,omitempty"`
}

// toolData is one call's structured result.
type toolData struct {
	CallID string          `json:"callId"`
	Data   json.RawMessage `json:"data"`
}

// viewData picks the results whose stream data the stored text lacks.
func viewData(results []agent.Result) []toolData {
	var out []toolData
	for _, r := range results {
		if len(r.Data) == 0 || r.Error != "" || json.Valid([]byte(r.Output)) {
			continue
		}
		out = append(out, toolData{CallID: r.CallID, Data: r.Data})
	}
	return out
}

// Run implements mode.Mode.
func (m *Mode) Run(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
	language := mode.LanguageOf(in)
	cites := tools.NewCitations(func(src sova.Source) {
		sink.Emit(event.Event{Type: event.TypeSource, Time: time.Now(), Source: &src})
	})
	b := &build{cfg: m.cfg, run: tools.NewRun(m.cfg.Providers, sink), cite: cites, in: in, language: language}
	var ts []agent.Tool
	var withdrawn []mode.ToolStatus
	for _, name := range m.spec.Tools {
		st, ok := m.status(name)
		switch {
		case !ok:
			continue
		case !st.Available:
			withdrawn = append(withdrawn, st)
			mode.Status(sink, "tools", fmt.Sprintf("%s is not available: %s", st.Name, st.Reason), strings.Join(st.Settings, ", "))
			continue
		}
		ts = append(ts, builders[name](b))
	}

	rule := ""
	if len(ts) > 0 {
		rule = "\n\n" + agent.UntrustedRule // tool results reach the model marked as data
	}
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: m.systemPrompt(in, language, ts, withdrawn) + rule + mode.Personal(in)}}
	msgs = append(msgs, mode.LastMessages(in.History, m.cfg.HistoryLimit)...)
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: in.Question})

	if len(ts) > 0 {
		mode.Status(sink, "agent", m.spec.Working, "")
	}
	var text strings.Builder
	// An answer after tools that found no source says so first.
	guard := &mode.NoSources{Sink: sink, Lang: language, Count: cites.Count, Failure: b.run.SearchFailure,
		Write: func(piece string) {
			text.WriteString(piece)
			sink.Emit(mode.TextDelta(piece))
		},
		Citing: func(tool string) bool { return !slices.Contains(nonCiting, tool) }}
	var noSources agent.PrepareStep
	if !m.spec.Personal {
		noSources = guard.Policy
	}
	temp := m.cfg.Temperature
	out, err := agent.Run(ctx, agent.Config{
		Model: m.model, Repair: m.repair, Tools: agent.UntrustedTools("", ts), MaxSteps: m.cfg.MaxSteps,
		Temperature: &temp, MaxTokens: m.cfg.MaxTokens, Sink: sink,
		PrepareStep: agent.Policies(agent.OneToolRound, agent.LastStepAnswers, noSources),
		OnText: func(delta string) {
			if s := cites.Write(delta); s != "" {
				text.WriteString(s)
				sink.Emit(mode.TextDelta(s))
			}
		},
	}, msgs)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%s group: %w", m.spec.ID, err)
	}
	if s := cites.Flush(); s != "" {
		text.WriteString(s)
		sink.Emit(mode.TextDelta(s))
	}
	results := out.Results()
	steps, err := json.Marshal(record{Group: m.spec.ID, Steps: out.Steps, ToolCalls: out.Calls(), ToolResults: results,
		Withdrawn: withdrawn, Usage: out.Usage, ToolData: viewData(results)})
	if err != nil {
		steps = nil // never fails for these types; the answer matters more
	}
	answer := text.String()
	if !m.spec.Personal {
		answer = guard.Mark(out, answer)
	}
	return &mode.Result{
		Text:         answer,
		Sources:      cites.Cited(),
		Model:        out.Model,
		FinishReason: mode.FinishReason(out.FinishReason),
		Steps:        steps,
	}, nil
}

// nonCiting are the group tools that number no source: a run that
// called only these needs no note that nothing was read.
var nonCiting = []string{tools.TextTranslateName, tools.DatetimeName, tools.CodeInterpreterName, tools.GetWeatherDataName,
	tools.NearbyPlacesSearchName, tools.CurrencyConverterName, tools.TrackFlightName, tools.SearchMemoriesName, tools.AddMemoryName}

// systemPrompt is the group's instructions with the rules every group
// shares: one tool round, citations, date, language, and what is not
// available.
func (m *Mode) systemPrompt(in mode.Input, language lang.Language, ts []agent.Tool, withdrawn []mode.ToolStatus) string {
	var b strings.Builder
	b.WriteString(m.spec.Instructions)
	b.WriteString("\n\n")
	if len(ts) > 0 {
		names := make([]string, len(ts))
		for i, t := range ts {
			names[i] = t.Name()
		}
		fmt.Fprintf(&b, "Tools: %s. Call the tools you need in one step (several at once if useful), then answer from their results: "+
			"after that step no more tool calls are possible.\n\n", strings.Join(names, ", "))
	}
	if len(withdrawn) > 0 {
		b.WriteString("Not available on this server:\n")
		for _, w := range withdrawn {
			fmt.Fprintf(&b, "- %s: %s.", w.Name, w.Reason)
			if len(w.Settings) > 0 {
				fmt.Fprintf(&b, " Setting %s on the server enables it.", w.Settings[0])
			}
			b.WriteString("\n")
		}
		b.WriteString("If the question needs one of these, tell the person it is switched off here and which setting enables it, " +
			"then answer as well as you can without it, saying that what you know may be out of date.\n\n")
	}
	if !m.spec.Personal {
		b.WriteString("Citations:\n")
		b.WriteString("- Tool results are numbered. Cite each factual sentence with the numbers of its sources in square brackets right after the claim, like [1] or [2][5].\n")
		b.WriteString("- Cite only numbers you were given. Do not write a list of sources at the end; it is added for you.\n")
		b.WriteString("- If the results do not answer the question, say so plainly; never invent facts or citations.\n\n")
	}
	tz := in.Timezone
	if tz == "" {
		tz = "not given"
	}
	fmt.Fprintf(&b, "Current date: %s (time zone: %s).\n", mode.DateIn(in.Now, in.Timezone), tz)
	fmt.Fprintf(&b, "Answer in %s (the language of the question), in Markdown.", language.Name)
	return b.String()
}

// Names returns the ids of the groups of the table.
func Names() []string {
	out := make([]string, len(Groups))
	for i, g := range Groups {
		out[i] = g.ID
	}
	return out
}

// Known reports whether id is a group of the table.
func Known(id string) bool { return slices.Contains(Names(), id) }
