package web_test

// Metrics, request ids and readiness (issue 19): what Prometheus scrapes
// after real runs through the simulator, who may scrape it, the id a
// request carries into the answer and the log, and /readyz.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"knobs/llm/sim"
	"knobs/logs"
)

// scrape reads url's metrics with Prometheus' own text parser, sending
// token as a bearer token when it is not "".
func scrape(t *testing.T, url, token string) (int, map[string]*dto.MetricFamily) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("scraping %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing the metrics of %s: %v", url, err)
	}
	return resp.StatusCode, families
}

// series returns the metrics of family name whose labels include every
// pair of want.
func series(families map[string]*dto.MetricFamily, name string, want ...string) []*dto.Metric {
	var out []*dto.Metric
	f := families[name]
	if f == nil {
		return nil
	}
next:
	for _, m := range f.GetMetric() {
		for i := 0; i+1 < len(want); i += 2 {
			if label(m, want[i]) != want[i+1] {
				continue next
			}
		}
		out = append(out, m)
	}
	return out
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// value is the sum of the counters or gauges of name matching want, and
// how many series matched.
func value(families map[string]*dto.MetricFamily, name string, want ...string) (float64, int) {
	var sum float64
	ms := series(families, name, want...)
	for _, m := range ms {
		sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
	}
	return sum, len(ms)
}

// observations is how many observations the histograms of name matching
// want hold.
func observations(families map[string]*dto.MetricFamily, name string, want ...string) uint64 {
	var n uint64
	for _, m := range series(families, name, want...) {
		n += m.GetHistogram().GetSampleCount()
	}
	return n
}

func wantValue(t *testing.T, families map[string]*dto.MetricFamily, want float64, name string, labels ...string) {
	t.Helper()
	if got, n := value(families, name, labels...); got != want || n == 0 {
		t.Errorf("%s%v = %v (%d series), want %v", name, labels, got, n, want)
	}
}

// usageOf reads the token counts of a run's done event.
func usageOf(t *testing.T, done sseEvent) (input, output int) {
	t.Helper()
	var d struct {
		Status string `json:"status"`
		Usage  *struct {
			Prompt     int `json:"prompt_tokens"`
			Completion int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(done.data), &d); err != nil {
		t.Fatalf("done %q: %v", done.data, err)
	}
	if d.Usage == nil {
		return 0, 0
	}
	return d.Usage.Prompt, d.Usage.Completion
}

var digitSegment = regexp.MustCompile(`/[0-9]`)

// Runs through the simulator are counted by provider, model and status,
// with their errors, time to first token, duration and tokens, on the
// metrics listener; HTTP requests are counted by route pattern, never
// with a run id or a share token in a label.
func TestMetricsCountRunsThroughTheSimulator(t *testing.T) {
	s, admin := newTeam(t, withEnv("KNOBS_METRICS_ADDR", "127.0.0.1:0"))
	if s.metricsURL == "" {
		t.Fatal("no metrics listener")
	}

	var input, output int
	var ids []int64
	for _, prompt := range []string{"Tell me about rivers", "Tell me about deserts"} {
		id, events := admin.runToEnd(simChat(prompt, ""))
		in, out := usageOf(t, events[len(events)-1])
		if out == 0 {
			t.Fatalf("run %d reported no usage: %s", id, events[len(events)-1].data)
		}
		input, output, ids = input+in, output+out, append(ids, id)
	}
	_, flaky := admin.runToEnd(`{"provider":"sim","endpoint":"chat","body":{"model":"sim-flaky","messages":[{"role":"user","content":"Fail for me"}]}}`)
	var errEvent struct {
		Kind   string `json:"kind"`
		Status int    `json:"status"`
	}
	for _, e := range flaky {
		if e.event == "error" {
			json.Unmarshal([]byte(e.data), &errEvent)
		}
	}
	if errEvent.Kind == "" {
		t.Fatalf("the sim-flaky run sent no error: %+v", flaky)
	}
	flakyIn, flakyOut := usageOf(t, flaky[len(flaky)-1])
	input, output = input+flakyIn, output+flakyOut

	// A public share link, whose token must stay out of the metrics.
	r, share := admin.jsonPost(fmt.Sprintf("/runs/%d/shares", ids[0]), `{"audience":"public"}`)
	if r.status != http.StatusCreated {
		t.Fatalf("sharing: %d %s", r.status, r.body)
	}
	link := fmt.Sprint(share["url"])
	wantPage(t, s.newClient(t).get(link), http.StatusOK)
	token := strings.TrimPrefix(link, "/s/")

	status, m := scrape(t, s.metricsURL, "")
	if status != http.StatusOK {
		t.Fatalf("the metrics listener answered %d", status)
	}
	wantValue(t, m, 2, "knobs_runs_started_total", "provider", "sim", "model", "sim-fast")
	wantValue(t, m, 1, "knobs_runs_started_total", "provider", "sim", "model", "sim-flaky")
	wantValue(t, m, 2, "knobs_runs_finished_total", "provider", "sim", "model", "sim-fast", "status", "done")
	wantValue(t, m, 1, "knobs_runs_finished_total", "provider", "sim", "model", "sim-flaky", "status", "error")
	wantValue(t, m, 3, "knobs_runs_finished_total")
	class := ""
	if errEvent.Status > 0 {
		class = fmt.Sprintf("%dxx", errEvent.Status/100)
	}
	wantValue(t, m, 1, "knobs_upstream_errors_total", "provider", "sim", "kind", errEvent.Kind, "status_class", class)
	wantValue(t, m, 1, "knobs_upstream_errors_total")
	if n := observations(m, "knobs_run_duration_seconds", "provider", "sim"); n != 3 {
		t.Errorf("run durations observed: %d, want 3", n)
	}
	if n := observations(m, "knobs_run_first_token_seconds", "provider", "sim"); n != 3 {
		t.Errorf("first tokens observed: %d, want 3 (sim-flaky streams tokens before it fails)", n)
	}
	wantValue(t, m, float64(input), "knobs_tokens_total", "provider", "sim", "direction", "input")
	wantValue(t, m, float64(output), "knobs_tokens_total", "provider", "sim", "direction", "output")
	wantValue(t, m, 0, "knobs_runs_live")
	if n := observations(m, "knobs_db_write_seconds", "result", "ok"); n == 0 {
		t.Error("no database write was timed")
	}
	if _, n := value(m, "knobs_run_writer_queue"); n != 1 {
		t.Error("the run writer's queue is not reported")
	}
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes", "knobs_backups_total", "knobs_backup_last_success_timestamp_seconds"} {
		if m[name] == nil {
			t.Errorf("%s is missing", name)
		}
	}

	// Requests by route pattern.
	wantValue(t, m, 3, "knobs_http_requests_total", "method", "POST", "route", "/runs", "status", "201")
	wantValue(t, m, 3, "knobs_http_requests_total", "method", "GET", "route", "/runs/:id/events", "status", "200")
	wantValue(t, m, 1, "knobs_http_requests_total", "method", "GET", "route", "/s/:token", "status", "200")
	for _, sr := range series(m, "knobs_http_requests_total") {
		route := label(sr, "route")
		if strings.Contains(route, token) || digitSegment.MatchString(route) {
			t.Errorf("a route label carries an id or a token: %q", route)
		}
	}
	if strings.Contains(s.log.String(), token) {
		t.Error("the log shows the share token")
	}

	// While a stream is open, it is a listener, and its run is live.
	r, slow := admin.postRun(`{"provider":"sim","endpoint":"chat","body":{"model":"sim-slow","messages":[{"role":"user","content":"Take your time"}]}}`)
	if r.status != http.StatusCreated {
		t.Fatalf("POST /runs = %d %s", r.status, r.body)
	}
	admin.readEvents(slow.Events, 0, func(sseEvent) bool {
		_, open := scrape(t, s.metricsURL, "")
		wantValue(t, open, 1, "knobs_sse_listeners")
		wantValue(t, open, 1, "knobs_runs_live")
		return true
	})
	admin.post(fmt.Sprintf("/runs/%d/cancel", slow.ID), "application/json", strings.NewReader(`{}`), http.Header{"X-Csrf-Token": {admin.token()}})
}

// A model gets a label of its own only when Knobs knows it: on Knobs'
// list, or named by its provider's list once Knobs has read it. A run of
// a made-up name (anyone can type one) is counted as "other", so such
// runs cannot push the real models out of the bounded labels.
func TestMetricsNameOnlyModelsKnobsKnows(t *testing.T) {
	simulator := sim.NewHandler(sim.Options{TokensPerSecond: 2000})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/v1/models" {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"object":"list","data":[{"id":"sim-fast","object":"model"},{"id":"team-finetune-7","object":"model"}]}`)
			return
		}
		simulator.ServeHTTP(w, r)
	}))
	t.Cleanup(upstream.Close)
	s, admin := newTeam(t, withSim(upstreamConfig(upstream)), withEnv("KNOBS_METRICS_ADDR", "127.0.0.1:0"))
	run := func(model string) {
		t.Helper()
		r, started := admin.postRun(`{"provider":"sim","endpoint":"chat","body":{"model":"` + model + `","messages":[{"role":"user","content":"Name a river"}],"max_completion_tokens":5}}`)
		if r.status != http.StatusCreated {
			t.Fatalf("POST /runs with model %s = %d %s", model, r.status, r.body)
		}
		admin.readEvents(started.Events, 0, nil)
	}
	run("made-up-model-1")
	run("team-finetune-7") // the provider's list is not read yet
	run("sim-fast")
	tok := admin.makeToken("ops", "read", nil).Token
	if a := s.apiCall(t, "GET", "/api/v1/providers", tok, nil); a.status != http.StatusOK || !strings.Contains(a.body, "team-finetune-7") {
		t.Fatalf("GET /api/v1/providers: %d %s", a.status, a.body)
	}
	run("team-finetune-7")
	run("made-up-model-2")

	_, m := scrape(t, s.metricsURL, "")
	wantValue(t, m, 3, "knobs_runs_started_total", "provider", "sim", "model", "other")
	wantValue(t, m, 1, "knobs_runs_started_total", "provider", "sim", "model", "team-finetune-7")
	wantValue(t, m, 1, "knobs_runs_started_total", "provider", "sim", "model", "sim-fast")
	wantValue(t, m, 3, "knobs_runs_finished_total", "provider", "sim", "model", "other")
	for _, name := range []string{"knobs_runs_started_total", "knobs_runs_finished_total", "knobs_tokens_total", "knobs_cost_usd_total"} {
		for _, sr := range series(m, name) {
			if strings.HasPrefix(label(sr, "model"), "made-up") {
				t.Errorf("%s has a series for the made-up model %q", name, label(sr, "model"))
			}
		}
	}
}

