package web_test

// Labels on a preset's page over real HTTP: pointed at versions by any
// member, protected by the owner, moved only after the diff is confirmed
// at the version it was seen at, listed with their history, shown as
// chips in the presets list, and opened in the playground.

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// presetWithVersions saves a team preset whose versions 1, 2, 3… have
// the temperatures given, and returns its id.
func presetWithVersions(c *client, name string, temps ...string) int64 {
	c.t.Helper()
	id := c.savePreset(name, "team")
	for i, temp := range temps[1:] {
		spec := strings.Replace(presetSpecJSON, `"temperature":0.2`, `"temperature":`+temp, 1)
		r, _ := c.jsonPost(fmt.Sprintf("/presets/%d", id), fmt.Sprintf(`{"spec":%s,"variables":{"topic":"tides"},"version":%d}`, spec, i+1))
		if r.status != http.StatusOK {
			c.t.Fatalf("saving version %d: %d %s", i+2, r.status, r.body)
		}
	}
	return id
}

// labelsOf is a preset of admin's as the store holds its labels: name →
// version, with "!" after the version when protected.
func labelsOf(t *testing.T, s *server, id int64) map[string]string {
	return labelsAs(t, s, "admin", id)
}

// labelsAs is labelsOf for a preset user sees.
func labelsAs(t *testing.T, s *server, user string, id int64) map[string]string {
	t.Helper()
	ls, err := s.store.PresetLabels(context.Background(), s.userID(t, user), id)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, l := range ls {
		out[l.Name] = fmt.Sprint(l.Version)
		if l.Protected {
			out[l.Name] += "!"
		}
	}
	return out
}

// movesOf counts a preset's recorded label moves.
func movesOf(t *testing.T, s *server, id int64) int {
	t.Helper()
	ms, err := s.store.LabelMoves(context.Background(), s.userID(t, "admin"), id, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return len(ms)
}

// labelRow is the row of a label in the labels table of a preset's page.
func labelRow(page *response, name string) string {
	return regexp.MustCompile(`(?s)<tr data-label="` + regexp.QuoteMeta(name) + `">.*?</tr>`).FindString(page.body)
}

// fieldMessage is the message shown at a field of a page, "" when none.
func fieldMessage(page *response, name string) string {
	return regexpFind(`<p class="field-error" id="err-`+regexp.QuoteMeta(name)+`" role="alert">([^<]*)</p>`, page.body)
}

func TestPresetLabelsPointedByAMemberWithHistory(t *testing.T) {
	s, admin := newTeam(t)
	id := presetWithVersions(admin, "Summariser", "0.2", "0.9", "0.5")
	bob := admin.addMember("bob")
	path := fmt.Sprintf("/presets/%d", id)

	// A member points a new label, typed in capitals, at version 2.
	r := bob.postForm(path+"/labels", form("label", " Staging ", "version", "2"))
	wantRedirect(t, r, path+"#labels")
	page := bob.follow(r)
	wantPage(t, page, http.StatusOK, "Made the label staging, pointing at version 2.")
	if row := labelRow(page, "staging"); !strings.Contains(row, "points at v2") || !strings.Contains(row, "by bob") || !strings.Contains(row, ">Move<") {
		t.Errorf("the staging row does not say v2, moved by bob, with a move form: %s", row)
	}
	bob.submit(path+"/labels", form("label", "staging", "version", "3"))
	if got := labelsOf(t, s, id); got["staging"] != "3" {
		t.Fatalf("staging after the move: %v", got)
	}

	// The history: newest first, who and from where to where.
	page = admin.open(path)
	hist := regexp.MustCompile(`(?s)<ol class="label-history">(.*?)</ol>`).FindStringSubmatch(page.body)
	if hist == nil {
		t.Fatal("the page has no label history")
	}
	lines := regexp.MustCompile(`(?s)<li>(.*?)</li>`).FindAllStringSubmatch(hist[1], -1)
	text := func(s string) string {
		return strings.Join(strings.Fields(html.UnescapeString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(s, " "))), " ")
	}
	if len(lines) != 2 || !strings.HasPrefix(text(lines[0][1]), "staging v2 → v3 · bob") || !strings.HasPrefix(text(lines[1][1]), "staging made at v2 · bob") {
		t.Errorf("the history reads %q", lines)
	}
	// The version row shows the label pointing at it.
	if row := regexp.MustCompile(`(?s)v3 · Summariser.*?</tr>`).FindString(page.body); !strings.Contains(row, `data-label="staging"`) {
		t.Errorf("version 3's row does not show the staging label: %s", row)
	}

	// Removing it is recorded too.
	bob.submit(path+"/labels/remove", form("label", "staging"))
	if got := labelsOf(t, s, id); len(got) != 0 {
		t.Errorf("labels after the removal: %v", got)
	}
	if page := admin.open(path); !strings.Contains(text(page.body), "staging removed from v3 · bob") {
		t.Error("the history does not show the removal")
	}
}

