package main

import (
	"bytes"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

var metricsServed = regexp.MustCompile(`msg="Prometheus metrics are served" url=(\S+)`)

// With KNOBS_METRICS_ADDR, Knobs serves its metrics on that address and
// not on its main port; an address it cannot take stops it with a message
// naming the setting.
func TestRunServesMetricsOnTheirOwnAddress(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "knobs.db")
	base, stop := start(t, map[string]string{"KNOBS_ADDR": "127.0.0.1:0", "KNOBS_DB": dbPath, "KNOBS_METRICS_ADDR": "127.0.0.1:0"})
	get := func(u string) (int, string) {
		t.Helper()
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	get(base + "/healthz")
	if code, _ := get(base + "/metrics"); code != http.StatusNotFound {
		t.Errorf("/metrics on the main port: %d, want 404", code)
	}
	log, err := stop()
	if err != nil {
		t.Fatal(err)
	}
	m := metricsServed.FindStringSubmatch(log)
	if m == nil {
		t.Fatalf("the log does not say where the metrics are:\n%s", log)
	}
	// The listener closed with the server; start again on the same
	// address to read it while it serves.
	addr := strings.TrimSuffix(strings.TrimPrefix(m[1], "http://"), "/metrics")
	base, stop = start(t, map[string]string{"KNOBS_ADDR": "127.0.0.1:0", "KNOBS_DB": dbPath, "KNOBS_METRICS_ADDR": addr})
	get(base + "/healthz")
	code, body := get(m[1])
	if code != http.StatusOK {
		t.Fatalf("metrics: %d %s", code, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	healthz := 0.0
	for _, s := range families["knobs_http_requests_total"].GetMetric() {
		for _, l := range s.GetLabel() {
			if l.GetName() == "route" && l.GetValue() == "/healthz" {
				healthz += s.GetCounter().GetValue()
			}
		}
	}
	if healthz != 1 {
		t.Errorf("requests to /healthz counted: %v, want 1\n%s", healthz, body)
	}
	if _, err := stop(); err != nil {
		t.Fatal(err)
	}

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	var out bytes.Buffer
	err = run(t.Context(), nil, envFrom(map[string]string{"KNOBS_ADDR": "127.0.0.1:0", "KNOBS_DB": dbPath, "KNOBS_METRICS_ADDR": busy.Addr().String()}), &out)
	if err == nil || !strings.Contains(err.Error(), "KNOBS_METRICS_ADDR") {
		t.Errorf("a taken metrics address: %v, want an error naming KNOBS_METRICS_ADDR", err)
	}
}

// A scheduled backup is counted in the metrics Knobs serves: the
// scheduler's outcome reaches knobs_backups_total and the time of the
// last good one.
func TestScheduledBackupIsCounted(t *testing.T) {
	dir := t.TempDir()
	backups := filepath.Join(dir, "backups")
	token := "metrics-token-0123456789"
	base, stop := start(t, map[string]string{"KNOBS_ADDR": "127.0.0.1:0", "KNOBS_DB": filepath.Join(dir, "knobs.db"),
		"KNOBS_BACKUP_DIR": backups, "KNOBS_METRICS_TOKEN": token})
	defer stop()
	scrape := func() map[string]*dto.MetricFamily {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, base+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/metrics with the token: %d", resp.StatusCode)
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		families, err := p.TextToMetricFamilies(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return families
	}
	backupsTaken := func(f map[string]*dto.MetricFamily, result string) float64 {
		for _, s := range f["knobs_backups_total"].GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					return s.GetCounter().GetValue()
				}
			}
		}
		return -1
	}
	// The first backup is taken at start; wait for its file, then for
	// its count (the hook runs just after the file is in place).
	var f map[string]*dto.MetricFamily
	for i := 0; ; i++ {
		if i == 3000 {
			t.Fatalf("no backup counted; knobs_backups_total: %v", f["knobs_backups_total"])
		}
		f = scrape()
		if backupsTaken(f, "ok") == 1 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := backupsTaken(f, "error"); n != 0 {
		t.Errorf("failed backups counted: %v, want 0", n)
	}
	names, _ := filepath.Glob(filepath.Join(backups, "knobs-*.db"))
	if len(names) != 1 {
		t.Fatalf("backups written: %v, want 1", names)
	}
	last := f["knobs_backup_last_success_timestamp_seconds"].GetMetric()
	if len(last) != 1 || last[0].GetGauge().GetValue() < float64(time.Now().Add(-time.Minute).Unix()) {
		t.Errorf("the last good backup's time: %v", last)
	}
}
