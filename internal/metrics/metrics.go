// Package metrics counts what a Sova node does, for Prometheus: runs by
// mode and outcome, the event writer's backlog, model calls, tokens, search
// calls and page reads. Each Metrics has its own set (nothing is registered
// globally), and a nil *Metrics records nothing, so the packages it
// instruments call it unconditionally.
//
// It is built on VictoriaMetrics' metrics package rather than the
// Prometheus client: that client pulls in protobuf, whose reflection keeps
// every exported method of every type in the binary (see
// docs/architecture.md, "Binary size").
package metrics

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	vm "github.com/VictoriaMetrics/metrics"
)

// Outcomes of a call, as label values.
const (
	OK    = "ok"
	Error = "error"
)

// family is one metric family's help text and type, written before its
// series so that Prometheus reads them typed.
type family struct {
	help, kind string
	buckets    []float64 // histograms only
}

var families = map[string]family{
	"sova_runs_started_total":  {help: "Runs this node began executing, by mode and kind (new, or continued after a takeover or restart).", kind: "counter"},
	"sova_runs_finished_total": {help: "Runs this node stopped executing, by mode and outcome (completed, waiting, failed, cancelled, interrupted, handed_back).", kind: "counter"},
	"sova_runs_running":        {help: "Runs executing on this node now, by mode.", kind: "gauge"},
	"sova_model_calls_total":   {help: "Chat-completion calls to the model endpoint (retries included in one call), by model and outcome.", kind: "counter"},
	"sova_model_call_duration_seconds": {help: "Time of a chat-completion call, retries and streaming included, by model.", kind: "histogram",
		buckets: []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160}},
	"sova_model_tokens_total": {help: "Tokens the model endpoint reported, by model and kind (prompt, completion).", kind: "counter"},
	"sova_search_calls_total": {help: "Calls to a search provider (cached answers reach none), by provider and outcome.", kind: "counter"},
	"sova_search_call_duration_seconds": {help: "Time of a search provider call, by provider.", kind: "histogram",
		buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16}},
	"sova_page_reads_total": {help: "Web pages fetched and extracted, by outcome.", kind: "counter"},
	"sova_page_read_duration_seconds": {help: "Time to fetch and extract a web page.", kind: "histogram",
		buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16}},
}

// Metrics holds a node's series.
type Metrics struct {
	set *vm.Set

	mu   sync.Mutex
	help map[string]family // gauges registered with Gauge, by name
}

// New returns Metrics with a fresh set; its handler also writes the Go
// runtime's and the process's series.
func New() *Metrics {
	return &Metrics{set: vm.NewSet(), help: map[string]family{}}
}

// Handler serves the set in the Prometheus text exposition format, with
// HELP and TYPE lines for Sova's own families.
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var raw bytes.Buffer
		m.set.WritePrometheus(&raw)
		vm.WriteProcessMetrics(&raw)
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		m.mu.Lock()
		extra := make(map[string]family, len(m.help))
		for k, v := range m.help {
			extra[k] = v
		}
		m.mu.Unlock()
		bw := bufio.NewWriter(w)
		last := ""
		sc := bufio.NewScanner(&raw)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if name := familyOf(line); name != last && name != "" {
				last = name
				f, ok := families[name]
				if !ok {
					f, ok = extra[name]
				}
				if ok {
					fmt.Fprintf(bw, "# HELP %s %s\n# TYPE %s %s\n", name, f.help, name, f.kind)
				}
			}
			bw.WriteString(line)
			bw.WriteByte('\n')
		}
		bw.Flush()
	})
}

// familyOf is the family a series line belongs to: its name without
// labels and without a histogram's _bucket, _sum or _count.
func familyOf(line string) string {
	if line == "" || line[0] == '#' {
		return ""
	}
	name := line
	if i := strings.IndexAny(name, "{ "); i >= 0 {
		name = name[:i]
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			if f, known := families[base]; known && f.kind == "histogram" {
				return base
			}
		}
	}
	return name
}

// Gauge registers a gauge whose value is read from fn at each scrape, such
// as a queue's length. Registering a name twice is an error.
func (m *Metrics) Gauge(name, help string, fn func() float64) error {
	if m == nil {
		return nil
	}
	if err := vm.ValidateMetric(name); err != nil {
		return fmt.Errorf("metrics: gauge %q: %w", name, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.help[name]; ok {
		return fmt.Errorf("metrics: gauge %q is already registered", name)
	}
	m.help[name] = family{help: help, kind: "gauge"}
	m.set.NewGauge(name, fn)
	return nil
}

// series names one series of a family with its labels, as
// `name{k="v",...}`; values are escaped as the exposition format wants.
// Callers give labels in alphabetical order, as the Prometheus client
// wrote them, so queries and dashboards see the same series.
func series(name string, labels ...string) string {
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('{')
	for i := 0; i+1 < len(labels); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(labels[i])
		b.WriteString(`="`)
		b.WriteString(labelEscaper.Replace(labels[i+1]))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

func (m *Metrics) counter(name string, labels ...string) *vm.Counter {
	return m.set.GetOrCreateCounter(series(name, labels...))
}

func (m *Metrics) histogram(name string, labels ...string) *vm.PrometheusHistogram {
	id := name
	if len(labels) > 0 {
		id = series(name, labels...)
	}
	return m.set.GetOrCreatePrometheusHistogramExt(id, families[name].buckets)
}

// RunStarted counts a run this node begins executing; continued says it
// was taken over from a stopped node or a restart.
func (m *Metrics) RunStarted(mode string, continued bool) {
	if m == nil {
		return
	}
	kind := "new"
	if continued {
		kind = "continued"
	}
	m.counter("sova_runs_started_total", "kind", kind, "mode", mode).Inc()
	m.set.GetOrCreateGauge(series("sova_runs_running", "mode", mode), nil).Inc()
}

// RunFinished counts a run this node stopped executing, with its outcome.
func (m *Metrics) RunFinished(mode, outcome string) {
	if m == nil {
		return
	}
	m.counter("sova_runs_finished_total", "mode", mode, "outcome", outcome).Inc()
	m.set.GetOrCreateGauge(series("sova_runs_running", "mode", mode), nil).Dec()
}

// ModelCall records one chat-completion call: its model, time, the tokens
// reported and whether it failed.
func (m *Metrics) ModelCall(model string, d time.Duration, promptTokens, completionTokens int, failed bool) {
	if m == nil {
		return
	}
	m.counter("sova_model_calls_total", "model", model, "outcome", outcome(failed)).Inc()
	m.histogram("sova_model_call_duration_seconds", "model", model).Update(d.Seconds())
	if promptTokens > 0 {
		m.counter("sova_model_tokens_total", "kind", "prompt", "model", model).Add(promptTokens)
	}
	if completionTokens > 0 {
		m.counter("sova_model_tokens_total", "kind", "completion", "model", model).Add(completionTokens)
	}
}

// SearchCall records one call to a search provider.
func (m *Metrics) SearchCall(provider string, d time.Duration, failed bool) {
	if m == nil {
		return
	}
	m.counter("sova_search_calls_total", "outcome", outcome(failed), "provider", provider).Inc()
	m.histogram("sova_search_call_duration_seconds", "provider", provider).Update(d.Seconds())
}

// PageRead records one page fetched (and extracted).
func (m *Metrics) PageRead(d time.Duration, failed bool) {
	if m == nil {
		return
	}
	m.counter("sova_page_reads_total", "outcome", outcome(failed)).Inc()
	m.histogram("sova_page_read_duration_seconds").Update(d.Seconds())
}

func outcome(failed bool) string {
	if failed {
		return Error
	}
	return OK
}
