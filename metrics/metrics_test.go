package metrics_test

import (
	"fmt"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"knobs/metrics"
)

// gather returns the series of family name, by their labels written as
// "k=v,k=v" in the registry's order.
func gather(t *testing.T, m *metrics.Metrics, name string) map[string]*dto.Metric {
	t.Helper()
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.Metric{}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.GetMetric() {
			key := ""
			for i, l := range s.GetLabel() {
				if i > 0 {
					key += ","
				}
				key += l.GetName() + "=" + l.GetValue()
			}
			out[key] = s
		}
	}
	return out
}

// A model's name is user text: a name Knobs does not know is counted as
// "other", however many runs came first, so runs of made-up names take
// no model's label; a real one keeps its own.
func TestUnknownModelsAreOther(t *testing.T) {
	m := metrics.New()
	for i := range metrics.MaxModels + 50 {
		m.RunStarted("sim", fmt.Sprintf("made-up-%d", i), false)
		m.RunFinished(metrics.RunEnd{Provider: "sim", Model: fmt.Sprintf("made-up-%d", i), Status: "error", ErrorKind: "client", ErrorStatus: 404})
	}
	m.RunStarted("sim", "sim-fast", true)
	m.RunFinished(metrics.RunEnd{Provider: "sim", Model: "sim-fast", KnownModel: true, Status: "done", OutputTokens: 9})
	started := gather(t, m, "knobs_runs_started_total")
	if len(started) != 2 {
		t.Errorf("%d series of runs started, want sim-fast and other: %v", len(started), started)
	}
	if got := started["model=other,provider=sim"].GetCounter().GetValue(); got != metrics.MaxModels+50 {
		t.Errorf("other counted %v, want %d", got, metrics.MaxModels+50)
	}
	if got := started["model=sim-fast,provider=sim"].GetCounter().GetValue(); got != 1 {
		t.Errorf("sim-fast counted %v, want 1", got)
	}
	finished := gather(t, m, "knobs_runs_finished_total")
	if got := finished["model=other,provider=sim,status=error"].GetCounter().GetValue(); got != metrics.MaxModels+50 {
		t.Errorf("other finished %v, want %d", got, metrics.MaxModels+50)
	}
	if got := gather(t, m, "knobs_tokens_total")["direction=output,model=sim-fast,provider=sim"].GetCounter().GetValue(); got != 9 {
		t.Errorf("sim-fast's tokens = %v, want 9", got)
	}
}

// Known models are bounded too: a provider may list thousands. Past
// MaxModels distinct names, runs are counted under "other", so the series
// stay bounded, and the names seen first keep their own.
func TestModelLabelsAreCapped(t *testing.T) {
	m := metrics.New()
	for i := range metrics.MaxModels + 50 {
		m.RunStarted("custom", fmt.Sprintf("model-%d", i), true)
	}
	m.RunStarted("custom", "model-0", true)
	m.RunStarted("custom", string([]byte{0xff, 0xfe}), true) // not UTF-8
	m.RunStarted("custom", fmt.Sprintf("%0200d", 7), true)   // too long
	m.RunFinished(metrics.RunEnd{Provider: "custom", Model: "model-9999", KnownModel: true, Status: "done"})
	started := gather(t, m, "knobs_runs_started_total")
	if len(started) != metrics.MaxModels+1 {
		t.Errorf("%d series of runs started, want %d models and other", len(started), metrics.MaxModels)
	}
	if got := started["model=model-0,provider=custom"].GetCounter().GetValue(); got != 2 {
		t.Errorf("model-0 counted %v, want 2", got)
	}
	if got := started["model=other,provider=custom"].GetCounter().GetValue(); got != 52 {
		t.Errorf("other counted %v, want 52", got)
	}
	if _, ok := gather(t, m, "knobs_runs_finished_total")["model=other,provider=custom,status=done"]; !ok {
		t.Error("a run of a model past the cap did not finish under other")
	}
}

