package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"knobs/db"
)

// presetSpecJSON is a chat setup with a variable, as the playground sends it.
const presetSpecJSON = `{"provider":"sim","endpoint":"chat","body":{"model":"sim-fast","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Summarise {{topic}} for {{audience}}."}],"temperature":0.2,"max_completion_tokens":40,"response_format":{"type":"json_object"}}}`

// jsonPost posts v as JSON with the CSRF header and decodes the answer.
func (c *client) jsonPost(path, body string) (*response, map[string]any) {
	c.t.Helper()
	r := c.post(path, "application/json", strings.NewReader(body), http.Header{"X-Csrf-Token": {c.token()}, "Accept": {"application/json"}})
	var out map[string]any
	_ = json.Unmarshal([]byte(r.body), &out)
	return r, out
}

// savePreset saves a new preset and returns its id.
func (c *client) savePreset(name, visibility string) int64 {
	c.t.Helper()
	r, out := c.jsonPost("/presets", fmt.Sprintf(`{"name":%q,"description":"for tests","tags":"eval, Support","visibility":%q,"spec":%s,"variables":{"topic":"tides","audience":"children"}}`, name, visibility, presetSpecJSON))
	if r.status != http.StatusCreated {
		c.t.Fatalf("saving preset %q: %d %s", name, r.status, r.body)
	}
	return int64(out["id"].(float64))
}

func TestPresetSaveVersionsAndRestore(t *testing.T) {
	_, admin := newTeam(t)
	id := admin.savePreset("Summariser", "private")
	page := admin.open(fmt.Sprintf("/presets/%d", id))
	wantPage(t, page, http.StatusOK, "Summariser", "sim-fast", "{{topic}}", "tides", "version 1")

	// Save over it: a new version; the old one is kept.
	changed := strings.Replace(presetSpecJSON, `"temperature":0.2`, `"temperature":0.9`, 1)
	r, out := admin.jsonPost(fmt.Sprintf("/presets/%d", id), fmt.Sprintf(`{"spec":%s,"variables":{"topic":"tides"},"version":1}`, changed))
	if r.status != http.StatusOK || out["version"].(float64) != 2 {
		t.Fatalf("update: %d %s", r.status, r.body)
	}
	// A save over a version someone else replaced is refused, not lost.
	if r, _ := admin.jsonPost(fmt.Sprintf("/presets/%d", id), fmt.Sprintf(`{"spec":%s,"version":1}`, presetSpecJSON)); r.status != http.StatusConflict {
		t.Errorf("a stale save answered %d, want 409", r.status)
	}
	diffPage := admin.open(fmt.Sprintf("/presets/%d?a=1&b=2", id))
	wantPage(t, diffPage, http.StatusOK, "Version 1 → version 2", "body.temperature", "0.2", "0.9")
	if !regexp.MustCompile(`<tr class="changed"><th scope="row"><code>body.temperature</code>`).MatchString(diffPage.body) {
		t.Error("the changed temperature is not marked in the diff")
	}
	// Restore version 1: it becomes version 3 with the old temperature.
	admin.submit(fmt.Sprintf("/presets/%d/restore", id), form("version", "1"))
	page = admin.open(fmt.Sprintf("/presets/%d", id))
	wantPage(t, page, http.StatusOK, "version 3")
	if !page.has("0.2") || strings.Contains(strings.Split(page.body, "Versions")[0], "0.9") {
		t.Error("the restored preset does not hold version 1's temperature")
	}
}