func TestPresetLabelBadInputChangesNothing(t *testing.T) {
	s, admin := newTeam(t)
	id := presetWithVersions(admin, "Summariser", "0.2", "0.9")
	private := admin.savePreset("Mine", "private")
	bob := admin.addMember("bob")
	path := fmt.Sprintf("/presets/%d", id)

	cases := []struct {
		name   string
		form   []string
		status int
		field  string
		msg    string
	}{
		{"a name with other characters", []string{"label", "prod<b>!", "version", "1"}, http.StatusUnprocessableEntity, "label", "A label is 1 to 32 of a-z"},
		{"an empty name", []string{"label", " ", "version", "1"}, http.StatusUnprocessableEntity, "label", "A label is 1 to 32 of a-z"},
		{"a name too long", []string{"label", strings.Repeat("a", 33), "version", "1"}, http.StatusUnprocessableEntity, "label", "A label is 1 to 32 of a-z"},
		{"an unknown version", []string{"label", "production", "version", "9"}, http.StatusUnprocessableEntity, "label_version", "The preset has no version 9."},
		{"a version that is not a number", []string{"label", "production", "version", "two"}, http.StatusUnprocessableEntity, "label_version", "Choose one of the preset's versions."},
		{"protection asked by a member", []string{"label", "production", "version", "1", "protected", "1"}, http.StatusForbidden, "protected", "Only the preset's owner or an admin protects a label"},
	}
	for _, tc := range cases {
		page := bob.postForm(path+"/labels", form(tc.form...))
		if page.status != tc.status || !strings.HasPrefix(fieldMessage(page, tc.field), tc.msg) {
			t.Errorf("%s: %d with %q at %s, want %d with %q", tc.name, page.status, fieldMessage(page, tc.field), tc.field, tc.status, tc.msg)
		}
	}
	if page := bob.postForm(path+"/labels", form("label", "prod<b>!", "version", "1")); page.has("prod<b>") {
		t.Error("the bad name is sent back unescaped")
	}
	if page := bob.postForm(path+"/labels/remove", form("label", "staging")); page.status != http.StatusNotFound || fieldMessage(page, "label") != "The preset has no label staging." {
		t.Errorf("removing a label the preset lacks: %d %q", page.status, fieldMessage(page, "label"))
	}
	if page := bob.postForm(path+"/open", form("label", "staging")); page.status != http.StatusNotFound || fieldMessage(page, "label") != "The preset has no label staging." {
		t.Errorf("opening at a label the preset lacks: %d %q", page.status, fieldMessage(page, "label"))
	}
	// Another user's private preset and an unknown one are not there.
	for _, p := range []string{fmt.Sprintf("/presets/%d", private), "/presets/9999"} {
		for _, action := range []string{"/labels", "/labels/remove"} {
			if r := bob.postForm(p+action, form("label", "production", "version", "1")); r.status != http.StatusNotFound {
				t.Errorf("POST %s%s: %d, want 404", p, action, r.status)
			}
		}
	}
	if got, n := labelsOf(t, s, id), movesOf(t, s, id); len(got) != 0 || n != 0 {
		t.Errorf("bad input left labels %v and %d moves", got, n)
	}
}

