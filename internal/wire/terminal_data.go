package wire

import (
	"encoding/json"
	"strconv"

	"github.com/sova-ai/sova/internal/event"
)

// renderData prints the mode data events people follow live: the deep
// research plan, its agents and their todos, their notes and the
// supervisor's decisions. Other data events print nothing.
//
//	→ Research plan: Explain the 1930s economy
//	  ▸ Banking
//	    · Bank holiday of 1933
//	  ◆ agent_1 · Historical Analyst — working on "Bank holiday of 1933" (0/2 todos done)
//	  ✎ agent_1 · item 1: "The bank holiday" — 2 sources
//	→ Supervisor, call 1/6: continue — gaps in the banking data
//	    + agent_2: "Deposit figures"
func (t *Terminal) renderData(line func(...string), d *event.Data) {
	switch d.Name {
	case "extreme_search":
		t.renderExtreme(line, d.Value)
	case "research_plan":
		var v struct {
			Goal   string `json:"goal"`
			Themes []struct {
				Title string `json:"title"`
				Tasks []struct {
					Title string `json:"title"`
				} `json:"tasks"`
			} `json:"themes"`
			Revision int `json:"revision"`
		}
		if json.Unmarshal(d.Value, &v) != nil {
			return
		}
		head := t.words().plan
		if v.Revision > 0 {
			head = t.words().revisedPlan
		}
		if v.Goal != "" {
			head += ": " + clip(v.Goal, 160)
		}
		line(t.style(ansiCyan, "→ "), t.style(ansiBold, head))
		for _, th := range v.Themes {
			line("  ▸ ", clip(th.Title, 120))
			for _, task := range th.Tasks {
				line(t.style(ansiDim, "    · "+clip(task.Title, 120)))
			}
		}

	case "research_agent":
		var v struct {
			ID             string `json:"id"`
			Specialisation string `json:"specialisation"`
			State          string `json:"state"`
			CurrentTodo    string `json:"currentTodo"`
			Todos          []struct {
				Status string `json:"status"`
			} `json:"todos"`
			Notes  int    `json:"notes"`
			Detail string `json:"detail"`
		}
		if json.Unmarshal(d.Value, &v) != nil || v.ID == "" {
			return
		}
		done := 0
		for _, td := range v.Todos {
			if td.Status == "done" {
				done++
			}
		}
		var what string
		switch v.State {
		case "working":
			what = "working on " + quote(clip(v.CurrentTodo, 100))
		case "reflecting":
			what = "reflecting on " + quote(clip(v.CurrentTodo, 100))
		case "waiting":
			what = "waiting for the supervisor"
		case "done":
			what = "done"
		default:
			what = v.State
		}
		tail := " (" + strconv.Itoa(done) + "/" + strconv.Itoa(len(v.Todos)) + " todos done"
		if v.Notes > 0 {
			tail += ", " + t.words().notes(v.Notes)
		}
		tail += ")"
		if v.Detail != "" {
			tail += " · " + clip(v.Detail, 120)
		}
		mark := t.style(ansiCyan, "  ◆ ")
		if v.State == "done" {
			mark = t.style(ansiGreen, "  ◆ ")
		}
		line(mark, t.style(ansiBold, v.ID), " · ", clip(v.Specialisation, 60), " — ", what, t.style(ansiDim, tail))

	case "research_note":
		var v struct {
			Item    int               `json:"item"`
			Agent   string            `json:"agent"`
			Title   string            `json:"title"`
			Sources []json.RawMessage `json:"sources"`
		}
		if json.Unmarshal(d.Value, &v) != nil || v.Agent == "" {
			return
		}
		line(t.style(ansiGreen, "  ✎ "), v.Agent, " · item ", strconv.Itoa(v.Item), ": ", quote(clip(v.Title, 120)),
			t.style(ansiDim, " — "+t.words().sources(len(v.Sources))))

	case "supervisor_decision":
		var v struct {
			Call     int    `json:"call"`
			MaxCalls int    `json:"maxCalls"`
			Decision string `json:"decision"`
			Reason   string `json:"reason"`
			Forced   bool   `json:"forced"`
			NewTodos []struct {
				Agent string `json:"agent"`
				Title string `json:"title"`
			} `json:"newTodos"`
		}
		if json.Unmarshal(d.Value, &v) != nil || v.Decision == "" {
			return
		}
		head := "Supervisor, call " + strconv.Itoa(v.Call)
		if v.MaxCalls > 0 {
			head += "/" + strconv.Itoa(v.MaxCalls)
		}
		decision := v.Decision
		if v.Forced {
			decision += " (forced)"
		}
		style := ansiBold
		if v.Decision == "finish" {
			style = ansiGreen
		} else if v.Decision == "replan" {
			style = ansiYellow
		}
		reason := ""
		if v.Reason != "" {
			reason = " — " + clip(v.Reason, 160)
		}
		line(t.style(ansiCyan, "→ "), head+": ", t.style(style, decision), t.style(ansiDim, reason))
		for _, nt := range v.NewTodos {
			line(t.style(ansiDim, "    + "+nt.Agent+": ") + quote(clip(nt.Title, 100)))
		}
	}
}