func TestPresetVisibility(t *testing.T) {
	_, admin := newTeam(t)
	private := admin.savePreset("Mine alone", "private")
	team := admin.savePreset("For everyone", "team")
	bob := admin.addMember("bob")

	// Another user's private preset is 404 on every route.
	p := fmt.Sprintf("/presets/%d", private)
	if r := bob.get(p); r.status != http.StatusNotFound {
		t.Errorf("GET another user's private preset: %d", r.status)
	}
	if r := bob.get(p + "/export"); r.status != http.StatusNotFound {
		t.Errorf("export another user's private preset: %d", r.status)
	}
	for _, action := range []string{"/open", "/duplicate", "/delete", "/settings", "/restore", "/default", "/shares"} {
		if r := bob.postForm(p+action, form("version", "1", "name", "x", "visibility", "private", "audience", "public", "default", "1")); r.status != http.StatusNotFound {
			t.Errorf("POST %s on another user's private preset: %d, want 404", action, r.status)
		}
	}
	if r, _ := bob.jsonPost(p, fmt.Sprintf(`{"spec":%s}`, presetSpecJSON)); r.status != http.StatusNotFound {
		t.Errorf("saving over another user's private preset: %d", r.status)
	}
	if list := bob.open("/presets"); list.has("Mine alone") || !list.has("For everyone") {
		t.Error("bob's list shows admin's private preset or lacks the team one")
	}

	// A team preset can be used but not changed.
	tp := fmt.Sprintf("/presets/%d", team)
	wantPage(t, bob.get(tp), http.StatusOK, "For everyone")
	bob.submit(tp+"/open", nil)
	if pg := bob.open("/"); !pg.has("Summarise {{topic}}") {
		t.Error("opening a team preset did not load it")
	}
	if r, _ := bob.jsonPost(tp, fmt.Sprintf(`{"spec":%s}`, presetSpecJSON)); r.status != http.StatusForbidden {
		t.Errorf("a member saving over a team preset: %d, want 403", r.status)
	}
	for _, action := range []string{"/settings", "/restore", "/delete"} {
		if r := bob.postForm(tp+action, form("version", "1", "name", "Hijacked", "visibility", "team")); r.status != http.StatusForbidden {
			t.Errorf("POST %s on a team preset by a member: %d, want 403", action, r.status)
		}
	}
	if page := bob.open(tp); page.has("Hijacked") {
		t.Error("a member renamed a team preset")
	}
	// Duplicating it gives bob his own copy.
	copied := bob.follow(bob.postForm(tp+"/duplicate", nil))
	wantPage(t, copied, http.StatusOK, "For everyone (copy)", "yours")
}

func TestPresetNameIsChecked(t *testing.T) {
	_, admin := newTeam(t)
	for _, name := range []string{"", "   ", strings.Repeat("n", 101)} {
		r, out := admin.jsonPost("/presets", fmt.Sprintf(`{"name":%q,"spec":%s}`, name, presetSpecJSON))
		if r.status != http.StatusUnprocessableEntity {
			t.Errorf("name %q: %d, want 422", name, r.status)
			continue
		}
		if fields, _ := out["fields"].(map[string]any); fields["name"] == nil {
			t.Errorf("name %q: no message for the name field: %s", name, r.body)
		}
	}
	if list := admin.open("/presets"); !list.has("No presets yet") {
		t.Error("a refused preset was saved")
	}
}

func TestPresetVariablesAreFilledInTheRequestSent(t *testing.T) {
	s, admin := newTeam(t)
	spec := strings.TrimSuffix(presetSpecJSON, "}") + `,"variables":{"topic":"volcanoes","audience":"geologists"}}`
	r, run := admin.postRun(spec)
	if r.status != http.StatusCreated {
		t.Fatalf("run: %d %s", r.status, r.body)
	}
	admin.readEvents(run.Events, 0, nil)
	stored, err := s.store.Run(context.Background(), s.userID(t, "admin"), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stored.RawRequest, "Summarise volcanoes for geologists.") || strings.Contains(stored.RawRequest, "{{topic}}") {
		t.Errorf("the request sent was not filled in: %s", stored.RawRequest)
	}
	if !strings.Contains(stored.Spec, "{{topic}}") || !strings.Contains(stored.Variables, `"topic":"volcanoes"`) {
		t.Errorf("history does not keep the template and the values: spec %s, variables %s", stored.Spec, stored.Variables)
	}
	// Its page shows the values, and so does the export.
	wantPage(t, admin.open(fmt.Sprintf("/runs/%d", run.ID)), http.StatusOK, "Variables filled in", "{{topic}}", "volcanoes", "geologists")
	if exp := admin.get(fmt.Sprintf("/history/export?ids=%d", run.ID)); !strings.Contains(exp.body, `"variables":{"audience":"geologists","topic":"volcanoes"}`) && !strings.Contains(exp.body, `"variables":{"topic":"volcanoes","audience":"geologists"}`) {
		t.Errorf("the export lacks the variables: %.300s", exp.body)
	}
	// A run made from a preset is found by the history's preset filter.
	pid := admin.savePreset("Filtered", "private")
	fromPreset := strings.TrimSuffix(presetSpecJSON, "}") + fmt.Sprintf(`,"variables":{"topic":"a","audience":"b"},"preset_id":%d}`, pid)
	r, run2 := admin.postRun(fromPreset)
	if r.status != http.StatusCreated {
		t.Fatalf("run from a preset: %d %s", r.status, r.body)
	}
	admin.readEvents(run2.Events, 0, nil)
	filtered := admin.open(fmt.Sprintf("/history?preset=%d", pid))
	if !filtered.has(fmt.Sprintf(`href="/runs/%d"`, run2.ID)) || filtered.has(fmt.Sprintf(`href="/runs/%d"`, run.ID)) {
		t.Error("the preset filter does not list exactly the preset's runs")
	}
	// A variable without a value is named, and nothing is sent.
	missing := strings.TrimSuffix(presetSpecJSON, "}") + `,"variables":{"topic":"volcanoes"}}`
	r, _ = admin.postRun(missing)
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, "variables.audience") {
		t.Errorf("a missing variable answered %d %s", r.status, r.body)
	}
}

