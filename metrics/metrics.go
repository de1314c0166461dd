// Package metrics is what Knobs tells Prometheus: runs and their upstream
// errors, time to first token and run duration, tokens and cost, live
// streams and listeners, the database's writes, HTTP requests and backups,
// with the Go runtime and process, on a registry of Knobs' own.
//
// Every method is safe on a nil *Metrics and does nothing: Knobs with
// metrics off passes nil. Runs are counted once each, when they start and
// end, never per token, so the stream's hot path pays nothing.
package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// MaxModels is how many distinct model names get a label value of their
// own; later ones are counted as Other. Only a model Knobs knows (its
// provider's list named it, or Knobs' built-in list has it) gets one at
// all: a model's name is whatever a user typed, and each label value is a
// series Prometheus keeps, so names typed at random must not take the
// places of the models people use.
const MaxModels = 200

// MaxProviders bounds the provider label values the same way; providers
// are Knobs' own and those an admin adds, far fewer in practice.
const MaxProviders = 50

// Other is the label value of a model Knobs does not know, and of a model
// or provider past its bound.
const Other = "other"

// maxLabelLen is the longest model or provider name kept as a label value.
const maxLabelLen = 128

// LLMBuckets are the histogram bounds, in seconds, of time to first token
// and run duration: from a fast first token to a long reasoning run.
var LLMBuckets = []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120}

// writeBuckets are the bounds of a database write, in seconds.
var writeBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// Metrics holds Knobs' collectors. Build it with New; nil means off.
type Metrics struct {
	reg       *prometheus.Registry
	models    *capped
	providers *capped

	runsStarted    *prometheus.CounterVec
	runsFinished   *prometheus.CounterVec
	upstreamErrors *prometheus.CounterVec
	firstToken     *prometheus.HistogramVec
	duration       *prometheus.HistogramVec
	tokens         *prometheus.CounterVec
	cost           *prometheus.CounterVec
	liveRuns       prometheus.Gauge
	listeners      prometheus.Gauge
	dbWrites       *prometheus.HistogramVec
	writerQueue    prometheus.Gauge
	httpRequests   *prometheus.CounterVec
	backups        *prometheus.CounterVec
	backupLast     prometheus.Gauge
	backupDuration prometheus.Gauge
	backupSize     prometheus.Gauge
	readyProbes    *prometheus.CounterVec
}

