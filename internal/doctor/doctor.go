// Package doctor checks a Sova setup the way a first run would meet it:
// the model endpoint (reachable, key accepted, the configured models
// served), the web search providers, the database and the data directory,
// and whether the code sandbox could run here. `sova doctor` prints every
// check; `sova serve` runs the model checks in the background at start and
// logs one warning with the fix when they fail.
package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sova-ai/sova/internal/config"
)

// Status is the outcome of one check.
type Status string

// Outcomes of a check.
const (
	OK   Status = "ok"
	Fail Status = "fail"
	// Skip means the check could not be made because an earlier one
	// failed (no key check without an endpoint that answers).
	Skip Status = "skip"
)

// Check is one line of the report.
type Check struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	// Required checks make the setup unusable when they fail; the others
	// (a fallback search provider, the code sandbox) only limit it.
	Required bool   `json:"required"`
	Detail   string `json:"detail,omitempty"`
	// Fix says what to change when the check failed.
	Fix string `json:"fix,omitempty"`
}

// Report is the result of all checks, in a fixed order.
type Report struct {
	// OK is false when a required check failed.
	OK     bool    `json:"ok"`
	Checks []Check `json:"checks"`
}

// DefaultTimeout bounds each group of checks (the model endpoint, each
// search provider, the sandbox).
const DefaultTimeout = 10 * time.Second

// Options adjust how checks are made; the zero value is what `sova doctor`
// uses.
type Options struct {
	// Timeout bounds each group of checks; DefaultTimeout when zero.
	Timeout time.Duration
	// HTTPClient is used for the model endpoint; nil means a default one.
	HTTPClient *http.Client
	// Sandbox starts the code sandbox for its check and says what runs
	// the code (sandbox.Sandbox.Version); nil starts the real one.
	Sandbox func(ctx context.Context, cfg *config.Config) (version string, err error)
}

func (o Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultTimeout
}

// Run makes every check, the independent groups at the same time, and
// returns them in a fixed order: model endpoint, web search, database and
// data directory, sandbox, then the search groups' tools.
func Run(ctx context.Context, cfg *config.Config, opts Options) Report {
	groups := []func() []Check{
		func() []Check { return Model(ctx, cfg, opts) },
		func() []Check { return Search(ctx, cfg, opts) },
		func() []Check { return Storage(ctx, cfg) },
		func() []Check { return []Check{Sandbox(ctx, cfg, opts)} },
	}
	results := make([][]Check, len(groups))
	var wg sync.WaitGroup
	for i, g := range groups {
		wg.Go(func() { results[i] = g() })
	}
	wg.Wait()
	var checks []Check
	for _, r := range results {
		checks = append(checks, r...)
	}
	modelOK := len(results[0]) > 0
	for _, c := range results[0] {
		modelOK = modelOK && c.Status == OK
	}
	checks = append(checks, Tools(cfg, modelOK, results[3][0])...)
	return NewReport(checks)
}

// NewReport wraps checks in a Report and sets OK.
func NewReport(checks []Check) Report {
	r := Report{OK: true, Checks: checks}
	for _, c := range checks {
		if c.Required && c.Status == Fail {
			r.OK = false
		}
	}
	return r
}

// Failed returns the required checks that failed.
func (r Report) Failed() []Check {
	var out []Check
	for _, c := range r.Checks {
		if c.Required && c.Status == Fail {
			out = append(out, c)
		}
	}
	return out
}

// WriteText prints one line per check (✓ passed, ✗ failed with its fix,
// – not checked), then a summary line.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, c := range r.Checks {
		b.WriteString(c.Line())
		b.WriteByte('\n')
	}
	switch n := len(r.Failed()); n {
	case 0:
		b.WriteString("All required checks passed.\n")
	case 1:
		b.WriteString("1 required check failed.\n")
	default:
		fmt.Fprintf(&b, "%d required checks failed.\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON prints the report as one JSON object.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Line renders the check as one line of text.
func (c Check) Line() string {
	mark := map[Status]string{OK: "✓", Fail: "✗", Skip: "–"}[c.Status]
	name := c.Name
	if !c.Required {
		name += " (optional)"
	}
	line := mark + " " + name
	if c.Detail != "" {
		line += ": " + strings.ReplaceAll(c.Detail, "\n", "; ")
	}
	if c.Status == Fail && c.Fix != "" {
		line += " — fix: " + c.Fix
	}
	return line
}

// AtStart checks the model endpoint and the web search, as `sova serve`
// does when it starts (one small query to each search provider), and logs
// one warning for each that fails, naming every problem and its fix;
// nothing when all pass. It returns the report (the server's setup banner
// shows its failures). It blocks for at most opts.Timeout: call it in its
// own goroutine so that start-up is not delayed.
func AtStart(ctx context.Context, cfg *config.Config, logger *slog.Logger, opts Options) Report {
	var model, web []Check
	var wg sync.WaitGroup
	wg.Go(func() { model = Model(ctx, cfg, opts) })
	wg.Go(func() { web = Search(ctx, cfg, opts) })
	wg.Wait()
	if ctx.Err() != nil {
		return Report{OK: true} // stopping already: nothing was learnt
	}
	r := NewReport(append(model, web...))
	if warnFailed(logger, NewReport(model), "MODEL ENDPOINT NOT USABLE: questions will fail until this is fixed (sova doctor checks the whole setup)") {
		logger.Debug("model endpoint checked", "endpoint", redactURL(cfg.LLMBaseURL), "model", cfg.Model, "fast_model", cfg.FastModel)
	}
	warnFailed(logger, NewReport(web), "WEB SEARCH NOT USABLE: no search provider answered; web questions will fail until this is fixed (sova doctor checks the whole setup)")
	return r
}

// warnFailed logs msg with the failed checks of r and their fixes; it
// reports whether none failed.
func warnFailed(logger *slog.Logger, r Report, msg string) bool {
	failed := r.Failed()
	if len(failed) == 0 {
		return true
	}
	var problems, fixes []string
	for _, c := range failed {
		problems = append(problems, c.Name+": "+c.Detail)
		if c.Fix != "" && !slices.Contains(fixes, c.Fix) {
			fixes = append(fixes, c.Fix)
		}
	}
	logger.Warn(msg, "problem", strings.Join(problems, "; "), "fix", strings.Join(fixes, "; "))
	return false
}