// A run's end is counted once: its status, its error by kind and status
// class, its latencies and its tokens and cost.
func TestRunFinishedCountsTheEnd(t *testing.T) {
	m := metrics.New()
	m.RunStarted("sim", "sim-fast", true)
	m.RunFinished(metrics.RunEnd{Provider: "sim", Model: "sim-fast", KnownModel: true, Status: "error", ErrorKind: "server", ErrorStatus: 503,
		FirstToken: 300 * time.Millisecond, Duration: 3 * time.Second, InputTokens: 12, OutputTokens: 40, CostUSD: 0.25})
	if got := gather(t, m, "knobs_upstream_errors_total")["kind=server,provider=sim,status_class=5xx"].GetCounter().GetValue(); got != 1 {
		t.Errorf("upstream errors = %v, want 1", got)
	}
	if got := gather(t, m, "knobs_runs_live")[""].GetGauge().GetValue(); got != 0 {
		t.Errorf("live runs = %v, want 0", got)
	}
	h := gather(t, m, "knobs_run_first_token_seconds")["provider=sim"].GetHistogram()
	if h.GetSampleCount() != 1 || h.GetSampleSum() != 0.3 {
		t.Errorf("first token histogram: %d observations summing to %v", h.GetSampleCount(), h.GetSampleSum())
	}
	tokens := gather(t, m, "knobs_tokens_total")
	if tokens["direction=input,model=sim-fast,provider=sim"].GetCounter().GetValue() != 12 || tokens["direction=output,model=sim-fast,provider=sim"].GetCounter().GetValue() != 40 {
		t.Errorf("tokens = %v", tokens)
	}
	if got := gather(t, m, "knobs_cost_usd_total")["model=sim-fast,provider=sim"].GetCounter().GetValue(); got != 0.25 {
		t.Errorf("cost = %v, want 0.25", got)
	}
}

// The backup scheduler's calls: a success sets the time, duration and
// size; a failure only counts.
func TestBackupRecordsSuccessesAndFailures(t *testing.T) {
	m := metrics.New()
	before := float64(time.Now().Unix())
	m.Backup(true, 2*time.Second, 4096)
	m.Backup(false, time.Second, 0)
	backups := gather(t, m, "knobs_backups_total")
	if backups["result=ok"].GetCounter().GetValue() != 1 || backups["result=error"].GetCounter().GetValue() != 1 {
		t.Errorf("backups = %v", backups)
	}
	if last := gather(t, m, "knobs_backup_last_success_timestamp_seconds")[""].GetGauge().GetValue(); last < before {
		t.Errorf("last success at %v, before the backup (%v)", last, before)
	}
	if size := gather(t, m, "knobs_backup_last_size_bytes")[""].GetGauge().GetValue(); size != 4096 {
		t.Errorf("last size %v, want 4096", size)
	}
}

// Metrics off is a nil *Metrics: every call does nothing.
func TestNilMetricsDoNothing(t *testing.T) {
	var m *metrics.Metrics
	m.RunStarted("sim", "sim-fast", true)
	m.RunFinished(metrics.RunEnd{})
	m.ListenerOpened()()
	m.DBWrite(time.Millisecond, nil)
	m.WriterQueue(3)
	m.Request("GET", "/", 200)
	m.Backup(true, time.Second, 1)
	if m.Registry() != nil {
		t.Error("a nil Metrics has a registry")
	}
}

// BenchmarkRunCounted is what the metrics add to one run: its start and
// its end, the only two calls a run makes (none per token).
func BenchmarkRunCounted(b *testing.B) {
	m := metrics.New()
	end := metrics.RunEnd{Provider: "sim", Model: "sim-fast", KnownModel: true, Status: "done", FirstToken: 40 * time.Millisecond,
		Duration: 2 * time.Second, InputTokens: 20, OutputTokens: 2000, CostUSD: 0.001}
	for b.Loop() {
		m.RunStarted("sim", "sim-fast", true)
		m.RunFinished(end)
	}
}