// New builds the collectors on a registry of their own, with the Go
// runtime and process collectors beside them.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		reg:       reg,
		models:    newCapped(MaxModels),
		providers: newCapped(MaxProviders),
		runsStarted: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "knobs_runs_started_total",
			Help: "Runs started, by provider and model."}, []string{"provider", "model"}),
		runsFinished: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "knobs_runs_finished_total",
			Help: "Runs ended, by provider, model and stored status (done, error, cancelled, interrupted)."}, []string{"provider", "model", "status"}),
		upstreamErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "knobs_upstream_errors_total",
			Help: "Runs that ended in an error, by provider, kind (timeout, network, server, rate_limit, truncated, output_limit, max_duration...) and the upstream's status class (4xx, 5xx; empty when there was no answer)."},
			[]string{"provider", "kind", "status_class"}),
		firstToken: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "knobs_run_first_token_seconds",
			Help: "Time from a run's start to its first token, by provider.", Buckets: LLMBuckets}, []string{"provider"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "knobs_run_duration_seconds",
			Help: "Time from a run's start to its end, by provider.", Buckets: LLMBuckets}, []string{"provider"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "knobs_tokens_total",
			Help: "Tokens the providers reported, by provider, model and direction (input, output)."}, []string{"provider", "model", "direction"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "knobs_cost_usd_total",
			Help: "Cost of runs in US dollars, as reported or from the model's prices, by provider and model."}, []string{"provider", "model"}),
		liveRuns: prometheus.NewGauge(prometheus.GaugeOpts{Name: "knobs_runs_live",
			Help: "Runs streaming from their provider now."}),
		listeners: prometheus.NewGauge(prometheus.GaugeOpts{Name: "knobs_sse_listeners",
			Help: "Event streams open to clients now (runs, comparisons, replays, experiments)."}),
		dbWrites: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "knobs_db_write_seconds",
			Help: "Time of a database write transaction, waiting for the writer included, by result (ok, error).", Buckets: writeBuckets}, []string{"result"}),
		writerQueue: prometheus.NewGauge(prometheus.GaugeOpts{Name: "knobs_run_writer_queue",
			Help: "Run writes (rows, checkpoints, endings) waiting for the run writer's next transaction."}),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "knobs_http_requests_total",
			Help: "HTTP requests answered, by method, route pattern and status."}, []string{"method", "route", "status"}),
		backups: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "knobs_backups_total",
			Help: "Backups taken, by result (ok, error)."}, []string{"result"}),
		backupLast: prometheus.NewGauge(prometheus.GaugeOpts{Name: "knobs_backup_last_success_timestamp_seconds",
			Help: "When the last backup that succeeded ended, in Unix seconds; 0 when none has yet."}),
		backupDuration: prometheus.NewGauge(prometheus.GaugeOpts{Name: "knobs_backup_last_duration_seconds",
			Help: "How long the last backup that succeeded took."}),
		backupSize: prometheus.NewGauge(prometheus.GaugeOpts{Name: "knobs_backup_last_size_bytes",
			Help: "Size of the last backup that succeeded."}),
		readyProbes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "knobs_readiness_probes_total",
			Help: "Write probes /readyz made of the database, by result (ok, error); callers within a second share one."}, []string{"result"}),
	}
	for _, c := range []prometheus.Collector{m.runsStarted, m.runsFinished, m.upstreamErrors, m.firstToken, m.duration,
		m.tokens, m.cost, m.liveRuns, m.listeners, m.dbWrites, m.writerQueue, m.httpRequests, m.backups, m.backupLast,
		m.backupDuration, m.backupSize, m.readyProbes,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		reg.MustRegister(c)
	}
	// Both results show from the start, so that a rate over them is
	// defined before the first failure.
	m.backups.WithLabelValues("ok")
	m.backups.WithLabelValues("error")
	return m
}

// Handler serves the metrics in Prometheus' text format; with metrics
// off, it answers 404.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Server is the HTTP server of KNOBS_METRICS_ADDR: /metrics and nothing
// else, with timeouts, so that a slow client holds nothing for long.
func (m *Metrics) Server() *http.Server {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	return &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}
}

// Registry is the registry the metrics are on, for tests that gather them.
func (m *Metrics) Registry() *prometheus.Registry {
	if m == nil {
		return nil
	}
	return m.reg
}

// RunStarted counts a run that starts streaming; known says whether
// Knobs knows its model (see MaxModels).
func (m *Metrics) RunStarted(provider, model string, known bool) {
	if m == nil {
		return
	}
	m.runsStarted.WithLabelValues(m.providers.value(provider), m.modelValue(model, known)).Inc()
	m.liveRuns.Inc()
}

// RunEnd is how a run ended, as RunFinished counts it.
type RunEnd struct {
	Provider, Model string
	// KnownModel says whether Knobs knows the model (see MaxModels).
	KnownModel bool
	Status     string // as stored: done, error, cancelled, interrupted
	// ErrorKind is what ended it in error ("" when nothing did), and
	// ErrorStatus the upstream's HTTP status, if it answered one.
	ErrorKind   string
	ErrorStatus int
	// FirstToken is the time to the first token; 0 when none came.
	FirstToken time.Duration
	Duration   time.Duration
	// InputTokens and OutputTokens are as the provider reported them.
	InputTokens, OutputTokens int
	CostUSD                   float64
}

