package web_test

// Presets through the REST API over real HTTP with bearer tokens:
// created from and answered in the export format, versioned over a base,
// fetched by label or version with an ETag, labels moved (recorded,
// protected), rendered to the body a run sends, and run.

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"knobs/db"
	"knobs/llm/sim"
)

// presetFile is a preset in the export format, with fields a test sets.
func presetFile(name, prompt string, temperature float64) map[string]any {
	return map[string]any{"format": "knobs-preset", "version": 1, "name": name, "description": "Short answers",
		"tags": []string{"email"}, "variables": map[string]string{"topic": "glaciers"},
		"spec": map[string]any{"provider": "sim", "endpoint": "chat", "body": map[string]any{
			"model": "sim-fast", "messages": []map[string]string{{"role": "user", "content": prompt}}, "temperature": temperature}}}
}

// apiPreset is a preset as the API lists it.
type apiPreset struct {
	ID         int64    `json:"id"`
	Name       string   `json:"name"`
	Tags       []string `json:"tags"`
	Visibility string   `json:"visibility"`
	Owner      string   `json:"owner"`
	Version    int      `json:"version"`
	Labels     []struct {
		Name      string `json:"name"`
		Version   int    `json:"version"`
		Protected bool   `json:"protected"`
		MovedBy   string `json:"moved_by"`
	} `json:"labels"`
}

// createAPIPreset posts a preset file with token, or fails the test.
func (s *server) createAPIPreset(t testing.TB, token string, file map[string]any) apiPreset {
	t.Helper()
	a := s.apiCall(t, "POST", "/api/v1/presets", token, file)
	if a.status != http.StatusCreated {
		t.Fatalf("create preset: %d %s", a.status, a.body)
	}
	var p apiPreset
	a.json(t, &p)
	return p
}

// putAPIPreset saves file over preset id from base, or fails the test.
func (s *server) putAPIPreset(t testing.TB, token string, id int64, base int, file map[string]any) apiPreset {
	t.Helper()
	file["base_version"] = base
	defer delete(file, "base_version")
	a := s.apiCall(t, "PUT", "/api/v1/presets/"+strconv.FormatInt(id, 10), token, file)
	if a.status != http.StatusOK {
		t.Fatalf("put preset %d over %d: %d %s", id, base, a.status, a.body)
	}
	var p apiPreset
	a.json(t, &p)
	return p
}

// fetch GETs a preset with token and an If-None-Match header when etag
// is not "".
func (s *server) fetchPreset(t testing.TB, token, ref, query, etag string) apiAnswer {
	t.Helper()
	return s.apiRequest(t, http.DefaultClient, "GET", "/api/v1/presets/"+ref+query, nil, func(h http.Header) {
		h.Set("Authorization", "Bearer "+token)
		if etag != "" {
			h.Set("If-None-Match", etag)
		}
	})
}

func moveLabel(t testing.TB, s *server, token string, id int64, label string, body map[string]any) apiAnswer {
	t.Helper()
	return s.apiCall(t, "PUT", "/api/v1/presets/"+strconv.FormatInt(id, 10)+"/labels/"+label, token, body)
}

