package snippet

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The keyword parameters of the openai Python SDK's create methods, pinned
// from openai-python (src/openai/resources/completions.py at commit
// 0396a9fb, chat/completions/completions.py at 00709f2a). A snippet may
// pass only these as arguments; anything else raises TypeError and must
// travel in extra_body (issue 12, item 6).
var (
	pinnedCompletionsCreate = []string{"model", "prompt", "best_of", "echo", "frequency_penalty", "logit_bias", "logprobs",
		"max_tokens", "n", "presence_penalty", "seed", "stop", "stream", "stream_options", "suffix", "temperature", "top_p", "user",
		"extra_headers", "extra_query", "extra_body", "timeout"}
	pinnedChatCompletionsCreate = []string{"messages", "model", "audio", "frequency_penalty", "function_call", "functions",
		"logit_bias", "logprobs", "max_completion_tokens", "max_tokens", "metadata", "modalities", "moderation", "n",
		"parallel_tool_calls", "prediction", "presence_penalty", "prompt_cache_key", "prompt_cache_options",
		"prompt_cache_retention", "reasoning_effort", "response_format", "safety_identifier", "seed", "service_tier", "stop",
		"store", "stream", "stream_options", "temperature", "tool_choice", "tools", "top_logprobs", "top_p", "user",
		"verbosity", "web_search_options", "extra_headers", "extra_query", "extra_body", "timeout"}
)

// keywordArgs are the names passed as keyword arguments at the top level
// of the create call.
var keywordArg = regexp.MustCompile(`(?m)^    ([a-z_]+)=`)

func TestPythonPassesOnlyWhatTheSDKMethodTakes(t *testing.T) {
	every := `"model":"m","temperature":0.5,"top_p":1,"n":1,"stop":["x"],"seed":1,"max_tokens":5,"frequency_penalty":0,"presence_penalty":0,` +
		`"logit_bias":{"1":1},"user":"u","prompt_cache_key":"k","service_tier":"flex","reasoning_format":"parsed","min_tokens":1,"stream":true,"stream_options":{"include_usage":true}`
	for _, tt := range []struct {
		path   string
		body   string
		method string
		takes  []string
	}{
		{"/v1/completions", `{` + every + `,"prompt":["a","b"],"echo":true,"logprobs":2,"best_of":1,"suffix":"s","return_raw_tokens":true,"grammar_root":"g"}`,
			"client.completions.create(", pinnedCompletionsCreate},
		{"/v1/chat/completions", `{` + every + `,"messages":[{"role":"user","content":"hi"}],"max_completion_tokens":5,"logprobs":true,"top_logprobs":2,"clear_thinking":true,"disable_reasoning":false,"prediction":{"type":"content","content":"x"}}`,
			"client.chat.completions.create(", pinnedChatCompletionsCreate},
	} {
		code := byLang(Request{BaseURL: "https://api.cerebras.ai", Path: tt.path, KeyEnv: "K", Body: []byte(tt.body)})["python"]
		if !strings.Contains(code, tt.method) {
			t.Fatalf("%s: not a %s call:\n%s", tt.path, tt.method, code)
		}
		for _, m := range keywordArg.FindAllStringSubmatch(code, -1) {
			if !slices.Contains(tt.takes, m[1]) {
				t.Errorf("%s: %s passes %s=, which the SDK method does not take (TypeError)", tt.path, tt.method, m[1])
			}
		}
		if !strings.Contains(code, `"prompt_cache_key"`) && tt.path == "/v1/completions" {
			t.Errorf("%s: prompt_cache_key went missing instead of into extra_body:\n%s", tt.path, code)
		}
		checkPython(t, code)
	}
}

func TestNonStreamedSnippetsPrintTheAnswer(t *testing.T) {
	r := Request{BaseURL: "https://api.cerebras.ai", Path: "/v1/chat/completions", KeyEnv: "K",
		Body: []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":false}`)}
	code := byLang(r)
	if strings.Contains(code["python"], "for chunk in") || !strings.Contains(code["python"], "message.content") {
		t.Errorf("python iterates a non-streamed answer:\n%s", code["python"])
	}
	if strings.Contains(code["javascript"], "for await") || !strings.Contains(code["javascript"], "message") {
		t.Errorf("javascript iterates a non-streamed answer:\n%s", code["javascript"])
	}
	if strings.Contains(code["curl"], "curl -N") {
		t.Errorf("curl asks for no buffering of a non-streamed answer:\n%s", code["curl"])
	}
	checkPython(t, code["python"])
	checkJS(t, code["javascript"])
}

// TestEverySnippetPassesItsSyntaxCheck runs each language's own syntax
// checker over each snippet: py_compile, node --check, sh -n.
func TestEverySnippetPassesItsSyntaxCheck(t *testing.T) {
	for _, r := range []Request{chat,
		{BaseURL: "https://api.x.ai", Path: "/v1/completions", KeyEnv: "XAI_API_KEY", Body: []byte(`{"model":"grok-3","prompt":["a","b"],"stream":true}`)},
		{BaseURL: "http://localhost:11434", Path: "/v1/chat/completions", Body: []byte(`{"model":"llama","messages":[{"role":"user","content":"hi"}],"stream":false}`)}} {
		code := byLang(r)
		checkPython(t, code["python"])
		checkJS(t, code["javascript"])
		checkShell(t, code["curl"])
	}
}

func checkPython(t *testing.T, code string) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed to check the Python snippets (apt-get install python3; .ci/run installs it)")
	}
	f := filepath.Join(t.TempDir(), "snippet.py")
	os.WriteFile(f, []byte(code), 0o644)
	if out, err := exec.Command(py, "-m", "py_compile", f).CombinedOutput(); err != nil {
		t.Errorf("py_compile: %v\n%s\n%s", err, out, code)
	}
}

func checkJS(t *testing.T, code string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is needed to check the JavaScript snippets (apt-get install nodejs; .ci/run installs it)")
	}
	f := filepath.Join(t.TempDir(), "snippet.mjs") // an ES module: import and top-level await
	os.WriteFile(f, []byte(code), 0o644)
	if out, err := exec.Command(node, "--check", f).CombinedOutput(); err != nil {
		t.Errorf("node --check: %v\n%s\n%s", err, out, code)
	}
}

func checkShell(t *testing.T, code string) {
	t.Helper()
	if out, err := exec.Command("sh", "-n", "-c", code).CombinedOutput(); err != nil {
		t.Errorf("sh -n: %v\n%s\n%s", err, out, code)
	}
}