// RunFinished counts a run that ended, however it ended: one call per
// run, so that runs started minus runs finished is the runs live.
func (m *Metrics) RunFinished(e RunEnd) {
	if m == nil {
		return
	}
	provider, model := m.providers.value(e.Provider), m.modelValue(e.Model, e.KnownModel)
	m.liveRuns.Dec()
	m.runsFinished.WithLabelValues(provider, model, e.Status).Inc()
	if e.ErrorKind != "" {
		m.upstreamErrors.WithLabelValues(provider, e.ErrorKind, statusClass(e.ErrorStatus)).Inc()
	}
	if e.FirstToken > 0 {
		m.firstToken.WithLabelValues(provider).Observe(e.FirstToken.Seconds())
	}
	m.duration.WithLabelValues(provider).Observe(e.Duration.Seconds())
	if e.InputTokens > 0 {
		m.tokens.WithLabelValues(provider, model, "input").Add(float64(e.InputTokens))
	}
	if e.OutputTokens > 0 {
		m.tokens.WithLabelValues(provider, model, "output").Add(float64(e.OutputTokens))
	}
	if e.CostUSD > 0 {
		m.cost.WithLabelValues(provider, model).Add(e.CostUSD)
	}
}

// statusClass is "4xx" for 404, "" for no status.
func statusClass(status int) string {
	if status < 100 || status > 599 {
		return ""
	}
	return strconv.Itoa(status/100) + "xx"
}

// ListenerOpened counts an event stream opened to a client; call the
// returned func when it closes.
func (m *Metrics) ListenerOpened() (closed func()) {
	if m == nil {
		return func() {}
	}
	m.listeners.Inc()
	var once sync.Once
	return func() { once.Do(m.listeners.Dec) }
}

// DBWrite records one write transaction that took took and ended with
// err (nil: committed); db.Store.ObserveWrites takes it.
func (m *Metrics) DBWrite(took time.Duration, err error) {
	if m == nil {
		return
	}
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.dbWrites.WithLabelValues(result).Observe(took.Seconds())
}

// WriterQueue records how many run writes wait for the run writer.
func (m *Metrics) WriterQueue(n int) {
	if m == nil {
		return
	}
	m.writerQueue.Set(float64(n))
}

// Request counts an HTTP request answered. route must be a route's
// pattern (/runs/:id), never the path asked for: ids and share tokens
// must not become label values.
func (m *Metrics) Request(method, route string, status int) {
	if m == nil {
		return
	}
	m.httpRequests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
}

// Backup records a backup that took d: when ok, its size and the time it
// ended; otherwise only the failure. The backup scheduler calls it once
// per backup.
func (m *Metrics) Backup(ok bool, d time.Duration, size int64) {
	if m == nil {
		return
	}
	if !ok {
		m.backups.WithLabelValues("error").Inc()
		return
	}
	m.backups.WithLabelValues("ok").Inc()
	m.backupLast.Set(float64(time.Now().UnixNano()) / 1e9)
	m.backupDuration.Set(d.Seconds())
	m.backupSize.Set(float64(size))
}

// ReadyProbe records one write probe of the database made for /readyz.
func (m *Metrics) ReadyProbe(ok bool) {
	if m == nil {
		return
	}
	result := "ok"
	if !ok {
		result = "error"
	}
	m.readyProbes.WithLabelValues(result).Inc()
}

// modelValue is a model's label value: Other for a model Knobs does not
// know, else its name within the bound.
func (m *Metrics) modelValue(name string, known bool) string {
	if !known && name != "" {
		return Other
	}
	return m.models.value(name)
}

// capped hands out label values: the first max distinct names as they
// are, every later one as Other.
type capped struct {
	max  int
	mu   sync.Mutex
	seen map[string]struct{}
}

func newCapped(max int) *capped {
	return &capped{max: max, seen: make(map[string]struct{}, max)}
}

// value is name's label value; an empty name is "unknown".
func (c *capped) value(name string) string {
	if name == "" {
		return "unknown"
	}
	if len(name) > maxLabelLen || !utf8.ValidString(name) {
		return Other
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.seen[name]; ok {
		return name
	}
	if len(c.seen) >= c.max {
		return Other
	}
	c.seen[name] = struct{}{}
	return name
}
