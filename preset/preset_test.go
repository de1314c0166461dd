package preset_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"knobs/llm"
	"knobs/preset"
)

const chatBody = `{"model":"llama-3.3-70b","messages":[{"role":"system","content":"Answer in <b>{{tone}}</b> & short."},{"role":"user","content":"Hi {{name}}, café?"}],"temperature":0.7,"response_format":{"type":"json_schema","json_schema":{"name":"a","schema":{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"number"}}}}},"max_tokens":256}`

func sample() preset.File {
	return preset.File{
		Format:      preset.FormatName,
		Version:     preset.FormatVersion,
		Name:        "Friendly helper",
		Description: "Says hi.\nTwo lines, \"quoted\".",
		Tags:        []string{"demo", "writing"},
		Variables:   map[string]string{"tone": "warm", "name": "Ada"},
		Spec:        llm.RunSpec{Provider: "cerebras", Endpoint: llm.EndpointChat, Body: json.RawMessage(chatBody)},
	}
}

func TestExportImportRoundTrip(t *testing.T) {
	f := sample()
	out, err := preset.Export(f)
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	if !strings.HasPrefix(text, "{\n  \"format\": \"knobs-preset\",\n  \"version\": 1,\n  \"name\": \"Friendly helper\",") || !strings.HasSuffix(text, "}\n") {
		t.Errorf("export does not start and end as it should:\n%s", text)
	}
	order := []string{`"description"`, `"tags"`, `"variables"`, `"name": "Ada"`, `"tone": "warm"`, `"spec"`, `"provider"`, `"endpoint"`, `"body"`,
		`"model"`, `"messages"`, `"temperature"`, `"response_format"`, `"z"`, `"a": {`, `"max_tokens"`}
	last := -1
	for _, s := range order {
		i := strings.Index(text, s)
		if i <= last {
			t.Errorf("%s is not where it should be in\n%s", s, text)
		}
		last = i
	}
	if strings.Contains(text, `\u003c`) || !strings.Contains(text, "<b>{{tone}}</b> & short") {
		t.Errorf("the prompt is not written as typed:\n%s", text)
	}
	again, _ := preset.Export(f)
	if !bytes.Equal(out, again) {
		t.Error("two exports of one preset differ")
	}

	back, err := preset.Import(out)
	if err != nil {
		t.Fatalf("import of an export: %v", err)
	}
	if !reflect.DeepEqual(back, f) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, f)
	}

	// Empty tags and variables are written as [] and {} and read as nil;
	// Format and Version are set by Export.
	bare := preset.File{Name: "bare", Spec: llm.RunSpec{Endpoint: llm.EndpointCompletion, Body: json.RawMessage(`{"model":"m","prompt":"x"}`)}}
	out, err = preset.Export(bare)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"tags": [],`) || !strings.Contains(string(out), `"variables": {},`) {
		t.Errorf("a bare export:\n%s", out)
	}
	back, err = preset.Import(out)
	bare.Format, bare.Version = preset.FormatName, preset.FormatVersion
	if err != nil || !reflect.DeepEqual(back, bare) {
		t.Errorf("bare round trip: %+v %v", back, err)
	}
}

func TestExportLeavesNoSecret(t *testing.T) {
	f := sample()
	f.Spec.Body = json.RawMessage(`{"model":"m","stream":true,"api_key":"csk-SECRET","messages":[{"role":"user","content":"x"}],"Authorization":"Bearer csk-SECRET"}`)
	out, err := preset.Export(f)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "SECRET") || strings.Contains(string(out), `"stream"`) {
		t.Errorf("export kept a key or stream:\n%s", out)
	}
	f.Spec.Body = json.RawMessage(`[1]`)
	if _, err := preset.Export(f); err == nil {
		t.Error("exported a body that is not an object")
	}
}

func TestImportBadFiles(t *testing.T) {
	good := func(edit func(map[string]any)) string {
		var m map[string]any
		out, _ := preset.Export(sample())
		json.Unmarshal(out, &m)
		edit(m)
		b, _ := json.Marshal(m)
		return string(b)
	}
	spec := func(m map[string]any) map[string]any { return m["spec"].(map[string]any) }
	huge := `{"format":"knobs-preset","version":1,"name":"` + strings.Repeat("x", 10<<20) + `"}`
	for _, tt := range []struct {
		name, data string
		want       []string // substrings of the message
	}{
		{"empty", "  \n", []string{"empty"}},
		{"not JSON", "name: my preset\n", []string{"not JSON", "line 1"}},
		{"truncated", `{"format": "knobs-preset",` + "\n" + `"version": 1,`, []string{"not JSON", "ends before"}},
		{"syntax error on line 3", "{\n\"a\": 1,\n\"b\": tru\n}", []string{"not JSON", "line 3"}},
		{"an array", `[{"format":"knobs-preset"}]`, []string{"not an object"}},
		{"two objects", `{"messages":[]} {"messages":[]}`, []string{"more than one"}},
		{"10 MB", huge, []string{"10.0 MiB", "at most 1 MiB"}},
		{"newer version", good(func(m map[string]any) { m["version"] = 2 }), []string{"format version 2", "newer Knobs", "reads version 1"}},
		{"version 0", good(func(m map[string]any) { m["version"] = 0 }), []string{"format version 0"}},
		{"no version", good(func(m map[string]any) { delete(m, "version") }), []string{"no format version"}},
		{"version as text", good(func(m map[string]any) { m["version"] = "1" }), []string{`version is "1"`, "whole number"}},
		{"version 1.5", good(func(m map[string]any) { m["version"] = 1.5 }), []string{"1.5", "whole number"}},
		{"other format", good(func(m map[string]any) { m["format"] = "other-tool" }), []string{`format is "other-tool"`, `"knobs-preset"`}},
		{"unknown field", good(func(m map[string]any) { m["author"] = "me" }), []string{"does not know", `"author"`}},
		{"unknown field in spec", good(func(m map[string]any) { spec(m)["api_key"] = "csk-1" }), []string{"does not know", `"spec.api_key"`}},
		{"name a number", good(func(m map[string]any) { m["name"] = 5 }), []string{"name must be a string, not a number"}},
		{"tags a string", good(func(m map[string]any) { m["tags"] = "a,b" }), []string{"tags must be an array of strings, not a string"}},
		{"variable a number", good(func(m map[string]any) { m["variables"] = map[string]any{"x": 1} }), []string{"variables: each default value must be a string, not a number"}},
		{"field of another case", good(func(m map[string]any) { m["Name"] = m["name"]; delete(m, "name") }), []string{"does not know", `"Name"`}},
		{"unknown field in spec, exact", good(func(m map[string]any) { spec(m)["Body"] = spec(m)["body"]; delete(spec(m), "body") }), []string{`"spec.Body"`}},
		{"bad variable name", good(func(m map[string]any) { m["variables"] = map[string]any{"1x": "a"} }), []string{`"1x" is not a variable name`}},
		{"endpoint", good(func(m map[string]any) { spec(m)["endpoint"] = "embeddings" }), []string{"spec.endpoint", `"embeddings"`}},
		{"no endpoint", good(func(m map[string]any) { delete(spec(m), "endpoint") }), []string{"spec.endpoint"}},
		{"body an array", good(func(m map[string]any) { spec(m)["body"] = []int{1} }), []string{"spec.body must be a JSON object"}},
		{"no body", good(func(m map[string]any) { delete(spec(m), "body") }), []string{"spec.body must be a JSON object"}},
		{"neither chat nor completion", `{"model":"llama","input":"hi"}`, []string{"neither a chat request", "no messages", "no prompt"}},
		{"both chat and completion", `{"model":"llama","prompt":"hi","messages":[]}`, []string{"both messages", "and prompt"}},
		{"a preset without format", `{"name":"x","spec":{}}`, []string{`no "format"`}},
		{"nested too deep", `{"model":"m","messages":[],"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, []string{"nested deeper than 64 levels"}},
		{"a file nested too deep", good(func(m map[string]any) {
			spec(m)["body"].(map[string]any)["x"] = json.RawMessage(strings.Repeat("[", 9000) + strings.Repeat("]", 9000))
		}), []string{"nested deeper than 64 levels"}},
		{"curl nested too deep", `curl https://api.cerebras.ai/v1/chat/completions -d '{"model":"m","messages":[],"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}'`, []string{"nested deeper than 64 levels"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := preset.Import([]byte(tt.data))
			var ie *preset.ImportError
			if !errors.As(err, &ie) {
				t.Fatalf("Import = %+v, %v; want an ImportError", f, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(ie.Problem, w) {
					t.Errorf("message %q does not say %q", ie.Problem, w)
				}
			}
			if len(ie.Problem) > 300 {
				t.Errorf("message of %d bytes", len(ie.Problem))
			}
		})
	}
}

func TestImportRawBody(t *testing.T) {
	for _, tt := range []struct {
		name, data string
		endpoint   llm.Endpoint
		body       string
		dropped    []string
	}{
		{"chat", "\ufeff" + `{
  "model": "llama-3.3-70b",
  "stream": true,
  "messages": [{"role": "user", "content": "Hi <there>"}],
  "api_key": "csk-secret",
  "stream_options": {"include_usage": true},
  "temperature": 0.2
}`, llm.EndpointChat, `{"model":"llama-3.3-70b","messages":[{"role":"user","content":"Hi <there>"}],"stream_options":{"include_usage":true},"temperature":0.2}`, []string{"stream", "api_key"}},
		{"completion", `{"model":"grok-3","prompt":"Once upon","max_tokens":16,"stop":["\n"]}`, llm.EndpointCompletion,
			`{"model":"grok-3","prompt":"Once upon","max_tokens":16,"stop":["\n"]}`, nil},
		{"completion with token ids", `{"prompt":[1,2,3],"model":"m"}`, llm.EndpointCompletion, `{"prompt":[1,2,3],"model":"m"}`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := preset.Import([]byte(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			want := preset.File{Spec: llm.RunSpec{Provider: "", Endpoint: tt.endpoint, Body: json.RawMessage(tt.body)}, Dropped: tt.dropped}
			if !reflect.DeepEqual(f, want) {
				t.Errorf("Import:\n got %+v\nwant %+v\nbody %s", f, want, f.Spec.Body)
			}
		})
	}
}

func TestImportCurl(t *testing.T) {
	const body = `{"model":"llama-3.3-70b","messages":[{"role":"user","content":"Say \"hi\" to {{name}}"}],"temperature":0.5}`
	for _, tt := range []struct {
		name, cmd string
		provider  string
		endpoint  llm.Endpoint
		body      string
	}{
		{"Cerebras, multi-line, single quotes", `curl --location 'https://api.cerebras.ai/v1/chat/completions' \
  --header 'Content-Type: application/json' \
  --header "Authorization: Bearer ${CEREBRAS_API_KEY}" \
  --data '{
  "model": "llama-3.3-70b",
  "stream": false,
  "messages": [{"role": "user", "content": "Say \"hi\" to {{name}}"}],
  "temperature": 0.5
}'`, "cerebras", llm.EndpointChat, body},
		{"xAI, --json, key inline", `curl https://api.x.ai/v1/chat/completions -H "Authorization: Bearer xai-SECRETKEY123" --json '` + body + `'`,
			"xai", llm.EndpointChat, body},
		{"double quotes with escapes", `curl -sS -X POST "https://api.x.ai/v1/completions" -H "Authorization: Bearer xai-SECRETKEY123" -d "{\"model\":\"grok-3\",\"prompt\":\"Cost: \$5 \\\"ok\\\"\",\"max_tokens\":8}"`,
			"xai", llm.EndpointCompletion, `{"model":"grok-3","prompt":"Cost: $5 \"ok\"","max_tokens":8}`},
		{"ANSI-C quoting", `curl https://api.cerebras.ai/v1/chat/completions --data-raw $'{"model":"m","messages":[{"role":"user","content":"it\'s"}]}'`,
			"cerebras", llm.EndpointChat, `{"model":"m","messages":[{"role":"user","content":"it's"}]}`},
		{"body first, URL by --url, grouped flags", `curl -sSN --data-binary '{"model":"m","prompt":"p"}' -X POST --url https://API.CEREBRAS.AI:443/v1/completions/`,
			"cerebras", llm.EndpointCompletion, `{"model":"m","prompt":"p"}`},
		{"body attached to -d", `curl -d'{"model":"m","messages":[]}' localhost:8080/v1/chat/completions`,
			"", llm.EndpointChat, `{"model":"m","messages":[]}`},
		{"no URL: the body decides", `curl -d '{"model":"m","prompt":"p"}'`, "", llm.EndpointCompletion, `{"model":"m","prompt":"p"}`},
		{"shell prompt, pipe, comment", "$ curl http://127.0.0.1:8000/v1/chat/completions \\\n  # the body:\n  -d '{\"model\":\"m\",\"messages\":[]}' | jq .",
			"", llm.EndpointChat, `{"model":"m","messages":[]}`},
		{"CRLF continuations", "curl https://api.x.ai/v1/chat/completions \\\r\n  -H 'Authorization: Bearer xai-SECRETKEY123' \\\r\n  -d '{\"model\":\"grok-4\",\"messages\":[]}'\r\n",
			"xai", llm.EndpointChat, `{"model":"grok-4","messages":[]}`},
		{"-d drops newlines as curl does", "curl https://api.x.ai/v1/chat/completions -d '{\"model\":\"grok-4\",\n\"messages\":[]}'",
			"xai", llm.EndpointChat, `{"model":"grok-4","messages":[]}`},
		{"a proxy's Host header", `curl http://10.0.0.5/v1/chat/completions -H 'Host: api.cerebras.ai' -d '{"model":"m","messages":[]}'`,
			"cerebras", llm.EndpointChat, `{"model":"m","messages":[]}`},
		{"unknown option values are not the URL", `curl -o out.json --retry 3 https://api.x.ai/v1/chat/completions -d '{"model":"m","messages":[]}'`,
			"xai", llm.EndpointChat, `{"model":"m","messages":[]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := preset.Import([]byte(tt.cmd))
			if err != nil {
				t.Fatal(err)
			}
			if f.Spec.Provider != tt.provider || f.Spec.Endpoint != tt.endpoint || string(f.Spec.Body) != tt.body {
				t.Errorf("Import = %q %q %s\nwant %q %q %s", f.Spec.Provider, f.Spec.Endpoint, f.Spec.Body, tt.provider, tt.endpoint, tt.body)
			}
			all, _ := json.Marshal(f)
			out, _ := preset.Export(f)
			for _, b := range [][]byte{all, out} {
				if bytes.Contains(b, []byte("SECRETKEY")) || bytes.Contains(b, []byte("CEREBRAS_API_KEY")) || bytes.Contains(b, []byte("Bearer")) {
					t.Errorf("the key was kept: %s", b)
				}
			}
		})
	}
}

func TestImportBadCurl(t *testing.T) {
	for _, tt := range []struct {
		name, cmd string
		want      string
	}{
		{"unclosed single quote", `curl https://api.x.ai/v1/chat/completions -d '{"model":"m"`, "' quote that is never closed"},
		{"unclosed double quote", `curl https://api.x.ai/v1/chat/completions -d "{`, `" quote that is never closed`},
		{"no body", `curl https://api.x.ai/v1/models -H 'Authorization: Bearer x'`, "sends no body"},
		{"body from a file", `curl https://api.x.ai/v1/chat/completions -d @request.json`, "from a file (-d @request.json)"},
		{"a form", `curl https://api.x.ai/v1/chat/completions -F 'file=@a.txt'`, "sends a form"},
		{"two bodies", `curl https://api.x.ai/v1/chat/completions -d '{}' --data-raw '{}'`, "more than one body (-d and --data-raw)"},
		{"another endpoint", `curl https://api.x.ai/v1/embeddings -d '{"model":"m","input":"x"}'`, "posts to /v1/embeddings"},
		{"chat URL, completion body", `curl https://api.x.ai/v1/chat/completions -d '{"model":"m","prompt":"x"}'`, "posts to /v1/chat/completions but its body has a prompt"},
		{"completion URL, chat body", `curl https://api.x.ai/v1/completions -d '{"model":"m","messages":[]}'`, "posts to /v1/completions but its body has messages"},
		{"body not JSON", `curl https://api.x.ai/v1/chat/completions -d 'model=m'`, "The curl command's body is not JSON"},
		{"body neither", `curl https://api.x.ai/v1/chat/completions -d '{"model":"m"}'`, "neither a chat request"},
		{"ends before a value", `curl https://api.x.ai/v1/chat/completions -d`, "ends before the value of -d"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := preset.Import([]byte(tt.cmd))
			var ie *preset.ImportError
			if !errors.As(err, &ie) || !strings.Contains(ie.Problem, tt.want) {
				t.Errorf("Import = %+v, %v; want a message saying %q", f, err, tt.want)
			}
		})
	}
}

func TestImportDropsStreamOnly(t *testing.T) {
	f, err := preset.Import([]byte(`{"stream":true,"model":"m","messages":[],"stream_options":{"include_usage":true},"x-api-key":"k","user":"u"}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(f.Spec.Body) != `{"model":"m","messages":[],"stream_options":{"include_usage":true},"user":"u"}` || !slices.Equal(f.Dropped, []string{"stream", "x-api-key"}) {
		t.Errorf("Import = %s, dropped %q", f.Spec.Body, f.Dropped)
	}
}

func TestOverrideSetsAddsAndRemovesTopLevelFields(t *testing.T) {
	body := json.RawMessage(`{"model":"sim-small","messages":[{"role":"user","content":"Hi"}],"temperature":0.2,"top_p":0.9}`)
	got, err := preset.Override(body, map[string]json.RawMessage{
		"temperature": json.RawMessage(`1.5`), "top_p": json.RawMessage(`null`), "seed": json.RawMessage(`7`), "max_tokens": json.RawMessage(` 64 `),
		"absent": json.RawMessage(`null`),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"sim-small","messages":[{"role":"user","content":"Hi"}],"temperature":1.5,"max_tokens":64,"seed":7}`
	if string(got) != want {
		t.Errorf("Override = %s\nwant %s", got, want)
	}
	if same, err := preset.Override(body, nil); err != nil || string(same) != string(body) {
		t.Errorf("no overrides changed the body: %s, %v", same, err)
	}
	if _, err := preset.Override(json.RawMessage(`[1]`), map[string]json.RawMessage{"a": json.RawMessage(`1`)}); err == nil {
		t.Error("an array body was overridden")
	}
}