// importForm posts text (or a file) to the import form.
func (c *client) importPreset(text string, file []byte) *response {
	c.t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	w.WriteField("_csrf", c.token())
	w.WriteField("text", text)
	if file != nil {
		fw, _ := w.CreateFormFile("file", "preset.json")
		fw.Write(file)
	}
	w.Close()
	return c.post("/presets/import", w.FormDataContentType(), &body, nil)
}

func TestPresetImportAndExport(t *testing.T) {
	_, admin := newTeam(t)
	id := admin.savePreset("Round trip", "private")
	exported := admin.get(fmt.Sprintf("/presets/%d/export", id))
	if exported.status != http.StatusOK || !strings.Contains(exported.header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("export: %d %v", exported.status, exported.header)
	}
	if !strings.Contains(exported.body, `"format": "knobs-preset"`) || !strings.Contains(exported.body, "{{topic}}") {
		t.Errorf("export = %s", exported.body)
	}
	// It imports back to the same preset.
	r := admin.follow(admin.importPreset("", []byte(exported.body)))
	wantPage(t, r, http.StatusOK, "Imported as the preset Round trip")
	presets := admin.open("/presets")
	if strings.Count(presets.body, ">Round trip</a>") != 2 {
		t.Fatalf("after import the list has %d presets named Round trip, want 2", strings.Count(presets.body, ">Round trip</a>"))
	}
	ids := regexp.MustCompile(`href="/presets/(\d+)">Round trip</a>`).FindAllStringSubmatch(presets.body, -1)
	var other string
	for _, m := range ids {
		if m[1] != fmt.Sprint(id) {
			other = m[1]
		}
	}
	again := admin.get("/presets/" + other + "/export")
	if again.body != exported.body {
		t.Errorf("the imported preset exports differently:\n%s\nvs\n%s", again.body, exported.body)
	}

	// A curl command becomes a setup; the key in it is not kept.
	curl := `curl https://api.cerebras.ai/v1/chat/completions \
  -H "Authorization: Bearer csk-curl-secret-1234567890" \
  -H 'Content-Type: application/json' \
  -d '{"model":"gpt-oss-120b","messages":[{"role":"user","content":"Hello from curl"}],"temperature":0.5,"stream":true}'`
	r = admin.follow(admin.importPreset(curl, nil))
	wantPage(t, r, http.StatusOK, "Imported as the preset", "Hello from curl")
	if r.has("csk-curl-secret") {
		t.Fatal("the key of the curl command reached the page")
	}
}