func TestAPIPresetFetchedByLabelOrVersionWithETag(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("app", "write", nil).Token
	file := presetFile("Summariser", "Sum up {{topic}}", 0.2)
	p := srv.createAPIPreset(t, tok, file)
	if p.Version != 1 || p.Name != "Summariser" || p.Visibility != "private" || p.Owner != "admin" || len(p.Labels) != 0 {
		t.Fatalf("created: %+v", p)
	}
	file["spec"].(map[string]any)["body"].(map[string]any)["temperature"] = 0.7
	if p = srv.putAPIPreset(t, tok, p.ID, 1, file); p.Version != 2 {
		t.Fatalf("second version: %+v", p)
	}
	file["description"] = "Shorter answers"
	if p = srv.putAPIPreset(t, tok, p.ID, 2, file); p.Version != 3 {
		t.Fatalf("third version: %+v", p)
	}
	id := strconv.FormatInt(p.ID, 10)

	// Without a production label, the latest; byte for byte the page's export.
	a := srv.fetchPreset(t, tok, id, "", "")
	export := admin.get("/presets/" + id + "/export")
	if a.status != http.StatusOK || export.status != http.StatusOK || a.body != export.body {
		t.Fatalf("GET latest (%d) differs from the page's export (%d):\n%s\n---\n%s", a.status, export.status, a.body, export.body)
	}
	if a.header.Get("X-Knobs-Preset-Version") != "3" || a.header.Get("X-Knobs-Label") != "" || a.header.Get("ETag") == "" ||
		!strings.HasPrefix(a.header.Get("Content-Type"), "application/json") {
		t.Errorf("headers of the latest: %v", a.header)
	}
	// By name it is the same.
	if byName := srv.fetchPreset(t, tok, "Summariser", "", ""); byName.body != a.body {
		t.Errorf("by name: %d %s", byName.status, byName.body)
	}
	latestTag := a.header.Get("ETag")

	// production names version 2: fetched by default from now on.
	if m := moveLabel(t, srv, tok, p.ID, "production", map[string]any{"version": 2}); m.status != http.StatusOK {
		t.Fatalf("set production: %d %s", m.status, m.body)
	}
	a = srv.fetchPreset(t, tok, id, "", "")
	var got struct {
		Description string `json:"description"`
		Spec        struct {
			Body struct {
				Temperature float64 `json:"temperature"`
			} `json:"body"`
		} `json:"spec"`
	}
	a.json(t, &got)
	if a.header.Get("X-Knobs-Preset-Version") != "2" || a.header.Get("X-Knobs-Label") != "production" ||
		got.Spec.Body.Temperature != 0.7 || got.Description != "Short answers" {
		t.Errorf("default fetch with production on 2: %v %s", a.header, a.body)
	}
	prodTag := a.header.Get("ETag")
	if prodTag == latestTag {
		t.Errorf("versions 2 and 3 have the same ETag %s", prodTag)
	}
	// ?version and ?label name others.
	if v1 := srv.fetchPreset(t, tok, id, "?version=1", ""); v1.header.Get("X-Knobs-Preset-Version") != "1" || !strings.Contains(v1.body, `"temperature": 0.2`) {
		t.Errorf("version 1: %d %v %s", v1.status, v1.header, v1.body)
	}
	moveLabel(t, srv, tok, p.ID, "staging", map[string]any{"version": 3})
	if st := srv.fetchPreset(t, tok, id, "?label=staging", ""); st.body != export.body || st.header.Get("X-Knobs-Label") != "staging" {
		t.Errorf("staging: %d %v", st.status, st.header)
	}

	// A copy still current is 304 with no body; once the label moves, 200.
	nm := srv.fetchPreset(t, tok, id, "", prodTag)
	if nm.status != http.StatusNotModified || nm.body != "" || nm.header.Get("ETag") != prodTag {
		t.Errorf("If-None-Match the current tag: %d %q %v", nm.status, nm.body, nm.header)
	}
	if w := srv.fetchPreset(t, tok, id, "", `"other", W/`+prodTag); w.status != http.StatusNotModified {
		t.Errorf("a list holding the tag, weak: %d", w.status)
	}
	moveLabel(t, srv, tok, p.ID, "production", map[string]any{"version": 3})
	if moved := srv.fetchPreset(t, tok, id, "", prodTag); moved.status != http.StatusOK || moved.body != export.body || moved.header.Get("ETag") != latestTag {
		t.Errorf("after production moved to 3, the old tag: %d %v", moved.status, moved.header)
	}

	// Unknown labels, versions and presets; both a label and a version.
	wantAPIError(t, "unknown label", srv.fetchPreset(t, tok, id, "?label=canary", ""), http.StatusNotFound)
	wantAPIError(t, "unknown version", srv.fetchPreset(t, tok, id, "?version=9", ""), http.StatusNotFound)
	wantAPIError(t, "unknown preset", srv.fetchPreset(t, tok, "999999", "", ""), http.StatusNotFound)
	wantAPIError(t, "unknown name", srv.fetchPreset(t, tok, "Nothing", "", ""), http.StatusNotFound)
	wantAPIError(t, "label and version", srv.fetchPreset(t, tok, id, "?label=staging&version=1", ""), http.StatusUnprocessableEntity, "label")
	wantAPIError(t, "a bad version", srv.fetchPreset(t, tok, id, "?version=two", ""), http.StatusUnprocessableEntity, "version")

	// The list shows the labels.
	l := srv.apiCall(t, "GET", "/api/v1/presets", tok, nil)
	var page struct {
		Items []apiPreset `json:"items"`
	}
	l.json(t, &page)
	if len(page.Items) != 1 || page.Items[0].Version != 3 || len(page.Items[0].Labels) != 2 ||
		page.Items[0].Labels[0].Name != "production" || page.Items[0].Labels[0].Version != 3 || page.Items[0].Labels[1].Name != "staging" {
		t.Errorf("list: %s", l.body)
	}
}

