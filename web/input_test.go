package web_test

// Requests built to take Knobs down, sent as a user would send them: each
// is refused with a message naming the field, or runs to an ordinary end,
// and the server goes on serving everyone.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"knobs/llm/sim"
)

// countingUpstream is the simulator over HTTP, counting the completions
// asked of it.
func countingUpstream(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	h := sim.NewHandler(sim.Options{TokensPerSecond: sim.NoPacing})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/completions") {
			n.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// stillServes fails the test unless the server answers /healthz and a
// new member's ordinary run streams to its end.
func stillServes(t *testing.T, admin *client) {
	t.Helper()
	if r := admin.srv.newClient(t).get("/healthz"); r.status != http.StatusOK {
		t.Fatalf("/healthz answered %d after the attack", r.status)
	}
	other := admin.addMember(fmt.Sprintf("bystander%d", bystanders.Add(1)))
	r, run := other.postRun(simRun)
	if r.status != http.StatusCreated {
		t.Fatalf("another user's run after the attack: %d %s", r.status, r.body)
	}
	if _, events := other.readEvents(run.Events, 0, nil); len(events) == 0 || events[len(events)-1].event != "done" || !strings.Contains(events[len(events)-1].data, `"status":"done"`) {
		t.Fatalf("another user's run after the attack did not end done: %+v", events)
	}
}

var bystanders atomic.Int64

// fieldsOf decodes the field errors of a refused run.
func fieldsOf(t *testing.T, r *response) map[string]string {
	t.Helper()
	var out struct{ Fields map[string]string }
	if err := json.Unmarshal([]byte(r.body), &out); err != nil {
		t.Fatalf("answer %d is not JSON: %.200s", r.status, r.body)
	}
	return out.Fields
}

func TestVariablesFilledPastTheBodyLimitAreRefused(t *testing.T) {
	upstream, asked := countingUpstream(t)
	s, admin := newTeam(t, withSim(upstreamConfig(upstream)))
	// About 1 MiB of request that would fill into 3 GB.
	body := `{"model":"sim-fast","messages":[{"role":"user","content":"` + strings.Repeat("{{a}}", 3000) + `"}]}`
	value, _ := json.Marshal(strings.Repeat("x", 1<<20))
	spec := `{"provider":"sim","endpoint":"chat","body":` + body + `,"variables":{"a":` + string(value) + `}}`

	r, _ := admin.postRun(spec)
	if r.status != http.StatusUnprocessableEntity {
		t.Fatalf("POST /runs answered %d %.300s, want 422", r.status, r.body)
	}
	if msg := fieldsOf(t, r)["variables"]; !strings.Contains(msg, "past the 16 MiB a request may have") {
		t.Errorf("variables message %q does not name the limit", msg)
	}

	r, out := admin.postCompare("", spec, simRun)
	if r.status != http.StatusUnprocessableEntity || len(out.Panes) != 1 || !strings.Contains(out.Panes[0].Fields["variables"], "16 MiB") {
		t.Errorf("POST /compare/runs answered %d %.300s, want 422 naming pane 0's variables", r.status, r.body)
	}

	r = admin.post("/playground/code", "application/json", strings.NewReader(spec), http.Header{"X-Csrf-Token": {admin.token()}})
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, "16 MiB") {
		t.Errorf("POST /playground/code answered %d %.300s, want 422 naming the limit", r.status, r.body)
	}

	if n := asked.Load(); n != 0 {
		t.Errorf("%d requests went upstream", n)
	}
	if _, err := s.store.Run(context.Background(), s.userID(t, "admin"), 1); err == nil {
		t.Error("a refused run was stored")
	}
	stillServes(t, admin)
}

// schemaRun is a run of sim-fast answering in JSON for schema, or calling
// a tool with it as parameters, with at most tokens tokens.
func schemaRun(schema string, tool bool, tokens int) string {
	extra := `"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":` + schema + `}}`
	if tool {
		extra = `"tools":[{"type":"function","function":{"name":"f","parameters":` + schema + `}}],"tool_choice":"required"`
	}
	return runSpec(fmt.Sprintf(`{"model":"sim-fast","messages":[{"role":"user","content":"Give me data"}],"max_completion_tokens":%d,%s}`, tokens, extra))
}