func TestPresetProtectedLabelNeedsTheOwnerAndAConfirmedDiff(t *testing.T) {
	s, admin := newTeam(t)
	id := presetWithVersions(admin, "Summariser", "0.2", "0.9", "0.5")
	bob := admin.addMember("bob")
	path := fmt.Sprintf("/presets/%d", id)

	// The owner makes production, protected, and bob makes staging.
	wantPage(t, admin.submit(path+"/labels", form("label", "production", "version", "1", "protected", "1")), http.StatusOK,
		"Made the label production, pointing at version 1. It is protected.")
	bob.submit(path+"/labels", form("label", "staging", "version", "1"))

	// Bob sees production without a way to move it, and is refused when he tries.
	page := bob.open(path)
	if row := labelRow(page, "production"); !strings.Contains(row, "protected") || strings.Contains(row, ">Move<") || strings.Contains(row, ">Remove<") || !strings.Contains(row, ">Open<") {
		t.Errorf("bob's production row: %s", row)
	}
	if row := labelRow(page, "staging"); !strings.Contains(row, ">Move<") || strings.Contains(row, `name="protected"`) {
		t.Errorf("bob's staging row should move but not protect: %s", row)
	}
	const refused = "The label production is protected: only the preset's owner or an admin moves or removes it."
	for _, tc := range []struct{ action, version string }{{"/labels", "2"}, {"/labels/remove", ""}} {
		page = bob.postForm(path+tc.action, form("label", "production", "version", tc.version, "confirm", "1", "expect", "1"))
		if page.status != http.StatusForbidden || fieldMessage(page, "label") != refused {
			t.Errorf("bob POST %s on production: %d %q", tc.action, page.status, fieldMessage(page, "label"))
		}
	}
	if got, n := labelsOf(t, s, id), movesOf(t, s, id); got["production"] != "1!" || n != 2 {
		t.Fatalf("after bob's refused moves: labels %v, %d moves", got, n)
	}

	// The owner's first submit shows the diff and moves nothing.
	page = admin.postForm(path+"/labels", form("label", "production", "version", "3", "set_protected", "1", "protected", "1"))
	wantPage(t, page, http.StatusOK, "Move the protected label production from version 1 to version 3?", "body.temperature", "0.2", "0.5", "Confirm the move")
	if regexpFind(`name="expect" value="(\d+)"`, page.body) != "1" {
		t.Error("the confirmation does not carry the version the label was seen at")
	}
	if got := labelsOf(t, s, id); got["production"] != "1!" {
		t.Fatalf("production moved before it was confirmed: %v", got)
	}

	// Meanwhile another admin moves it to version 2 (confirmed from 1)…
	admin.submit(path+"/labels", form("label", "production", "version", "2", "set_protected", "1", "protected", "1", "confirm", "1", "expect", "1"))
	if got := labelsOf(t, s, id); got["production"] != "2!" {
		t.Fatalf("the confirmed move to 2: %v", got)
	}
	// …so the confirmation seen at version 1 is refused and asked again from 2.
	page = admin.postForm(path+"/labels", form("label", "production", "version", "3", "set_protected", "1", "protected", "1", "confirm", "1", "expect", "1"))
	if page.status != http.StatusConflict || !strings.Contains(fieldMessage(page, "label"), "was moved to version 2 since you confirmed") {
		t.Errorf("a stale confirmation: %d %q", page.status, fieldMessage(page, "label"))
	}
	wantPage(t, page, http.StatusConflict, "Move the protected label production from version 2 to version 3?", "0.9", "0.5")
	if got := labelsOf(t, s, id); got["production"] != "2!" {
		t.Fatalf("a stale confirmation moved production: %v", got)
	}

	// Confirmed at version 2, it moves and stays protected.
	page = admin.submit(path+"/labels", form("label", "production", "version", "3", "set_protected", "1", "protected", "1", "confirm", "1", "expect", "2"))
	wantPage(t, page, http.StatusOK, "Moved the label production from version 2 to version 3.")
	if got, n := labelsOf(t, s, id), movesOf(t, s, id); got["production"] != "3!" || n != 4 {
		t.Errorf("after the confirmed move: labels %v, %d moves", got, n)
	}

	// The owner unticks protection in production's row: no move, no question.
	page = admin.submit(path+"/labels", form("label", "production", "version", "3", "set_protected", "1"))
	wantPage(t, page, http.StatusOK, "It is no longer protected.")
	if got := labelsOf(t, s, id); got["production"] != "3" {
		t.Errorf("after unprotecting: %v", got)
	}
	// The owner pointing it from the general form (no set_protected) keeps
	// an existing label's protection as it is.
	admin.submit(path+"/labels", form("label", "staging", "version", "2", "protected", "1"))
	page = admin.postForm(path+"/labels", form("label", "staging", "version", "3"))
	wantPage(t, page, http.StatusOK, "Move the protected label staging from version 2 to version 3?")
	if page.has("It will no longer be protected.") {
		t.Error("a move from the general form would stop protecting staging")
	}
	admin.submit(path+"/labels", form("label", "staging", "version", "3", "set_protected", "1", "protected", "1", "confirm", "1", "expect", "2"))
	if got := labelsOf(t, s, id); got["staging"] != "3!" {
		t.Errorf("staging after a confirmed move from the general form: %v", got)
	}
}

