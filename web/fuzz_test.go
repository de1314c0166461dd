package web_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"knobs/llm/sim"
)

// The fuzz target's ways of sending its bytes: whole, or put into one spot
// of a valid request so that the mutations reach past the first decoder.
const (
	fuzzRunRaw       = iota // POST /runs, the bytes as the request
	fuzzRunBody             // POST /runs, the bytes as the spec's body
	fuzzRunSchema           // POST /runs, the bytes as response_format's schema
	fuzzRunTool             // POST /runs, the bytes as a tool's parameters
	fuzzRunVariables        // POST /runs, the bytes as the variables object
	fuzzCompareRaw          // POST /compare/runs, the bytes as the request
	fuzzComparePane         // POST /compare/runs, the bytes as the first pane's body
	fuzzImport              // POST /presets/import, the bytes as the pasted text
	fuzzCode                // POST /playground/code, the bytes as the request
	fuzzWays
)

// fuzzRequest builds the request body for way from data.
func fuzzRequest(way uint8, data []byte) (path string, body []byte) {
	d := string(data)
	const chat = `{"model":"sim-fast","messages":[{"role":"user","content":"Give me data"}],"max_completion_tokens":40`
	// {{a}} 3,000 times: a value of 6 KB fills it past the body limit.
	fill := `{"model":"sim-fast","messages":[{"role":"user","content":"` + strings.Repeat("{{a}}", 3000) + `"}],"max_completion_tokens":40}`
	switch way {
	case fuzzRunRaw:
		return "/runs", data
	case fuzzRunBody:
		return "/runs", []byte(runSpec(d))
	case fuzzRunSchema:
		return "/runs", []byte(runSpec(chat + `,"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":` + d + `}}}`))
	case fuzzRunTool:
		return "/runs", []byte(runSpec(chat + `,"tools":[{"type":"function","function":{"name":"f","parameters":` + d + `}}],"tool_choice":"required"}`))
	case fuzzRunVariables:
		return "/runs", []byte(`{"provider":"sim","endpoint":"chat","body":` + fill + `,"variables":` + d + `}`)
	case fuzzCompareRaw:
		return "/compare/runs", data
	case fuzzComparePane:
		return "/compare/runs", []byte(`{"title":"fuzz","panes":[` + runSpec(d) + `,` + simRun + `]}`)
	case fuzzImport:
		return "/presets/import", data
	}
	return "/playground/code", data
}