func TestHostileSchemasRunToAnOrdinaryEnd(t *testing.T) {
	_, admin := newTeam(t)
	for _, tt := range []struct {
		name, schema string
		length       bool // the run must end on finish_reason "length"
	}{
		// Each of these took the whole server down: a stack overflow or
		// gigabytes before max_tokens applied.
		{"anyOf refers to itself", `{"anyOf":[{"$ref":"#/anyOf/0"}]}`, false},
		{"allOf through a def", `{"$defs":{"a":{"$ref":"#/$defs/a"}},"allOf":[{"$ref":"#/$defs/a"}]}`, false},
		{"three required self refs", `{"type":"object","properties":{"a":{"$ref":"#"},"b":{"$ref":"#"},"c":{"$ref":"#"}},"required":["a","b","c"]}`, false},
		{"minItems in the millions", `{"type":"array","minItems":5000000,"items":{"type":"integer"}}`, true},
		{"minProperties in the millions", `{"type":"object","minProperties":3000000}`, true},
		{"minLength in the millions", `{"type":"string","minLength":3000000}`, true},
	} {
		for _, tool := range []bool{false, true} {
			r, run := admin.postRun(schemaRun(tt.schema, tool, 100))
			if r.status != http.StatusCreated {
				t.Errorf("%s (tool %v): POST /runs answered %d %.300s", tt.name, tool, r.status, r.body)
				continue
			}
			_, events := admin.readEvents(run.Events, 0, nil)
			last := events[len(events)-1]
			if last.event != "done" || !strings.Contains(last.data, `"status":"done"`) {
				t.Errorf("%s (tool %v): ended with %s %.300s", tt.name, tool, last.event, last.data)
				continue
			}
			var done struct {
				FinishReasons []string `json:"finish_reasons"`
				Usage         struct {
					CompletionTokens int `json:"completion_tokens"`
				}
			}
			json.Unmarshal([]byte(last.data), &done)
			if tt.length && (len(done.FinishReasons) != 1 || done.FinishReasons[0] != "length") {
				t.Errorf("%s (tool %v): finish reasons %v, want length", tt.name, tool, done.FinishReasons)
			}
			if done.Usage.CompletionTokens > 100 {
				t.Errorf("%s (tool %v): %d completion tokens past max_completion_tokens 100", tt.name, tool, done.Usage.CompletionTokens)
			}
		}
	}
	stillServes(t, admin)
}

func TestRequestsNestedTooDeepAreRefusedByName(t *testing.T) {
	upstream, asked := countingUpstream(t)
	s, admin := newTeam(t, withSim(upstreamConfig(upstream)))
	deepSchema := strings.Repeat(`{"type":"array","items":`, 9000) + `{"type":"string"}` + strings.Repeat("}", 9000)
	nest := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	for _, tt := range []struct {
		name, spec, field string
	}{
		{"response_format schema", schemaRun(deepSchema, false, 50), "response_format"},
		{"tool parameters", schemaRun(deepSchema, true, 50), "tools"},
		{"extra body field", runSpec(`{"model":"sim-fast","messages":[{"role":"user","content":"x"}],"metadata":` + nest(500) + `}`), "metadata"},
	} {
		r, _ := admin.postRun(tt.spec)
		if r.status != http.StatusUnprocessableEntity {
			t.Errorf("%s: POST /runs answered %d %.300s, want 422", tt.name, r.status, r.body)
			continue
		}
		if msg := fieldsOf(t, r)[tt.field]; !strings.Contains(msg, "nested deeper than 64 levels") {
			t.Errorf("%s: %s message %q, want it to say how deep is too deep; fields %v", tt.name, tt.field, msg, fieldsOf(t, r))
		}
	}
	// Past encoding/json's own limit of 10,000 the request is not a spec.
	r, _ := admin.postRun(runSpec(`{"model":"sim-fast","messages":[{"role":"user","content":"x"}],"metadata":` + nest(20000) + `}`))
	if r.status != http.StatusBadRequest || !strings.Contains(r.body, "exceeded max depth") {
		t.Errorf("20,000 levels: %d %.300s, want 400 saying it is too deep", r.status, r.body)
	}

	// A preset file or request body imported.
	r = admin.importPreset(`{"model":"sim-fast","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":`+deepSchema+`}}}`, nil)
	if r.status != http.StatusUnprocessableEntity || !r.has("nested deeper than 64 levels") {
		t.Errorf("import: %d %s, want 422 saying it is nested too deep", r.status, errorText(r))
	}
	if presets, _ := s.store.Presets(context.Background(), s.userID(t, "admin"), ""); len(presets) != 0 {
		t.Errorf("a refused import stored %d presets", len(presets))
	}

	if n := asked.Load(); n != 0 {
		t.Errorf("%d requests went upstream", n)
	}
	if _, err := s.store.Run(context.Background(), s.userID(t, "admin"), 1); err == nil {
		t.Error("a refused run was stored")
	}
	stillServes(t, admin)
}
