package web_test

import (
	"context"
	"fmt"
	"github.com/chromedp/chromedp"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"knobs/db"
	"knobs/llm/sim"
	"knobs/runner"
)

// BenchmarkExperiment1000x2 runs 1,000 rows × 2 variants against the
// simulator at full speed, concurrency 32 per provider, with three
// graders, and waits for the end event: every cell stored and graded.
// It reports cells/s and the peak of the Go heap in use while it ran
// (sampled every 5 ms).
func BenchmarkExperiment1000x2(b *testing.B) {
	const rows = 1000
	srv, admin := newTeam(b, withSim(sim.NewConfig(sim.Options{TokensPerSecond: sim.NoPacing})),
		withRunner(runner.Options{MaxRuns: 200, Linger: time.Second}))
	tok := admin.makeToken("bench", "write", nil).Token
	ds := srv.makeDataset(b, "admin", rows)
	body := func(model string) map[string]any {
		return map[string]any{"provider": "sim", "endpoint": "chat", "body": map[string]any{
			"model": model, "messages": []any{map[string]any{"role": "user", "content": "Tell me about {{topic}}"}}, "max_tokens": 40}}
	}
	var peak atomic.Uint64
	stop := make(chan struct{})
	go func() {
		var ms runtime.MemStats
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > peak.Load() {
					peak.Store(ms.HeapInuse)
				}
			}
		}
	}()
	defer close(stop)
	var cells int
	start := time.Now()
	for i := 0; b.Loop(); i++ {
		a := srv.apiCall(b, "POST", "/api/v1/experiments", tok, map[string]any{
			"name": fmt.Sprint("bench ", i), "dataset": ds.ID, "concurrency": 32,
			"variants": []any{body("sim-fast"), body("sim-reasoning")},
			"graders": []any{
				map[string]any{"type": "length", "min": 1},
				map[string]any{"type": "contains", "terms": []string{"{{topic}}"}},
				map[string]any{"type": "latency", "max_ms": 60000},
			},
		})
		if a.status != http.StatusCreated {
			b.Fatalf("create: %d %s", a.status, a.body)
		}
		var e apiExperiment
		a.json(b, &e)
		seen, status := srv.followExperiment(b, tok, e.Events)
		if status != "done" || len(seen) != 2*rows {
			b.Fatalf("ended %q after %d cells", status, len(seen))
		}
		got, err := srv.store.Experiment(context.Background(), srv.userID(b, "admin"), e.ID)
		if err != nil || got.Finished != 2*rows || got.Failed != 0 {
			b.Fatalf("stored: %+v %v", got, err)
		}
		cells += len(seen)
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(cells)/elapsed.Seconds(), "cells/s")
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
}

// BenchmarkExperimentSlowUpstream runs 64 rows against an upstream that
// takes 100 ms before each answer, at concurrency 1, 4 and 16: cells/s
// should grow with the setting.
func BenchmarkExperimentSlowUpstream(b *testing.B) {
	for _, conc := range []int{1, 4, 16} {
		b.Run(fmt.Sprint("concurrency-", conc), func(b *testing.B) {
			const rows = 64
			handler := sim.NewHandler(sim.Options{TokensPerSecond: sim.NoPacing})
			upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				time.Sleep(100 * time.Millisecond)
				handler.ServeHTTP(w, r)
			}))
			b.Cleanup(upstream.Close)
			srv, admin := newTeam(b, withSim(upstreamConfig(upstream)))
			tok := admin.makeToken("bench", "write", nil).Token
			ds := srv.makeDataset(b, "admin", rows)
			var cells int
			start := time.Now()
			for i := 0; b.Loop(); i++ {
				a := srv.apiCall(b, "POST", "/api/v1/experiments", tok, map[string]any{
					"name": fmt.Sprint("slow ", i), "dataset": ds.ID, "concurrency": conc,
					"variants": []any{map[string]any{"provider": "sim", "endpoint": "chat", "body": map[string]any{
						"model": "sim-fast", "messages": []any{map[string]any{"role": "user", "content": "{{topic}}"}}, "max_tokens": 10}}},
				})
				if a.status != http.StatusCreated {
					b.Fatalf("create: %d %s", a.status, a.body)
				}
				var e apiExperiment
				a.json(b, &e)
				seen, status := srv.followExperiment(b, tok, e.Events)
				if status != "done" || len(seen) != rows {
					b.Fatalf("ended %q after %d cells", status, len(seen))
				}
				cells += len(seen)
			}
			b.ReportMetric(float64(cells)/time.Since(start).Seconds(), "cells/s")
		})
	}
}

// BenchmarkExperimentGridPage opens the page of an ended experiment of
// 1,000 rows × 2 variants in Chromium and reports the time from the
// navigation's start to the grid's first page drawn (the load event and
// the grid's last row laid out), and the server's time to answer it.
func BenchmarkExperimentGridPage(b *testing.B) {
	const rows = 1000
	srv := newServer(b, withSim(sim.NewConfig(sim.Options{TokensPerSecond: sim.NoPacing})))
	ctx := newBrowser(b)
	browserSignUp(b, ctx, srv, "admin")
	_, tok, err := srv.store.CreateToken(context.Background(), db.NewTokenInput{User: srv.userID(b, "admin"), Name: "bench", Scope: db.ScopeWrite}, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	ds := srv.makeDataset(b, "admin", rows)
	body := func(model string) map[string]any {
		return map[string]any{"provider": "sim", "endpoint": "chat", "body": map[string]any{
			"model": model, "messages": []any{map[string]any{"role": "user", "content": "Tell me about {{topic}}"}}, "max_tokens": 60}}
	}
	a := srv.apiCall(b, "POST", "/api/v1/experiments", tok, map[string]any{"name": "grid", "dataset": ds.ID, "concurrency": 32,
		"variants": []any{body("sim-fast"), body("sim-reasoning")},
		"graders":  []any{map[string]any{"type": "length", "min": 1}, map[string]any{"type": "json"}}})
	var e apiExperiment
	a.json(b, &e)
	if _, status := srv.followExperiment(b, tok, e.Events); status != "done" {
		b.Fatalf("ended %q", status)
	}
	page := fmt.Sprintf("%s/experiments/%d", srv.url, e.ID)
	var total, server float64
	for b.Loop() {
		if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#exp-results"))); err != nil {
			b.Fatal(err)
		}
		t, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => {
			const n = performance.getEntriesByType("navigation")[0];
			document.querySelector("#exp-results").getBoundingClientRect();
			return [n.loadEventEnd || performance.now(), n.responseEnd - n.requestStart];
		})()`))
		if err != nil {
			b.Fatal(err)
		}
		total += t[0]
		server += t[1]
	}
	b.ReportMetric(total/float64(b.N), "ms-to-load")
	b.ReportMetric(server/float64(b.N), "ms-server")
}