// FuzzRequests sends random and hostile JSON where users send JSON (a run,
// a comparison, a preset import, the code view) and checks after each that
// Knobs never answered 500 and still serves another user. A crash of the
// server, in a handler or in a run it started, ends the fuzzing with the
// input that caused it.
func FuzzRequests(f *testing.F) {
	deep := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
	}
	schemaDeep := strings.Repeat(`{"type":"array","items":`, 3000) + `{}` + strings.Repeat("}", 3000)
	seeds := []struct {
		way  uint8
		data string
	}{
		{fuzzRunRaw, simRun},
		{fuzzRunRaw, `{"provider":"sim","endpoint":"chat","body":` + deep("[", "]", 20000) + `}`},
		{fuzzRunRaw, `{"provider":7,"endpoint":["chat"],"body":"{}","variables":[1]}`},
		{fuzzRunRaw, "{\"provider\":\"sim\",\"endpoint\":\"chat\",\"body\":{\"model\":\"sim-fast\",\"messages\":[{\"role\":\"user\",\"content\":\"\xff\xfe\xc0\x80 \xed\xa0\x80\"}]}}"},
		{fuzzRunRaw, `{"provider":"sim","endpoint":"chat","body":{"model":"sim-fast"},"preset_id":-1,"preset_version":1e400}`},
		{fuzzRunBody, `{"model":"sim-fast","messages":[{"role":"user","content":"hi"}],"extra":` + deep(`{"a":`, "}", 500) + `}`},
		{fuzzRunBody, `{"model":"sim-fast","messages":"not a list","temperature":"hot","n":1e9,"max_tokens":-5}`},
		{fuzzRunBody, `{"model":"sim-fast","messages":[{"role":"user","content":[{"type":"text","text":{"nested":[]}}]}],"stop":[[[]]]}`},
		{fuzzRunBody, `{"model":"sim-fast","prompt":[[1,2],[3]],"logit_bias":{"x":1e308},"seed":-9223372036854775809}`},
		{fuzzRunSchema, `{"anyOf":[{"$ref":"#/anyOf/0"}]}`},
		{fuzzRunSchema, `{"$defs":{"a":{"$ref":"#/$defs/a"}},"allOf":[{"$ref":"#/$defs/a"}]}`},
		{fuzzRunSchema, `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"oneOf":[{"$ref":"#/$defs/a"}]}`},
		{fuzzRunSchema, `{"type":"object","properties":{"a":{"$ref":"#"},"b":{"$ref":"#"},"c":{"$ref":"#"}},"required":["a","b","c"]}`},
		{fuzzRunSchema, `{"type":"array","minItems":5000000,"items":{"type":"integer"}}`},
		{fuzzRunSchema, `{"type":"object","minProperties":3000000}`},
		{fuzzRunSchema, `{"type":"string","minLength":3000000,"pattern":"^(a|b{1000})*$"}`},
		{fuzzRunSchema, `{"type":"array","contains":{"const":1},"minContains":4000000,"uniqueItems":true}`},
		{fuzzRunSchema, schemaDeep},
		{fuzzRunSchema, `{"type":"number","minimum":1e308,"maximum":-1e308,"multipleOf":1e-300}`},
		{fuzzRunSchema, `{"$ref":"file:///etc/passwd"}`},
		{fuzzRunTool, `{"type":"object","properties":{"x":{"$ref":"#"}},"required":["x"],"minProperties":99999999}`},
		{fuzzRunTool, `{"type":"integer","exclusiveMinimum":5,"exclusiveMaximum":5}`},
		// {{a}} 3,000 times with 6 KB: 18 MB filled, past the body limit.
		// (TestVariablesFilledPastTheBodyLimitAreRefused sends the 3 GB
		// one; a seed that large would slow every mutation of it.)
		{fuzzRunVariables, `{"a":"` + strings.Repeat("x", 6000) + `"}`},
		{fuzzRunVariables, `{"a":7,"b":null}`},
		{fuzzRunVariables, "{\"a\":\"\xff\"}"},
		{fuzzCompareRaw, `{"title":"t","panes":[` + simRun + `,` + simRun + `]}`},
		{fuzzCompareRaw, `{"title":` + `"` + strings.Repeat("é", 300) + `","panes":[]}`},
		{fuzzCompareRaw, `{"panes":[` + strings.Repeat(simRun+",", 6) + simRun + `]}`},
		{fuzzCompareRaw, `{"panes":` + deep("[", "]", 15000) + `}`},
		{fuzzComparePane, `{"model":"sim-fast","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"anyOf":[{"$ref":"#/anyOf/0"}]}}}}`},
		{fuzzImport, `{"model":"sim-fast","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":` + schemaDeep + `}}]}`},
		{fuzzImport, `{"format":"knobs-preset","version":1,"name":"x","spec":{"provider":"sim","endpoint":"chat","body":` + deep("[", "]", 9000) + `}}`},
		{fuzzImport, `curl https://api.cerebras.ai/v1/chat/completions -H 'Authorization: Bearer x' -d '{"model":"sim-fast","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"$ref":"#"}}}}'`},
		{fuzzImport, "{\"format\":\"knobs-preset\",\"version\":1,\"name\":\"\xff\",\"variables\":{\"\":\"\"},\"spec\":{\"provider\":\"sim\",\"endpoint\":\"chat\",\"body\":{}}}"},
		{fuzzCode, `{"provider":"sim","endpoint":"chat","body":{"model":"sim-fast","messages":[{"role":"user","content":"` + strings.Repeat("{{a}}", 3000) + `"}]},"variables":{"a":"` + strings.Repeat("y", 6000) + `"}}`},
		{fuzzCode, `{"provider":"sim","endpoint":"chat","body":{"model":"sim-fast","x":` + deep(`{"a":`, "}", 5000) + `}}`},
	}
	for _, s := range seeds {
		f.Add(s.way, []byte(s.data))
	}
	// One server for every input, as users share one Knobs; runs end at
	// once so that the ones the fuzzer starts do not pile up.
	srv, admin := newTeam(f, withSim(sim.NewConfig(sim.Options{TokensPerSecond: sim.NoPacing})))
	bystander := admin.addMember("bystander")

	f.Fuzz(func(t *testing.T, way uint8, data []byte) {
		attacker, other := *admin, *bystander
		attacker.t, other.t = t, t
		path, body := fuzzRequest(way%fuzzWays, data)
		var r *response
		if path == "/presets/import" {
			var form bytes.Buffer
			w := multipart.NewWriter(&form)
			w.WriteField("_csrf", attacker.token())
			w.WriteField("text", string(body))
			w.Close()
			r = attacker.post(path, w.FormDataContentType(), &form, nil)
		} else {
			r = attacker.post(path, "application/json", bytes.NewReader(body), http.Header{"X-Csrf-Token": {attacker.token()}, "Accept": {"application/json"}})
		}
		if r.status >= 500 && r.status != http.StatusServiceUnavailable {
			t.Fatalf("%s answered %d: %.300s\nlog: %.2000s", path, r.status, r.body, lastLines(srv.log.String(), 20))
		}
		if h := srv.newClient(t).get("/healthz"); h.status != http.StatusOK {
			t.Fatalf("/healthz answered %d after %s", h.status, path)
		}
		if p := other.get("/presets"); p.status != http.StatusOK {
			t.Fatalf("another user's presets page answered %d after %s", p.status, path)
		}
	})
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