func TestPresetImportRefusesBadFiles(t *testing.T) {
	s, admin := newTeam(t)
	tests := []struct {
		name, text string
		file       []byte
		message    string
	}{
		{"not JSON", "this is not json", nil, "JSON"},
		{"unknown format version", `{"format":"knobs-preset","version":99,"name":"x","spec":{"provider":"sim","endpoint":"chat","body":{"model":"sim-fast","messages":[]}}}`, nil, "version"},
		{"unknown fields", `{"format":"knobs-preset","version":1,"name":"x","colour":"red","spec":{"provider":"sim","endpoint":"chat","body":{"model":"sim-fast","messages":[{"role":"user","content":"hi"}]}}}`, nil, "colour"},
		{"an invalid parameter", `{"model":"sim-fast","messages":[{"role":"user","content":"hi"}],"temperature":9}`, nil, "temperature"},
		{"a 10 MB file", "", bytes.Repeat([]byte(" "), 10<<20), "at most"},
		{"nothing", "", nil, "Choose a file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := admin.importPreset(tt.text, tt.file)
			if r.status != http.StatusUnprocessableEntity && r.status != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %d, want 422 (or 413 for a body over the limit)", r.status)
			}
			if !strings.Contains(strings.ToLower(r.body), strings.ToLower(tt.message)) {
				t.Errorf("the page does not name the problem %q:\n%.300s", tt.message, errorText(r))
			}
		})
	}
	list, err := s.store.Presets(context.Background(), s.userID(t, "admin"), "")
	if err != nil || len(list) != 0 {
		t.Errorf("bad imports saved %d presets (%v)", len(list), err)
	}
}

var presetShareRE = regexp.MustCompile(`value="(http://[^"]+/p/[A-Za-z0-9_-]+)"`)

func TestPresetShareLinkAndRevocation(t *testing.T) {
	s, admin := newTeam(t)
	id := admin.savePreset("Shared setup", "private")
	page := admin.follow(admin.postForm(fmt.Sprintf("/presets/%d/shares", id), form("audience", "public")))
	m := presetShareRE.FindStringSubmatch(page.body)
	if m == nil {
		t.Fatal("no share link on the preset page")
	}
	u, _ := url.Parse(m[1])
	wantPage(t, s.newClient(t).get(u.Path), http.StatusOK, "Shared setup", "Summarise {{topic}}")
	// A signed-in viewer gets their own copy.
	bob := admin.addMember("bob")
	r := bob.follow(bob.postForm(u.Path+"/open", nil))
	wantPage(t, r, http.StatusOK, "Opened your own copy of Shared setup")
	if list := bob.open("/presets"); !list.has("Shared setup") || !list.has("yours") {
		t.Error("bob has no copy of his own")
	}
	// Revoked: the link stops opening.
	shares, err := s.store.Shares(context.Background(), s.userID(t, "admin"), db.SharePreset, id)
	if err != nil || len(shares) != 1 {
		t.Fatalf("shares %v %v", shares, err)
	}
	admin.submit(fmt.Sprintf("/shares/%d/revoke", shares[0].ID), nil)
	if r := s.newClient(t).get(u.Path); r.status != http.StatusNotFound {
		t.Errorf("a revoked preset link answered %d", r.status)
	}
}

func TestDefaultPresetLoadsInAFreshPlayground(t *testing.T) {
	_, admin := newTeam(t)
	id := admin.savePreset("Start here", "private")
	admin.submit(fmt.Sprintf("/presets/%d/default", id), form("default", "1"))
	// Nothing was ever run or changed in admin's playground: it opens on
	// their default.
	if got := loadedPreset(t, admin.open("/")); got.ID != id || got.Name != "Start here" {
		t.Errorf("admin's fresh playground loaded %+v, want their default preset %d", got, id)
	}
	carol := admin.addMember("carol")
	team := admin.savePreset("Team start", "team")
	carol.submit(fmt.Sprintf("/presets/%d/default", team), form("default", "1"))
	pg := carol.open("/")
	if got := loadedPreset(t, pg); got.ID != team || got.Name != "Team start" || !pg.has("Summarise {{topic}}") {
		t.Errorf("carol's fresh playground loaded %+v, want the team preset %d with its prompt", got, team)
	}
	// Once carol's playground holds work of her own, that is what opens.
	own := `{"provider":"sim","endpoint":"chat","body":{"model":"sim-fast","messages":[{"role":"user","content":"My own draft"}]}}`
	if r := carol.post("/playground/state", "application/json", strings.NewReader(own), http.Header{"X-Csrf-Token": {carol.token()}}); r.status != http.StatusNoContent {
		t.Fatalf("saving carol's playground: %d %s", r.status, r.body)
	}
	if pg := carol.open("/"); !pg.has("My own draft") || loadedPreset(t, pg).ID != 0 {
		t.Error("the default preset replaced what carol left in her playground")
	}
}

