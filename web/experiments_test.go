package web_test

// The experiment pages over real HTTP with the session: the new
// experiment form checks through the API's own checks and starts nothing
// when anything is wrong; the page of an ended experiment shows every
// cell with its grades; a private experiment is its owner's alone; a
// rating from the page is stored.

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"knobs/db"
	"knobs/llm/sim"
)

// experimentForm is the new experiment form for dataset with variants
// given as bodies of their own (on the simulator) and graders as JSON.
func experimentForm(action, name string, dataset int64, bodies []string, graders []string) url.Values {
	f := form("action", action, "name", name, "dataset", strconv.FormatInt(dataset, 10), "repeats", "1", "concurrency", "2", "visibility", "private")
	for _, b := range bodies {
		f.Add("variant_name", "")
		f.Add("variant_preset", "")
		f.Add("variant_label", "")
		f.Add("variant_version", "")
		f.Add("variant_model", "")
		f.Add("variant_provider", "sim")
		f.Add("variant_endpoint", "chat")
		f.Add("variant_body", b)
	}
	for _, g := range graders {
		f.Add("grader", g)
	}
	return f
}

func simBody(prompt string) string {
	return `{"model": "sim-fast", "messages": [{"role": "user", "content": "` + prompt + `"}], "max_tokens": 30}`
}