// The main port has no /metrics unless KNOBS_METRICS_TOKEN is set, and
// then only for a request that carries that token.
func TestMetricsOnTheMainPortNeedTheToken(t *testing.T) {
	plain := newServer(t)
	if status, _ := scrape(t, plain.url+"/metrics", ""); status != http.StatusNotFound {
		t.Errorf("/metrics by default answered %d, want 404", status)
	}
	apart := newServer(t, withEnv("KNOBS_METRICS_ADDR", "127.0.0.1:0"))
	if status, _ := scrape(t, apart.url+"/metrics", ""); status != http.StatusNotFound {
		t.Errorf("/metrics on the main port with KNOBS_METRICS_ADDR answered %d, want 404", status)
	}

	const secret = "scrape-token-0123456789"
	s := newServer(t, withEnv("KNOBS_METRICS_TOKEN", secret))
	for _, sent := range []string{"", "wrong-token-0123456789", secret + "x", strings.ToUpper(secret)} {
		if status, _ := scrape(t, s.url+"/metrics", sent); status != http.StatusUnauthorized {
			t.Errorf("/metrics with token %q answered %d, want 401", sent, status)
		}
	}
	s.newClient(t).get("/login")
	status, m := scrape(t, s.url+"/metrics", secret)
	if status != http.StatusOK {
		t.Fatalf("/metrics with the token answered %d", status)
	}
	wantValue(t, m, 1, "knobs_http_requests_total", "method", "GET", "route", "/login", "status", "200")
	wantValue(t, m, 4, "knobs_http_requests_total", "method", "GET", "route", "/metrics", "status", "401")
	if strings.Contains(s.log.String(), secret) {
		t.Error("the log shows the metrics token")
	}
}