// loadedPreset is the preset a playground page says it has loaded (its
// data-preset attribute), zero when none.
func loadedPreset(t *testing.T, page *response) (p struct {
	ID   int64
	Name string
}) {
	t.Helper()
	m := regexp.MustCompile(`data-preset="([^"]*)"`).FindStringSubmatch(page.body)
	if m == nil {
		t.Fatalf("the playground page has no data-preset attribute (status %d)", page.status)
	}
	if m[1] == "" {
		return p
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &p); err != nil {
		t.Fatalf("data-preset %q: %v", m[1], err)
	}
	return p
}

// A team preset made private again takes its whole history with it: no
// page, diff, export or copy of any of its versions is left to others.
func TestOldPresetVersionsFollowTheCurrentVisibility(t *testing.T) {
	t.Parallel()
	_, admin := newTeam(t)
	bob := admin.addMember("bob")
	id := admin.savePreset("Once shared", "team")
	p := fmt.Sprintf("/presets/%d", id)
	changed := strings.Replace(presetSpecJSON, "You are terse.", "Internal notes: v2", 1)
	if r, _ := admin.jsonPost(p, fmt.Sprintf(`{"spec":%s,"version":1}`, changed)); r.status != http.StatusOK {
		t.Fatalf("second version: %d %s", r.status, r.body)
	}
	wantPage(t, bob.get(p+"?a=1&b=2"), http.StatusOK, "Version 1 → version 2")

	wantPage(t, admin.submit(p+"/settings", form("name", "Once shared", "visibility", "private")), http.StatusOK, "Saved.")
	for _, path := range []string{p, p + "?a=1&b=2", p + "?a=2&b=1", p + "/export"} {
		if r := bob.get(path); r.status != http.StatusNotFound || r.has("You are terse.") || r.has("Internal notes") {
			t.Errorf("GET %s after the preset became private: %d", path, r.status)
		}
	}
	for _, action := range []string{"/open", "/duplicate", "/restore"} {
		if r := bob.postForm(p+action, form("version", "1")); r.status != http.StatusNotFound {
			t.Errorf("POST %s after the preset became private: %d, want 404", action, r.status)
		}
	}
	if list := bob.open("/presets"); list.has("Once shared") {
		t.Error("the private preset is still in bob's list")
	}
}

// A save over a preset that names no version to build on could be over
// anyone's newer save: it is refused as a stale one is, and the preset
// keeps its version.
func TestPresetSaveWithoutAVersionIsRefused(t *testing.T) {
	s, admin := newTeam(t)
	id := admin.savePreset("Summariser", "private")
	changed := strings.Replace(presetSpecJSON, `"temperature":0.2`, `"temperature":0.9`, 1)
	for _, body := range []string{
		fmt.Sprintf(`{"spec":%s,"variables":{"topic":"tides"}}`, changed),
		fmt.Sprintf(`{"spec":%s,"variables":{"topic":"tides"},"version":0}`, changed),
	} {
		r, out := admin.jsonPost(fmt.Sprintf("/presets/%d", id), body)
		if r.status != http.StatusConflict && r.status != http.StatusBadRequest {
			t.Errorf("a save naming no version answered %d %s, want it refused", r.status, r.body)
		}
		if msg, _ := out["error"].(string); !strings.Contains(msg, "version") {
			t.Errorf("the refusal says %q, want it to say which version is missing", msg)
		}
	}
	p, err := s.store.Preset(context.Background(), s.userID(t, "admin"), id)
	if err != nil {
		t.Fatal(err)
	}
	if p.Version != 1 || !strings.Contains(p.Spec, `"temperature":0.2`) {
		t.Errorf("after the refused saves the preset is version %d with %s, want version 1 unchanged", p.Version, p.Spec)
	}
}
