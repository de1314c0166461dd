package main

import (
	"bytes"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

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
