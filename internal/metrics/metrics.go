// Package metrics counts what a Sova node does, for Prometheus: runs by
// mode and outcome, the event writer's backlog, model calls, tokens, search
// calls and page reads. Each Metrics has its own registry (nothing is
// registered globally), and a nil *Metrics records nothing, so the packages
// it instruments call it unconditionally.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Outcomes of a call, as label values.
const (
	OK    = "ok"
	Error = "error"
)

// Metrics holds a node's collectors and their registry.
type Metrics struct {
	reg *prometheus.Registry

	runsStarted  *prometheus.CounterVec
	runsFinished *prometheus.CounterVec
	runsRunning  *prometheus.GaugeVec

	modelCalls    *prometheus.CounterVec
	modelDuration *prometheus.HistogramVec
	modelTokens   *prometheus.CounterVec

	searchCalls    *prometheus.CounterVec
	searchDuration *prometheus.HistogramVec

	pageReads    *prometheus.CounterVec
	pageDuration prometheus.Histogram
}

// New returns Metrics with a fresh registry that also holds the Go
// runtime's and the process's collectors.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	f := func(c prometheus.Collector) { m.reg.MustRegister(c) }
	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	m.runsStarted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sova_runs_started_total",
		Help: "Runs this node began executing, by mode and kind (new, or continued after a takeover or restart).",
	}, []string{"mode", "kind"})
	m.runsFinished = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sova_runs_finished_total",
		Help: "Runs this node stopped executing, by mode and outcome (completed, waiting, failed, cancelled, interrupted, handed_back).",
	}, []string{"mode", "outcome"})
	m.runsRunning = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "sova_runs_running",
		Help: "Runs executing on this node now, by mode.",
	}, []string{"mode"})
	m.modelCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sova_model_calls_total",
		Help: "Chat-completion calls to the model endpoint (retries included in one call), by model and outcome.",
	}, []string{"model", "outcome"})
	m.modelDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "sova_model_call_duration_seconds",
		Help:    "Time of a chat-completion call, retries and streaming included, by model.",
		Buckets: []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160},
	}, []string{"model"})
	m.modelTokens = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sova_model_tokens_total",
		Help: "Tokens the model endpoint reported, by model and kind (prompt, completion).",
	}, []string{"model", "kind"})
	m.searchCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sova_search_calls_total",
		Help: "Calls to a search provider (cached answers reach none), by provider and outcome.",
	}, []string{"provider", "outcome"})
	m.searchDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "sova_search_call_duration_seconds",
		Help:    "Time of a search provider call, by provider.",
		Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16},
	}, []string{"provider"})
	m.pageReads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sova_page_reads_total",
		Help: "Web pages fetched and extracted, by outcome.",
	}, []string{"outcome"})
	m.pageDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "sova_page_read_duration_seconds",
		Help:    "Time to fetch and extract a web page.",
		Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16},
	})
	for _, c := range []prometheus.Collector{m.runsStarted, m.runsFinished, m.runsRunning, m.modelCalls, m.modelDuration,
		m.modelTokens, m.searchCalls, m.searchDuration, m.pageReads, m.pageDuration} {
		f(c)
	}
	return m
}

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Gauge registers a gauge whose value is read from fn at each scrape, such
// as a queue's length. Registering a name twice is an error.
func (m *Metrics) Gauge(name, help string, fn func() float64) error {
	if m == nil {
		return nil
	}
	return m.reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, fn))
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
	m.runsStarted.WithLabelValues(mode, kind).Inc()
	m.runsRunning.WithLabelValues(mode).Inc()
}

// RunFinished counts a run this node stopped executing, with its outcome.
func (m *Metrics) RunFinished(mode, outcome string) {
	if m == nil {
		return
	}
	m.runsFinished.WithLabelValues(mode, outcome).Inc()
	m.runsRunning.WithLabelValues(mode).Dec()
}

// ModelCall records one chat-completion call: its model, time, the tokens
// reported and whether it failed.
func (m *Metrics) ModelCall(model string, d time.Duration, promptTokens, completionTokens int, failed bool) {
	if m == nil {
		return
	}
	m.modelCalls.WithLabelValues(model, outcome(failed)).Inc()
	m.modelDuration.WithLabelValues(model).Observe(d.Seconds())
	if promptTokens > 0 {
		m.modelTokens.WithLabelValues(model, "prompt").Add(float64(promptTokens))
	}
	if completionTokens > 0 {
		m.modelTokens.WithLabelValues(model, "completion").Add(float64(completionTokens))
	}
}

// SearchCall records one call to a search provider.
func (m *Metrics) SearchCall(provider string, d time.Duration, failed bool) {
	if m == nil {
		return
	}
	m.searchCalls.WithLabelValues(provider, outcome(failed)).Inc()
	m.searchDuration.WithLabelValues(provider).Observe(d.Seconds())
}

// PageRead records one page fetched (and extracted).
func (m *Metrics) PageRead(d time.Duration, failed bool) {
	if m == nil {
		return
	}
	m.pageReads.WithLabelValues(outcome(failed)).Inc()
	m.pageDuration.Observe(d.Seconds())
}

func outcome(failed bool) string {
	if failed {
		return Error
	}
	return OK
}
