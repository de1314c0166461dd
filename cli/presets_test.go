package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

const summarizeFile = `{"format":"knobs-preset","version":1,"name":"summarize","description":"Sums a topic up","tags":["docs"],
"variables":{"topic":"otters"},
"spec":{"provider":"sim","endpoint":"chat","body":{"model":"sim-fast","messages":[{"role":"user","content":"Tell me about {{topic}}"}],"max_completion_tokens":50}}}`

// TestPresetsRoundTrip: push creates the preset from a file; pull writes
// exactly the page's export; pushing the pulled file back changes
// nothing and pulling again gives the same bytes; an edited file adds a
// version; a push over a stale base is refused; with the production
// label on an old version, pull answers that one and push still goes
// over the latest.
func TestPresetsRoundTrip(t *testing.T) {
	s := newTestServer(t)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	must := func(r result, what string) result {
		t.Helper()
		if r.code != 0 {
			t.Fatalf("%s: exit %d, stderr %q", what, r.code, r.stderr)
		}
		return r
	}

	r := must(s.knobs(t, "presets", "push", write("new.json", summarizeFile)), "push a new preset")
	m := regexp.MustCompile(`^created preset (\d+) version 1\n$`).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("push of a new preset printed %q", r.stdout)
	}
	id := m[1]

	pulled := must(s.knobs(t, "presets", "pull", "summarize"), "pull").stdout
	if export := s.pageExport(t, id); pulled != export {
		t.Errorf("pull is not the page's export:\npull:   %q\nexport: %q", pulled, export)
	}
	if byID := must(s.knobs(t, "presets", "pull", id), "pull by id").stdout; byID != pulled {
		t.Errorf("pull by id differs from pull by name")
	}
	file := write("summarize.json", pulled)
	if r := must(s.knobs(t, "presets", "push", file), "push back"); r.stdout != "preset "+id+": unchanged (version 1)\n" {
		t.Errorf("pushing the pulled file back printed %q", r.stdout)
	}
	if again := must(s.knobs(t, "presets", "pull", "summarize"), "pull again").stdout; again != pulled {
		t.Errorf("pull after an unchanged push differs:\n%q\n%q", again, pulled)
	}

	edited := strings.Replace(pulled, "Sums a topic up", "Sums a topic up in a paragraph", 1)
	write("summarize.json", edited)
	if r := must(s.knobs(t, "presets", "push", file), "push an edit"); r.stdout != "preset "+id+": version 2\n" {
		t.Errorf("pushing an edit printed %q", r.stdout)
	}
	if v2 := must(s.knobs(t, "presets", "pull", "summarize"), "pull v2").stdout; v2 != edited {
		t.Errorf("pull after the edit:\n%q\nwant\n%q", v2, edited)
	}
	if v1 := must(s.knobs(t, "presets", "pull", "summarize", "--version", "1"), "pull v1").stdout; v1 != pulled {
		t.Errorf("pull --version 1 is not version 1")
	}

	// A file made from version 1, pushed now that version 2 exists.
	write("stale.json", strings.Replace(pulled, "Sums a topic up", "Something else", 1))
	r = s.knobs(t, "presets", "push", filepath.Join(dir, "stale.json"), "--base-version", "1")
	if r.code != 1 || !strings.Contains(r.stderr, "newer version than 1") {
		t.Errorf("a stale push: exit %d, stderr %q", r.code, r.stderr)
	}

	// The production label on version 1: pull answers it, push goes
	// over the latest (2), not over the label's version.
	if status, raw := s.api(t, "PUT", "/presets/"+id+"/labels/production", map[string]any{"version": 1}, nil); status != http.StatusOK {
		t.Fatalf("moving production: %d %s", status, raw)
	}
	if prod := must(s.knobs(t, "presets", "pull", "summarize"), "pull production").stdout; prod != pulled {
		t.Errorf("pull with production on version 1 answered another version")
	}
	if prod := must(s.knobs(t, "presets", "pull", "summarize", "--label", "production"), "pull --label").stdout; prod != pulled {
		t.Errorf("pull --label production answered another version")
	}
	write("summarize.json", strings.Replace(edited, "paragraph", "sentence", 1))
	if r := must(s.knobs(t, "presets", "push", file), "push over the latest"); r.stdout != "preset "+id+": version 3\n" {
		t.Errorf("push with production behind printed %q", r.stdout)
	}

	r = must(s.knobs(t, "presets", "list"), "list")
	if !regexp.MustCompile(`(?m)^` + id + `\s+summarize\s+3\s+production→1\s+private`).MatchString(r.stdout) {
		t.Errorf("list:\n%s", r.stdout)
	}

	// Refusals.
	if r := s.knobs(t, "presets", "pull", "nothing-here"); r.code != 1 || !strings.Contains(r.stderr, "no such preset") {
		t.Errorf("pull of an unknown preset: exit %d, %q", r.code, r.stderr)
	}
	if r := s.knobs(t, "presets", "pull", "summarize", "--label", "staging"); r.code != 1 || !strings.Contains(r.stderr, "staging") {
		t.Errorf("pull of an unknown label: exit %d, %q", r.code, r.stderr)
	}
	if r := s.knobs(t, "presets", "push", write("junk.json", `{"hello":1}`)); r.code != 1 || !strings.Contains(r.stderr, "not a preset file") {
		t.Errorf("push of a file that is not a preset: exit %d, %q", r.code, r.stderr)
	}
	if r := s.knobs(t, "presets", "pull", "summarize", "--label", "production", "--version", "1"); r.code != exitUsage {
		t.Errorf("--label with --version: exit %d", r.code)
	}
}

