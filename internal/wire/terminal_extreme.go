package wire

import (
	"encoding/json"
	"strconv"
)

// renderExtreme prints the extreme mode's data-extreme_search parts that
// people follow live: the plan once written, each search and X search
// when done, each code cell when it ran. Started states and the sources'
// contents print nothing.
//
//	→ Research plan
//	  ▸ Growth figures
//	    · GDP growth by decade
//	  ⌕ "GDP growth by decade" — 8 sources
//	  ▶ GDP growth by decade — ran, 1 chart
func (t *Terminal) renderExtreme(line func(...string), raw json.RawMessage) {
	var v struct {
		Kind   string `json:"kind"`
		Status any    `json:"status"`
		Plan   []struct {
			Title string   `json:"title"`
			Todos []string `json:"todos"`
		} `json:"plan"`
		Query   string            `json:"query"`
		Title   string            `json:"title"`
		Sources []json.RawMessage `json:"sources"`
		Error   string            `json:"error"`
		Result  *struct {
			ExitCode int               `json:"exitCode"`
			Sources  []json.RawMessage `json:"sources"`
		} `json:"result"`
		Charts []json.RawMessage `json:"charts"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return
	}
	status, _ := v.Status.(string)
	switch v.Kind {
	case "plan":
		title := ""
		if m, ok := v.Status.(map[string]any); ok {
			title, _ = m["title"].(string)
		}
		if len(v.Plan) == 0 || title != "Research plan ready" {
			return
		}
		line(t.style(ansiCyan, "→ "), t.style(ansiBold, "Research plan"))
		for _, th := range v.Plan {
			line("  ▸ ", clip(th.Title, 120))
			for _, td := range th.Todos {
				line(t.style(ansiDim, "    · "+clip(td, 120)))
			}
		}
	case "query":
		switch status {
		case "completed":
			line(t.style(ansiGreen, "  ⌕ "), quote(clip(v.Query, 120)), t.style(ansiDim, " — "+plural(len(v.Sources), "source")))
		case "error":
			line(t.style(ansiYellow, "  ⌕ "), quote(clip(v.Query, 120)), t.style(ansiDim, " — failed: "+clip(v.Error, 160)))
		}
	case "x_search":
		switch {
		case status == "completed" && v.Result != nil:
			line(t.style(ansiGreen, "  ⌕ X: "), quote(clip(v.Query, 120)), t.style(ansiDim, " — "+plural(len(v.Result.Sources), "post")))
		case status == "error":
			line(t.style(ansiYellow, "  ⌕ X: "), quote(clip(v.Query, 120)), t.style(ansiDim, " — failed: "+clip(v.Error, 160)))
		}
	case "code":
		switch {
		case status == "completed" && v.Result != nil:
			line(t.style(ansiGreen, "  ▶ "), clip(v.Title, 120), t.style(ansiDim, " — ran, "+plural(len(v.Charts), "chart")))
		case status == "error" && v.Result != nil:
			line(t.style(ansiYellow, "  ▶ "), clip(v.Title, 120), t.style(ansiDim, " — exit status "+strconv.Itoa(v.Result.ExitCode)))
		case status == "error":
			line(t.style(ansiYellow, "  ▶ "), clip(v.Title, 120), t.style(ansiDim, " — failed: "+clip(v.Error, 160)))
		}
	}
}