func TestAPIPresetVersionsOverABase(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	bob := admin.addMember("bob")
	tok := admin.makeToken("app", "write", nil).Token
	bobs := bob.makeToken("bob's", "write", nil).Token
	file := presetFile("Summariser", "Sum up {{topic}}", 0.2)
	file["visibility"] = "team"
	p := srv.createAPIPreset(t, tok, file)
	delete(file, "visibility")
	id := "/api/v1/presets/" + strconv.FormatInt(p.ID, 10)
	before := srv.fetchPreset(t, tok, strconv.FormatInt(p.ID, 10), "", "").body

	// Pushing back what was fetched adds no version.
	var same map[string]any
	json.Unmarshal([]byte(before), &same)
	if got := srv.putAPIPreset(t, tok, p.ID, 1, same); got.Version != 1 {
		t.Errorf("an unchanged file made version %d", got.Version)
	}
	// A stale base is refused, and nothing changes.
	file["description"] = "Changed"
	if got := srv.putAPIPreset(t, tok, p.ID, 1, file); got.Version != 2 {
		t.Fatalf("a change made version %d", got.Version)
	}
	file["description"] = "Lost?"
	file["base_version"] = 1
	wantAPIError(t, "a stale base", srv.apiCall(t, "PUT", id, tok, file), http.StatusConflict)
	// Another member sees a team preset but does not change it; a private
	// one of someone else is not found.
	file["base_version"] = 2
	wantAPIError(t, "bob changes the admin's team preset", srv.apiCall(t, "PUT", id, bobs, file), http.StatusForbidden)
	priv := srv.createAPIPreset(t, tok, presetFile("Mine", "Hi", 0.1))
	privPath := "/api/v1/presets/" + strconv.FormatInt(priv.ID, 10)
	file["base_version"] = 1
	wantAPIError(t, "bob changes the admin's private preset", srv.apiCall(t, "PUT", privPath, bobs, file), http.StatusNotFound)
	wantAPIError(t, "bob fetches it", srv.apiCall(t, "GET", privPath, bobs, nil), http.StatusNotFound)
	wantAPIError(t, "bob renders it", srv.apiCall(t, "POST", privPath+"/render", bobs, map[string]any{}), http.StatusNotFound)
	wantAPIError(t, "bob lists its labels", srv.apiCall(t, "GET", privPath+"/labels", bobs, nil), http.StatusNotFound)
	wantAPIError(t, "bob labels it", moveLabel(t, srv, bobs, priv.ID, "production", map[string]any{"version": 1}), http.StatusNotFound)
	wantAPIError(t, "an unknown id", srv.apiCall(t, "PUT", "/api/v1/presets/999999", tok, file), http.StatusNotFound)

	// Bad input: a clear error, and nothing saved.
	bad := func(what string, body any, status int, fields ...string) {
		t.Helper()
		wantAPIError(t, what, srv.apiCall(t, "POST", "/api/v1/presets", tok, body), status, fields...)
	}
	bad("not JSON", `{"format":`, http.StatusBadRequest)
	withType := presetFile("X", "Hi", 0.2)
	withType["name"] = 5
	bad("a number for the name", withType, http.StatusUnprocessableEntity, "name")
	unknown := presetFile("X", "Hi", 0.2)
	unknown["owner"] = "root"
	bad("an unknown field", unknown, http.StatusUnprocessableEntity)
	noProvider := presetFile("X", "Hi", 0.2)
	noProvider["spec"].(map[string]any)["provider"] = "nowhere"
	bad("an unknown provider", noProvider, http.StatusUnprocessableEntity, "spec.provider")
	badParam := presetFile("X", "Hi", 0.2)
	badParam["spec"].(map[string]any)["body"].(map[string]any)["temperature"] = 9
	bad("temperature 9", badParam, http.StatusUnprocessableEntity, "spec.temperature")
	badFormat := presetFile("X", "Hi", 0.2)
	badFormat["version"] = 2
	bad("a format version", badFormat, http.StatusUnprocessableEntity, "version")
	noName := presetFile("", "Hi", 0.2)
	bad("no name", noName, http.StatusUnprocessableEntity, "name")
	huge := presetFile("X", strings.Repeat("a", 6<<20), 0.2)
	a := srv.apiCall(t, "POST", "/api/v1/presets", tok, huge)
	if a.status != http.StatusRequestEntityTooLarge {
		t.Errorf("a 6 MiB preset: %d %.200s", a.status, a.body)
	}
	presets, err := srv.store.Presets(t.Context(), srv.userID(t, "admin"), "")
	if err != nil || len(presets) != 2 {
		t.Errorf("after bad input the admin has %d presets (%v), want 2", len(presets), err)
	}

	// A read token reads and renders but does not write.
	read := admin.makeToken("reader", "read", nil).Token
	wantAPIError(t, "a read token creates", srv.apiCall(t, "POST", "/api/v1/presets", read, presetFile("R", "Hi", 0.2)), http.StatusForbidden)
	wantAPIError(t, "a read token moves a label", moveLabel(t, srv, read, p.ID, "production", map[string]any{"version": 1}), http.StatusForbidden)
	if r := srv.apiCall(t, "POST", id+"/render", read, map[string]any{}); r.status != http.StatusOK {
		t.Errorf("a read token renders: %d %s", r.status, r.body)
	}
}

