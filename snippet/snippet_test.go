package snippet

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

var chat = Request{
	BaseURL: "https://api.cerebras.ai",
	Path:    "/v1/chat/completions",
	KeyEnv:  "CEREBRAS_API_KEY",
	Body:    []byte(`{"model":"gpt-oss-120b","messages":[{"role":"user","content":"it's a \"test\" with ` + "`ticks`" + `"}],"temperature":0.5,"disable_reasoning":true,"stream":true}`),
}

func byLang(r Request) map[string]string {
	out := map[string]string{}
	for _, s := range Render(r) {
		out[s.Lang] = s.Code
	}
	return out
}

func TestCurlSendsTheExactBodyThroughTheShell(t *testing.T) {
	code := byLang(chat)["curl"]
	// Let the shell parse the -d argument and print it back.
	i := strings.Index(code, "-d ")
	out, err := exec.Command("sh", "-c", "printf %s "+code[i+3:]).Output()
	if err != nil {
		t.Fatalf("sh: %v", err)
	}
	if got := strings.Join(strings.Fields(string(out)), ""); !strings.Contains(got, `"content":"it's`) || !strings.Contains(got, `"disable_reasoning":true`) {
		t.Errorf("the shell received %s", out)
	}
	if !strings.Contains(code, `"Authorization: Bearer $CEREBRAS_API_KEY"`) {
		t.Errorf("curl does not read the key from the environment:\n%s", code)
	}
}

func TestPythonPutsUnknownFieldsInExtraBody(t *testing.T) {
	code := byLang(chat)["python"]
	for _, want := range []string{`base_url="https://api.cerebras.ai/v1"`, `os.environ["CEREBRAS_API_KEY"]`, "temperature=0.5", `extra_body={`, `"disable_reasoning": True`, "client.chat.completions.create("} {
		if !strings.Contains(code, want) {
			t.Errorf("python lacks %q:\n%s", want, code)
		}
	}
	if strings.Contains(code, "disable_reasoning=") {
		t.Error("disable_reasoning passed as an SDK argument; the SDK would reject it")
	}
}

func TestGoSnippetCompiles(t *testing.T) {
	code := byLang(chat)["go"]
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module snippet\n\ngo 1.22\n"), 0o644)
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "vet", ".")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go vet of the snippet: %v\n%s\n%s", err, out, code)
	}
}

func TestCompletionsUseTheCompletionsAPI(t *testing.T) {
	r := Request{BaseURL: "https://api.x.ai", Path: "/v1/completions", KeyEnv: "XAI_API_KEY", Body: []byte(`{"model":"grok-3","prompt":"Once","stream":true}`)}
	code := byLang(r)
	if !strings.Contains(code["python"], "client.completions.create(") || !strings.Contains(code["javascript"], "client.completions.create(") {
		t.Errorf("completion snippets use the chat API:\n%s\n%s", code["python"], code["javascript"])
	}
	if !strings.Contains(code["curl"], "https://api.x.ai/v1/completions") {
		t.Errorf("curl URL wrong:\n%s", code["curl"])
	}
}

func TestSnippetsOfADeepBodyStaySmall(t *testing.T) {
	// 60 levels down, a long list of small values: indenting each onto
	// its own line would write 120 spaces for every 2 bytes of the body,
	// four times over; and 5,000 levels would write 25 MB per level.
	for name, extra := range map[string]string{
		"wide and deep": strings.Repeat("[", 60) + strings.Repeat("1,", 50000) + "1" + strings.Repeat("]", 60),
		"very deep":     strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000),
	} {
		r := chat
		r.Body = []byte(`{"model":"m","messages":[],"x":` + extra + `}`)
		total := 0
		for _, s := range Render(r) {
			total += len(s.Code)
			if !strings.Contains(strings.Join(strings.Fields(s.Code), ""), `"x":`+extra[:20]) {
				t.Errorf("%s: the %s snippet lost the body", name, s.Lang)
			}
		}
		if total > 4*(4*len(r.Body)+8192) {
			t.Errorf("%s: %d bytes of snippets for a body of %d", name, total, len(r.Body))
		}
	}
}