func TestPresetLabelsInTheListAndThePlayground(t *testing.T) {
	_, admin := newTeam(t)
	id := presetWithVersions(admin, "Summariser", "0.2", "0.9", "0.5", "0.7")
	other := admin.savePreset("Other", "team")
	bob := admin.addMember("bob")
	path := fmt.Sprintf("/presets/%d", id)
	admin.submit(path+"/labels", form("label", "production", "version", "3", "protected", "1"))
	admin.submit(path+"/labels", form("label", "staging", "version", "4"))

	// The list shows each preset's labels as chips, to a member too.
	list := bob.open("/presets")
	card := regexp.MustCompile(`(?s)<li class="card preset-card">.*?</li>`).FindAllString(list.body, -1)
	chips := func(card string) []string {
		var out []string
		for _, m := range regexp.MustCompile(`(?s)<span class="tag label-chip"[^>]*>(.*?)</span>`).FindAllStringSubmatch(card, -1) {
			out = append(out, strings.Join(strings.Fields(regexp.MustCompile(`<[^>]*>.*`).ReplaceAllString(m[1], "")), " "))
		}
		return out
	}
	var seen int
	for _, c := range card {
		switch {
		case strings.Contains(c, fmt.Sprintf("/presets/%d\"", id)):
			seen++
			if got := chips(c); fmt.Sprint(got) != "[production v3 staging v4]" {
				t.Errorf("Summariser's chips: %q", got)
			}
		case strings.Contains(c, fmt.Sprintf("/presets/%d\"", other)):
			seen++
			if got := chips(c); len(got) != 0 {
				t.Errorf("Other's chips: %q", got)
			}
		}
	}
	if seen != 2 {
		t.Fatalf("the list shows %d of the two presets", seen)
	}

	// Opening at production loads version 3 and names the label.
	wantRedirect(t, bob.postForm(path+"/open", form("label", "production")), "/")
	pg := bob.open("/")
	wantPage(t, pg, http.StatusOK, "Opened the preset Summariser at production (version 3).")
	var info struct {
		ID      int64  `json:"id"`
		Version int    `json:"version"`
		Label   string `json:"label"`
	}
	if err := jsonAttr(pg.body, "data-preset", &info); err != nil {
		t.Fatal(err)
	}
	var state struct {
		PresetVersion int    `json:"preset_version"`
		PresetLabel   string `json:"preset_label"`
		Body          struct {
			Temp float64 `json:"temperature"`
		} `json:"body"`
	}
	if err := jsonAttr(pg.body, "data-spec", &state); err != nil {
		t.Fatal(err)
	}
	if info.ID != id || info.Version != 3 || info.Label != "production" || state.PresetLabel != "production" || state.PresetVersion != 3 || state.Body.Temp != 0.5 {
		t.Errorf("the playground holds %+v, %+v; want version 3 at production, temperature 0.5", info, state)
	}

	// The editor saved without the label (as after a save of a new
	// version) no longer names it; opening the preset plainly names none.
	spec := strings.Replace(presetSpecJSON, `"temperature":0.2`, `"temperature":0.5`, 1)
	spec = strings.TrimSuffix(spec, "}") + fmt.Sprintf(`,"preset_id":%d,"preset_version":3,"preset_name":"Summariser"}`, id)
	if r := bob.post("/playground/state", "application/json", strings.NewReader(spec), http.Header{"X-Csrf-Token": {bob.token()}}); r.status != http.StatusNoContent {
		t.Fatalf("saving the playground: %d %s", r.status, r.body)
	}
	var after struct {
		Version int    `json:"version"`
		Label   string `json:"label"`
	}
	if err := jsonAttr(bob.open("/").body, "data-preset", &after); err != nil || after.Label != "" {
		t.Errorf("the playground still names the label %q (%v)", after.Label, err)
	}
	bob.submit(path+"/open", nil)
	after.Label, after.Version = "", 0
	if err := jsonAttr(bob.open("/").body, "data-preset", &after); err != nil || after.Label != "" || after.Version != 4 {
		t.Errorf("opened plainly, the playground holds %+v (%v)", after, err)
	}
}

// jsonAttr decodes the JSON in the first attribute name of a page into v.
func jsonAttr(body, name string, v any) error {
	m := regexp.MustCompile(regexp.QuoteMeta(name) + `="([^"]*)"`).FindStringSubmatch(body)
	if m == nil {
		return fmt.Errorf("the page has no %s attribute", name)
	}
	return json.Unmarshal([]byte(html.UnescapeString(m[1])), v)
}