func (s *server) experimentsOf(t testing.TB, user string) []db.Experiment {
	t.Helper()
	es, err := s.store.Experiments(context.Background(), s.userID(t, user), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// startExperimentFromForm starts an experiment through the form and
// answers its id, from the page it lands on.
func startExperimentFromForm(t *testing.T, c *client, f url.Values) int64 {
	t.Helper()
	r := c.postForm("/experiments", f)
	if r.status != http.StatusSeeOther || !strings.HasPrefix(r.location, "/experiments/") {
		t.Fatalf("start: %d %s %s", r.status, r.location, errorText(r))
	}
	id, err := strconv.ParseInt(strings.TrimPrefix(r.location, "/experiments/"), 10, 64)
	if err != nil {
		t.Fatalf("start went to %s", r.location)
	}
	return id
}

func TestExperimentFormRefusesBadInputAtItsFields(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	ds := srv.makeDataset(t, "admin", 2)

	page := admin.open("/experiments/new")
	wantPage(t, page, http.StatusOK, "New experiment", "Rivers (v1, 2 rows)", "json_path_equals", "Add a variant")

	cases := []struct {
		name   string
		form   url.Values
		fields map[string]string // an element id -> a text it shows
	}{
		{"no name, too many repeats", func() url.Values {
			f := experimentForm("start", "", ds.ID, []string{simBody("Tell me about {{topic}}")}, nil)
			f.Set("repeats", "30")
			return f
		}(), map[string]string{"err-name": "Give the experiment a name", "err-repeats": "Repeats are 1 to 20"}},
		{"no dataset", func() url.Values {
			f := experimentForm("start", "x", 0, []string{simBody("hi")}, nil)
			f.Set("dataset", "")
			return f
		}(), map[string]string{"err-dataset": "Choose a dataset"}},
		{"another's dataset", experimentForm("start", "x", ds.ID+100, []string{simBody("hi")}, nil),
			map[string]string{"err-dataset": "There is no such dataset"}},
		{"a row lacks a variable, an unknown grader", experimentForm("check", "x", ds.ID,
			[]string{simBody("Tell me about {{topic}}"), simBody("Tell me about {{city}}")}, []string{`{"type": "vibes"}`}),
			map[string]string{"v-err-1": "row 1 lacks {{city}}", "grader-err-0": "type"}},
		{"a grader that is not JSON, a body that is not JSON", experimentForm("start", "x", ds.ID, []string{`{"model":`}, []string{`{type: json}`}),
			map[string]string{"v-err-0": "body: The body is not JSON", "grader-err-0": "The grader is not JSON"}},
		{"no variant", experimentForm("start", "x", ds.ID, nil, nil), map[string]string{"err-variants": "Give at least one variant"}},
	}
	for _, tc := range cases {
		r := admin.postForm("/experiments", tc.form)
		if r.status != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d, want 422", tc.name, r.status)
			continue
		}
		for id, text := range tc.fields {
			got := regexpFind(`(?s)id="`+id+`"[^>]*>(.*?)</(?:p|ul)>`, r.body)
			if !strings.Contains(html.UnescapeString(got), text) {
				t.Errorf("%s: #%s says %q, want %q", tc.name, id, got, text)
			}
		}
		// What was typed is kept.
		if name := tc.form.Get("name"); name != "" && !r.has(`value="`+name+`"`) {
			t.Errorf("%s: the name typed is gone", tc.name)
		}
	}
	if es := srv.experimentsOf(t, "admin"); len(es) != 0 {
		t.Fatalf("bad input started %d experiments", len(es))
	}

	// Adding a grader of a type fills in its example; Check shows the
	// calls and the estimate and starts nothing.
	f := experimentForm("add_grader", "two ways", ds.ID, []string{simBody("Tell me about {{topic}}"), simBody("Explain {{topic}}")}, nil)
	f.Set("add_grader_type", "contains")
	r := admin.postForm("/experiments", f)
	if r.status != http.StatusOK || !strings.Contains(html.UnescapeString(r.body), `"type": "contains"`) {
		t.Fatalf("add a grader: %d", r.status)
	}
	f = experimentForm("check", "two ways", ds.ID, []string{simBody("Tell me about {{topic}}"), simBody("Explain {{topic}}")}, []string{`{"type": "json"}`})
	f.Set("repeats", "3")
	r = admin.postForm("/experiments", f)
	if r.status != http.StatusOK {
		t.Fatalf("check: %d %s", r.status, errorText(r))
	}
	if calls := regexpFind(`id="exp-calls">([^<]*)<`, r.body); calls != "12" {
		t.Errorf("calls: %q, want 2 rows × 2 variants × 3 repeats = 12", calls)
	}
	if !r.has("no price known") {
		t.Errorf("the simulator has no price, and the estimate does not say so")
	}
	if !r.has("at most 360") { // 12 cells × max_tokens 30
		t.Errorf("the estimate lacks the output bound:\n%s", regexpFind(`(?s)(<section class="card exp-estimate".*?</section>)`, r.body))
	}
	if es := srv.experimentsOf(t, "admin"); len(es) != 0 {
		t.Fatalf("check started %d experiments", len(es))
	}
}

func TestExperimentPageShowsEveryCellAndItsGrades(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	ds := srv.makeDataset(t, "admin", 3)
	id := startExperimentFromForm(t, admin, experimentForm("start", "rivers two ways", ds.ID,
		[]string{simBody("Tell me about {{topic}}"), simBody("Explain {{topic}} in a line")},
		[]string{`{"type": "length", "min": 1, "name": "has text"}`, `{"type": "json", "name": "is json"}`}))
	if _, status := srv.followExperiment(t, tok, fmt.Sprintf("/api/v1/experiments/%d/events", id)); status != "done" {
		t.Fatalf("the experiment ended %q", status)
	}

	page := admin.open(fmt.Sprintf("/experiments/%d", id))
	wantPage(t, page, http.StatusOK, "rivers two ways", "Rivers v1", "3/3 · 100%", "0/3 · 0%")
	cells, err := srv.store.ExperimentCells(context.Background(), srv.userID(t, "admin"), id, 0, 100)
	if err != nil || len(cells) != 6 {
		t.Fatalf("%d cells: %v", len(cells), err)
	}
	for _, c := range cells {
		block := regexpFind(`(?s)(<div class="exp-run st-done" data-cell-id="`+strconv.FormatInt(c.ID, 10)+`".*?</form>)`, page.body)
		if block == "" {
			t.Errorf("cell %d (row %d, variant %d) is not on the page", c.ID, c.Row, c.Variant)
			continue
		}
		if c.Output == "" || !strings.Contains(html.UnescapeString(block), c.Output) {
			t.Errorf("cell %d: its output %q is not shown", c.ID, c.Output)
		}
		if !strings.Contains(block, `class="grade g-pass"`) || !strings.Contains(block, "has text ✓") ||
			!strings.Contains(block, `class="grade g-fail"`) || !strings.Contains(block, "is json ✗") {
			t.Errorf("cell %d: the grades are not shown:\n%s", c.ID, block)
		}
		if !strings.Contains(block, fmt.Sprintf(`href="/runs/%d"`, c.RunID)) {
			t.Errorf("cell %d: no link to its run %d", c.ID, c.RunID)
		}
	}
	// Failures only: every row, since json fails everywhere.
	if f := admin.open(fmt.Sprintf("/experiments/%d?failures=1", id)); !f.has("3 rows") {
		t.Errorf("failures only: %s", regexpFind(`id="exp-matching">([^<]*)<`, f.body))
	}
	// The list shows it, done.
	list := admin.open("/experiments")
	wantPage(t, list, http.StatusOK, "rivers two ways", "6/6", "Rivers")

	// Another member does not see a private experiment.
	bob := admin.addMember("bob")
	if r := bob.get(fmt.Sprintf("/experiments/%d", id)); r.status != http.StatusNotFound {
		t.Errorf("bob opens the admin's private experiment: %d", r.status)
	}
	if r := bob.open("/experiments"); r.has("rivers two ways") {
		t.Errorf("bob's list shows the admin's private experiment")
	}
	if r := bob.postForm(fmt.Sprintf("/experiments/%d/cells/%d/rating", id, cells[0].ID), form("thumbs", "down")); r.status != http.StatusNotFound {
		t.Errorf("bob rates in it: %d", r.status)
	}
	if r := bob.postForm(fmt.Sprintf("/experiments/%d/cancel", id), nil); r.status != http.StatusNotFound {
		t.Errorf("bob cancels it: %d", r.status)
	}
}

func TestExperimentRatingFromThePageIsStored(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	ds := srv.makeDataset(t, "admin", 1)
	id := startExperimentFromForm(t, admin, experimentForm("start", "one", ds.ID, []string{simBody("Tell me about {{topic}}")},
		[]string{`{"type": "json"}`}))
	srv.followExperiment(t, tok, fmt.Sprintf("/api/v1/experiments/%d/events", id))
	user := srv.userID(t, "admin")
	cells, err := srv.store.ExperimentCells(context.Background(), user, id, 0, 10)
	if err != nil || len(cells) != 1 {
		t.Fatalf("%d cells: %v", len(cells), err)
	}
	cell := cells[0]
	path := fmt.Sprintf("/experiments/%d/cells/%d/rating", id, cell.ID)
	back := fmt.Sprintf("/experiments/%d?sort=latency", id)

	// Nothing to save: said, and nothing stored.
	r := admin.postForm(path, form("thumbs", "keep", "current", "", "note", "  ", "back", back))
	wantRedirect(t, r, back)
	if p := admin.open(back); !p.has("The rating was not saved") {
		t.Errorf("an empty rating is not refused on the page")
	}
	// Thumbs up with a note, back to the page it came from.
	r = admin.postForm(path, form("thumbs", "up", "note", "a clear answer", "back", back))
	wantRedirect(t, r, back+"#cell-"+strconv.FormatInt(cell.ID, 10))
	// A note saved later keeps the thumbs.
	admin.postForm(path, form("thumbs", "keep", "current", "up", "note", "clear, but long", "back", "https://elsewhere.example/"))
	cells, _ = srv.store.ExperimentCells(context.Background(), user, id, 0, 10)
	rs := cells[0].Ratings
	if len(rs) != 1 || rs[0].Thumbs == nil || !*rs[0].Thumbs || rs[0].Note != "clear, but long" || rs[0].UserID != user {
		t.Fatalf("stored ratings: %+v", rs)
	}
	page := admin.open(fmt.Sprintf("/experiments/%d", id))
	wantPage(t, page, http.StatusOK, "admin ▲ good — clear, but long", `aria-pressed="true" title="Good answer"`, "▲ 1 · ▼ 0")
	// Graders failed it (json) and a person liked it: a disagreement.
	if p := admin.open(fmt.Sprintf("/experiments/%d?disagree=1", id)); !p.has("1 rows") {
		t.Errorf("disagreement: %s", regexpFind(`id="exp-matching">([^<]*)<`, p.body))
	}
}

func TestExperimentCancelFromThePage(t *testing.T) {
	t.Parallel()
	// Paced: 30 tokens at 20/s, one cell at a time, so it still runs.
	srv, admin := newTeam(t, withSim(sim.NewConfig(sim.Options{TokensPerSecond: 20})))
	ds := srv.makeDataset(t, "admin", 4)
	f := experimentForm("start", "to cancel", ds.ID, []string{simBody("Tell me about {{topic}}")}, nil)
	f.Set("concurrency", "1")
	id := startExperimentFromForm(t, admin, f)
	page := admin.open(fmt.Sprintf("/experiments/%d", id))
	wantPage(t, page, http.StatusOK, `id="exp-cancel"`, `data-live="true"`)

	// A member who does not own it gets no button, and cannot.
	bob := admin.addMember("bob")
	r := bob.postForm(fmt.Sprintf("/experiments/%d/cancel", id), nil)
	if r.status != http.StatusNotFound {
		t.Errorf("bob cancels a private experiment: %d", r.status)
	}
	r = admin.postForm(fmt.Sprintf("/experiments/%d/cancel", id), nil)
	wantRedirect(t, r, fmt.Sprintf("/experiments/%d", id))
	e, err := srv.store.Experiment(context.Background(), srv.userID(t, "admin"), id)
	if err != nil || e.Status != db.ExperimentCancelled {
		t.Fatalf("after cancel: %q %v", e.Status, err)
	}
	page = admin.open(fmt.Sprintf("/experiments/%d", id))
	wantPage(t, page, http.StatusOK, "The experiment was cancelled", `data-live="false"`)
	if page.has(`id="exp-cancel"`) {
		t.Errorf("a cancelled experiment still offers Cancel")
	}
}

func TestExperimentPageGroupsRepeatsAndFiltersByTag(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	rows := []db.DatasetRow{
		{Vars: map[string]string{"topic": "the Rhine"}, Tags: []string{"europe"}},
		{Vars: map[string]string{"topic": "the Nile"}, Tags: []string{"africa"}},
	}
	ds, err := srv.store.CreateDataset(context.Background(), db.Dataset{OwnerID: srv.userID(t, "admin"), Name: "Tagged", Columns: []string{"topic"}}, rows)
	if err != nil {
		t.Fatal(err)
	}
	// Temperature 0: the simulator answers greedily, the same each time.
	f := experimentForm("start", "repeated", ds.ID,
		[]string{`{"model": "sim-fast", "messages": [{"role": "user", "content": "Tell me about {{topic}}"}], "max_tokens": 20, "temperature": 0}`},
		[]string{`{"type": "length", "min": 1}`})
	f.Set("repeats", "3")
	id := startExperimentFromForm(t, admin, f)
	if _, status := srv.followExperiment(t, tok, fmt.Sprintf("/api/v1/experiments/%d/events", id)); status != "done" {
		t.Fatalf("ended %q", status)
	}
	page := admin.open(fmt.Sprintf("/experiments/%d", id))
	wantPage(t, page, http.StatusOK, "2 rows", "repeat 3")
	if n := strings.Count(page.body, `<span class="badge">×3</span>`); n != 2 {
		t.Errorf("%d cells group their 3 identical answers, want 2", n)
	}
	if n := strings.Count(page.body, "3/3 repeats pass"); n != 2 {
		t.Errorf("%d cells say 3/3 repeats pass, want 2", n)
	}
	if page.has("· flaky") {
		t.Errorf("a cell that always passes is called flaky")
	}
	tagged := admin.open(fmt.Sprintf("/experiments/%d?tag=africa", id))
	wantPage(t, tagged, http.StatusOK, "1 rows", "the Nile")
	if tagged.has("the Rhine") {
		t.Errorf("the tag filter shows the europe row")
	}
}