// TestPresetsRenderIsWhatTheRunSends: render prints the body a run of
// the preset sends upstream, variables and overrides filled in.
func TestPresetsRenderIsWhatTheRunSends(t *testing.T) {
	s := newTestServer(t)
	p := filepath.Join(t.TempDir(), "p.json")
	if err := os.WriteFile(p, []byte(summarizeFile), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := s.knobs(t, "presets", "push", p); r.code != 0 {
		t.Fatalf("push: %d %s", r.code, r.stderr)
	}
	args := []string{"summarize", "--var", "topic=beavers", "--set", "temperature=0.5"}
	r := s.knobs(t, append([]string{"presets", "render"}, args...)...)
	if r.code != 0 {
		t.Fatalf("render: exit %d, %q", r.code, r.stderr)
	}
	var rendered struct {
		Provider string         `json:"provider"`
		Endpoint string         `json:"endpoint"`
		Body     map[string]any `json:"body"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rendered); err != nil {
		t.Fatalf("render printed %q: %v", r.stdout, err)
	}
	if rendered.Provider != "sim" || rendered.Endpoint != "chat" || !strings.Contains(r.stdout, "Tell me about beavers") || rendered.Body["temperature"] != 0.5 {
		t.Errorf("render printed %s", r.stdout)
	}

	r = s.knobs(t, "run", "--json", "--preset", args[0], args[1], args[2], args[3], args[4])
	if r.code != 0 {
		t.Fatalf("run --preset: exit %d, %q", r.code, r.stderr)
	}
	var run storedRun
	if err := json.Unmarshal([]byte(r.stdout), &run); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(run.Request.Body, rendered.Body) {
		t.Errorf("the run sent\n%v\nrender printed\n%v", run.Request.Body, rendered.Body)
	}
	if run.Status != "done" || run.Choices[0].Text == "" {
		t.Errorf("run --preset: %+v", run)
	}
}

// pageExport signs in as the test user and downloads preset id's export
// from its page, as a browser does.
func (s *testServer) pageExport(t *testing.T, id string) string {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	get := func(path string) (int, string) {
		resp, err := c.Get(s.url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	_, page := get("/login")
	m := regexp.MustCompile(`name="_csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no CSRF field on the sign-in page")
	}
	resp, err := c.PostForm(s.url+"/login", url.Values{"_csrf": {m[1]}, "username": {"ada"}, "password": {testPassword}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	status, body := get("/presets/" + id + "/export")
	if status != http.StatusOK {
		t.Fatalf("the page's export: %d %s", status, body)
	}
	return body
}