func TestAPIPresetLabelsMovedRecordedAndProtected(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	bob := admin.addMember("bob")
	carol := admin.addMember("carol")
	bobs := bob.makeToken("bob's", "write", nil).Token
	carols := carol.makeToken("carol's", "write", nil).Token
	file := presetFile("Summariser", "Sum up {{topic}}", 0.2)
	file["visibility"] = "team"
	p := srv.createAPIPreset(t, bobs, file)
	file["description"] = "v2"
	srv.putAPIPreset(t, bobs, p.ID, 1, file)
	file["description"] = "v3"
	srv.putAPIPreset(t, bobs, p.ID, 2, file)

	// carol sees the team preset and moves a label that is not protected.
	if a := moveLabel(t, srv, carols, p.ID, "Staging", map[string]any{"version": 2}); a.status != http.StatusOK || !strings.Contains(a.body, `"name":"staging"`) {
		t.Fatalf("carol sets staging: %d %s", a.status, a.body)
	}
	// Only the owner (or an admin) protects; then only they move it.
	wantAPIError(t, "carol protects", moveLabel(t, srv, carols, p.ID, "production", map[string]any{"version": 2, "protected": true}), http.StatusForbidden)
	if a := moveLabel(t, srv, bobs, p.ID, "production", map[string]any{"version": 2, "protected": true}); a.status != http.StatusOK || !strings.Contains(a.body, `"protected":true`) {
		t.Fatalf("bob protects production: %d %s", a.status, a.body)
	}
	wantAPIError(t, "carol moves a protected label", moveLabel(t, srv, carols, p.ID, "production", map[string]any{"version": 3}), http.StatusForbidden)
	wantAPIError(t, "carol removes it", srv.apiCall(t, "DELETE", "/api/v1/presets/"+strconv.FormatInt(p.ID, 10)+"/labels/production", carols, nil), http.StatusForbidden)
	admins := admin.makeToken("admin's", "write", nil).Token
	if a := moveLabel(t, srv, admins, p.ID, "production", map[string]any{"version": 3}); a.status != http.StatusOK {
		t.Errorf("the admin moves it: %d %s", a.status, a.body)
	}
	// Bad moves change nothing.
	wantAPIError(t, "a version it lacks", moveLabel(t, srv, bobs, p.ID, "production", map[string]any{"version": 7}), http.StatusUnprocessableEntity, "version")
	wantAPIError(t, "a bad label name", moveLabel(t, srv, bobs, p.ID, "-prod", map[string]any{"version": 1}), http.StatusUnprocessableEntity, "label")
	wantAPIError(t, "a version as text", moveLabel(t, srv, bobs, p.ID, "production", map[string]any{"version": "1"}), http.StatusUnprocessableEntity, "version")
	wantAPIError(t, "an unknown preset", moveLabel(t, srv, bobs, 999999, "production", map[string]any{"version": 1}), http.StatusNotFound)

	// Every move is in the history: who, from, to.
	a := srv.apiCall(t, "GET", "/api/v1/presets/"+strconv.FormatInt(p.ID, 10)+"/labels", carols, nil)
	var labels struct {
		Labels []struct {
			Name      string `json:"name"`
			Version   int    `json:"version"`
			Protected bool   `json:"protected"`
			MovedBy   string `json:"moved_by"`
		} `json:"labels"`
		History []struct {
			Label     string `json:"label"`
			From      *int   `json:"from"`
			To        *int   `json:"to"`
			Protected bool   `json:"protected"`
			By        string `json:"by"`
		} `json:"history"`
	}
	a.json(t, &labels)
	if len(labels.Labels) != 2 || labels.Labels[0].Name != "production" || labels.Labels[0].Version != 3 || !labels.Labels[0].Protected ||
		labels.Labels[0].MovedBy != "admin" || labels.Labels[1].Name != "staging" || labels.Labels[1].MovedBy != "carol" {
		t.Errorf("labels: %s", a.body)
	}
	h := labels.History
	if len(h) != 3 || h[0].By != "admin" || *h[0].From != 2 || *h[0].To != 3 || !h[0].Protected ||
		h[1].By != "bob" || h[1].From != nil || *h[1].To != 2 || h[2].By != "carol" || h[2].Label != "staging" {
		t.Errorf("history: %s", a.body)
	}
	// Removing is recorded too; the preset then answers its latest.
	if d := srv.apiCall(t, "DELETE", "/api/v1/presets/"+strconv.FormatInt(p.ID, 10)+"/labels/production", bobs, nil); d.status != http.StatusNoContent {
		t.Errorf("bob removes production: %d %s", d.status, d.body)
	}
	wantAPIError(t, "removing it again", srv.apiCall(t, "DELETE", "/api/v1/presets/"+strconv.FormatInt(p.ID, 10)+"/labels/production", bobs, nil), http.StatusNotFound)
	moves, err := srv.store.LabelMoves(t.Context(), srv.userID(t, "bob"), p.ID, 10)
	if err != nil || len(moves) != 4 || moves[0].To != 0 || moves[0].From != 3 || moves[0].By != "bob" {
		t.Errorf("moves in the database: %+v %v", moves, err)
	}
}