// logLines decodes the JSON log lines that have msg.
func logLines(t *testing.T, log, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		var l map[string]any
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("a log line is not JSON: %q", line)
		}
		if l["msg"] == msg {
			out = append(out, l)
		}
	}
	return out
}

// A request's id is answered in X-Request-Id and logged on its lines: a
// sane id the client sent, else a new one.
func TestRequestIDInTheAnswerAndTheJSONLog(t *testing.T) {
	s := newServer(t, withEnv("KNOBS_LOG_FORMAT", "json"))
	get := func(path, id string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, s.url+path, nil)
		if id != "" {
			req.Header.Set("X-Request-Id", id)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	requestLine := func(path, id string) map[string]any {
		t.Helper()
		for _, l := range logLines(t, s.log.String(), "request") {
			if l["path"] == path && l["request_id"] == id {
				return l
			}
		}
		t.Fatalf("no request line for %s with request_id %q in the log:\n%s", path, id, s.log.String())
		return nil
	}

	resp := get("/login", "lb-7f3a.42:trace_9")
	if got := resp.Header.Get("X-Request-Id"); got != "lb-7f3a.42:trace_9" {
		t.Errorf("X-Request-Id = %q, want the one sent", got)
	}
	requestLine("/login", "lb-7f3a.42:trace_9")

	fresh := regexp.MustCompile(`^[0-9a-f]{24}$`)
	for _, sent := range []string{"", `"quoted" id`, strings.Repeat("a", logs.MaxRequestIDLen+1), "naïve"} {
		resp := get("/healthz", sent)
		got := resp.Header.Get("X-Request-Id")
		if !fresh.MatchString(got) {
			t.Errorf("sent %q, X-Request-Id = %q, want a new id", sent, got)
			continue
		}
		requestLine("/healthz", got)
	}
	if strings.Contains(s.log.String(), "quoted") {
		t.Error("the log shows a refused request id")
	}

	// A handler's own line carries the id too: a page's (a failed sign-in)
	// and an API operation's (an admin setting the budgets).
	admin := s.newClient(t)
	admin.signUp("admin", "")
	visitor := s.newClient(t)
	visitor.get("/login")
	r := visitor.post("/login", "application/x-www-form-urlencoded",
		strings.NewReader(form("username", "admin", "password", "not the password", "_csrf", visitor.token()).Encode()),
		http.Header{"X-Request-Id": {"signin-1"}})
	if r.status != http.StatusUnauthorized {
		t.Fatalf("a wrong password answered %d", r.status)
	}
	handlerLine(t, s.log.String(), "sign-in failed", "signin-1")
	tok := admin.makeToken("ops", "write", nil).Token
	a := s.apiRequest(t, http.DefaultClient, "PUT", "/api/v1/budgets", map[string]any{"team_usd": 50}, func(h http.Header) {
		h.Set("Authorization", "Bearer "+tok)
		h.Set("X-Request-Id", "budgets-1")
	})
	if a.status != http.StatusOK {
		t.Fatalf("PUT /api/v1/budgets: %d %s", a.status, a.body)
	}
	handlerLine(t, s.log.String(), "budgets changed", "budgets-1")

	// So does a readiness probe that fails, which logs why.
	if err := s.store.LimitGrowth(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	resp = get("/readyz", "probe-1")
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("/readyz on a full database answered %d", resp.StatusCode)
	}
	found := false
	for _, l := range logLines(t, s.log.String(), "readiness check failed: the database cannot be written") {
		found = found || l["request_id"] == "probe-1"
	}
	if !found {
		t.Errorf("the readiness failure is not logged with its request id:\n%s", s.log.String())
	}
	requestLine("/readyz", "probe-1")
}

// handlerLine fails the test unless log has a line msg with request_id
// id.
func handlerLine(t *testing.T, log, msg, id string) {
	t.Helper()
	lines := logLines(t, log, msg)
	for _, l := range lines {
		if l["request_id"] == id {
			return
		}
	}
	t.Errorf("%d %q lines in the log, none with request_id %q: %v", len(lines), msg, id, lines)
}

// /readyz is 200 while the database takes writes and 503, with the
// reason, while it does not or Knobs is shutting down; /healthz, the
// liveness check, stays 200 meanwhile.
func TestReadyzFailsWhileTheDatabaseCannotBeWritten(t *testing.T) {
	s := newServer(t)
	c := s.newClient(t)
	wantPage(t, c.get("/readyz"), http.StatusOK, "ready")

	// readyz asks until the answer is want: a probe's answer is reused
	// for a second, so a change shows within about that.
	readyz := func(want int) *response {
		t.Helper()
		var r *response
		for i := 0; i < 500; i++ {
			if r = c.get("/readyz"); r.status == want {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		return r
	}
	// The database held at its size, as a full disk holds it.
	if err := s.store.LimitGrowth(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	wantPage(t, readyz(http.StatusServiceUnavailable), http.StatusServiceUnavailable, "the database cannot be written")
	wantPage(t, c.get("/healthz"), http.StatusOK, "ok")

	// Room again: ready again.
	if err := s.store.LimitGrowth(context.Background(), 1<<20); err != nil {
		t.Fatal(err)
	}
	wantPage(t, readyz(http.StatusOK), http.StatusOK, "ready")

	s.beginStop()
	wantPage(t, c.get("/readyz"), http.StatusServiceUnavailable, "shutting down")
	wantPage(t, c.get("/healthz"), http.StatusOK, "ok")
}

// /readyz needs no sign-in and its probe takes the database's only
// writer: a flood of concurrent requests shares probes instead of
// queueing one write each in front of the runs'.
func TestReadyzFloodSharesItsProbes(t *testing.T) {
	s := newServer(t, withEnv("KNOBS_METRICS_ADDR", "127.0.0.1:0"))
	const flood = 40
	var wg sync.WaitGroup
	statuses := make(chan int, flood)
	for range flood {
		wg.Go(func() {
			resp, err := http.Get(s.url + "/readyz")
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			statuses <- resp.StatusCode
		})
	}
	wg.Wait()
	close(statuses)
	for st := range statuses {
		if st != http.StatusOK {
			t.Errorf("/readyz answered %d in a flood, want 200", st)
		}
	}
	_, m := scrape(t, s.metricsURL, "")
	probes := 0.0
	for _, x := range m["knobs_readiness_probes_total"].GetMetric() {
		probes += x.GetCounter().GetValue()
	}
	// One probe a second at most: the flood is over in far less than
	// the forty seconds that would allow one each.
	if probes < 1 || probes >= flood/2 {
		t.Errorf("%v write probes for %d concurrent /readyz, want them shared", probes, flood)
	}
}

// A run stopped at one of Knobs' own bounds is counted as that bound,
// not as the provider's error.
func TestMetricsTellTheOutputCapApart(t *testing.T) {
	s, admin := newTeam(t, withEnv("KNOBS_METRICS_ADDR", "127.0.0.1:0"), withEnv("KNOBS_MAX_OUTPUT_BYTES", "200"))
	_, events := admin.runToEnd(`{"provider":"sim","endpoint":"chat","body":{"model":"sim-fast","messages":[{"role":"user","content":"Tell me about lakes"}],"max_completion_tokens":400}}`)
	if !strings.Contains(events[len(events)-2].data, "output limit reached") {
		t.Fatalf("the run did not stop at the cap: %+v", events[len(events)-2])
	}
	_, m := scrape(t, s.metricsURL, "")
	wantValue(t, m, 1, "knobs_upstream_errors_total", "provider", "sim", "kind", "output_limit")
	wantValue(t, m, 1, "knobs_runs_finished_total", "model", "sim-fast", "status", "error")
}