func TestAPIPresetRenderIsWhatARunSends(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var sent [][]byte
	handler := sim.NewHandler(sim.Options{TokensPerSecond: sim.NoPacing})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.HasSuffix(r.URL.Path, "/completions") {
			mu.Lock()
			sent = append(sent, body)
			mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(upstream.Close)
	srv, admin := newTeam(t, withSim(upstreamConfig(upstream)))
	tok := admin.makeToken("app", "write", nil).Token
	file := presetFile("Summariser", "Sum up {{topic}} in {{words}} words", 0.2)
	file["variables"] = map[string]string{"topic": "glaciers", "words": "ten"}
	p := srv.createAPIPreset(t, tok, file)
	file["spec"].(map[string]any)["body"].(map[string]any)["temperature"] = 0.9
	srv.putAPIPreset(t, tok, p.ID, 1, file)
	moveLabel(t, srv, tok, p.ID, "production", map[string]any{"version": 1})

	ask := map[string]any{"variables": map[string]string{"topic": "rivers"}, "overrides": map[string]any{"max_tokens": 12, "seed": 3}}
	r := srv.apiCall(t, "POST", "/api/v1/presets/Summariser/render", tok, ask)
	if r.status != http.StatusOK {
		t.Fatalf("render: %d %s", r.status, r.body)
	}
	var rendered struct {
		Provider string          `json:"provider"`
		Endpoint string          `json:"endpoint"`
		Body     json.RawMessage `json:"body"`
	}
	r.json(t, &rendered)
	if rendered.Provider != "sim" || rendered.Endpoint != "chat" {
		t.Errorf("rendered: %s", r.body)
	}
	// The production label (version 1, temperature 0.2), the default for
	// words, the given topic, the overrides.
	for _, want := range []string{`"temperature":0.2`, `Sum up rivers in ten words`, `"max_tokens":12`, `"seed":3`, `"stream":true`} {
		if !strings.Contains(string(rendered.Body), want) {
			t.Errorf("rendered body lacks %s: %s", want, rendered.Body)
		}
	}

	run := map[string]any{"preset": "Summariser", "wait": true}
	for k, v := range ask {
		run[k] = v
	}
	a := srv.apiCall(t, "POST", "/api/v1/runs", tok, run)
	if a.status != http.StatusCreated {
		t.Fatalf("run the preset: %d %s", a.status, a.body)
	}
	var done apiRun
	a.json(t, &done)
	mu.Lock()
	got := sent
	mu.Unlock()
	if done.Status != db.RunDone || len(got) != 1 {
		t.Fatalf("run %s; upstream saw %d requests", a.body, len(got))
	}
	if !bytes.Equal(got[0], rendered.Body) {
		t.Errorf("a run sent\n%s\nrender answered\n%s", got[0], rendered.Body)
	}
	if done.Variables["topic"] != "rivers" || done.Variables["words"] != "ten" {
		t.Errorf("the run's variables: %v", done.Variables)
	}
	stored, err := srv.store.Run(t.Context(), srv.userID(t, "admin"), done.ID)
	if err != nil || stored.PresetID != p.ID {
		t.Errorf("the run names preset %d (%v), want %d", stored.PresetID, err, p.ID)
	}

	// A version names another body; a missing variable is a field error.
	r = srv.apiCall(t, "POST", "/api/v1/presets/"+strconv.FormatInt(p.ID, 10)+"/render", tok, map[string]any{"version": 2})
	if !strings.Contains(r.body, `"temperature":0.9`) {
		t.Errorf("render version 2: %d %s", r.status, r.body)
	}
	noDefaults := presetFile("Bare", "Say {{thing}}", 0.2)
	delete(noDefaults, "variables")
	srv.createAPIPreset(t, tok, noDefaults)
	wantAPIError(t, "a variable without a value", srv.apiCall(t, "POST", "/api/v1/presets/Bare/render", tok, map[string]any{}), http.StatusUnprocessableEntity, "variables.thing")
	wantAPIError(t, "a run of it", srv.apiCall(t, "POST", "/api/v1/runs", tok, map[string]any{"preset": "Bare"}), http.StatusUnprocessableEntity, "variables.thing")
	wantAPIError(t, "a preset and a body", srv.apiCall(t, "POST", "/api/v1/runs", tok, map[string]any{"preset": "Bare", "provider": "sim"}), http.StatusUnprocessableEntity, "preset")
	wantAPIError(t, "an override that breaks it", srv.apiCall(t, "POST", "/api/v1/runs", tok,
		map[string]any{"preset": "Summariser", "overrides": map[string]any{"temperature": "hot"}}), http.StatusUnprocessableEntity, "temperature")
	wantAPIError(t, "an unknown preset", srv.apiCall(t, "POST", "/api/v1/runs", tok, map[string]any{"preset": "Nothing"}), http.StatusNotFound)
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != 1 {
		t.Errorf("refused runs reached the upstream: %d requests", len(sent))
	}
}
