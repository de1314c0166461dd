package web_test

// The dataset pages over real HTTP: a file uploaded or rows pasted (or
// refused at their line and column, nothing saved), the grid paged,
// a cell edited, a row added and rows removed as new versions, an older
// version read-only, a dataset made from History runs, and others'
// datasets closed.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"knobs/db"
)

// uploadPage posts the new-dataset form as a browser does: multipart,
// with a file (when fileName is set) and pasted text.
func (c *client) uploadPage(name, fileName string, file []byte, text string) *response {
	c.t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	mw.WriteField("_csrf", c.token())
	mw.WriteField("name", name)
	mw.WriteField("text", text)
	fw, err := mw.CreateFormFile("file", fileName)
	if err != nil {
		c.t.Fatal(err)
	}
	fw.Write(file)
	mw.Close()
	return c.post("/datasets", mw.FormDataContentType(), &b, nil)
}

var datasetLocation = regexp.MustCompile(`^/datasets/(\d+)$`)

// createdDataset is the id a create redirected to, or fails the test.
func createdDataset(t testing.TB, r *response) int64 {
	t.Helper()
	m := datasetLocation.FindStringSubmatch(r.location)
	if r.status != http.StatusSeeOther || m == nil {
		t.Fatalf("create: %d to %q: %s", r.status, r.location, errorText(r))
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)
	return id
}

// rows reads every row of the latest version of dataset id from the
// store, as user sees them.
func (s *server) rows(t testing.TB, user string, id int64) (db.Dataset, []db.DatasetRow) {
	t.Helper()
	uid := s.userID(t, user)
	d, err := s.store.Dataset(context.Background(), uid, id)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := s.store.DatasetRows(context.Background(), uid, id, d.Version, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return d, rows
}

func TestDatasetPagesUploadPasteAndRefuse(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	wantPage(t, admin.open("/datasets"), http.StatusOK, "No datasets yet", "New dataset")
	wantPage(t, admin.open("/datasets/new"), http.StatusOK, "What a dataset file holds", "line 14, column 3")

	id := createdDataset(t, admin.uploadPage("Capitals", "capitals.csv", []byte("country,expected,tags\nFrance,Paris,eu\nJapan,Tokyo,asia\n"), ""))
	page := admin.open("/datasets/" + strconv.FormatInt(id, 10))
	wantPage(t, page, http.StatusOK, "Capitals", "Created the dataset Capitals with 2 rows.", "France", "Tokyo", "v1", "Export CSV")

	pasted := createdDataset(t, admin.uploadPage("Pasted", "", nil, "question\texpected\nWhat is 2+2?\t4\n"))
	if d, rows := srv.rows(t, "admin", pasted); d.Rows != 1 || rows[0].Vars["question"] != "What is 2+2?" || *rows[0].Expected != "4" {
		t.Fatalf("pasted tab-separated: %+v %+v", d, rows)
	}

	// Refused at its line and column; nothing saved; the form keeps
	// what was sent.
	r := admin.uploadPage("Broken", "broken.csv", []byte("a,b\n1,2\n3,\xff\n"), "")
	wantPage(t, r, http.StatusUnprocessableEntity, "Nothing was imported: line 3, column 3:", `value="Broken"`)
	r = admin.uploadPage("Ragged", "", nil, "a,b\n1,2\n1,2,3\n")
	wantPage(t, r, http.StatusUnprocessableEntity, "Nothing was imported: line 3", "a,b\n1,2\n1,2,3")
	r = admin.uploadPage("", "", nil, "a\n1\n")
	wantPage(t, r, http.StatusUnprocessableEntity, "Give the dataset a name.")
	r = admin.uploadPage("Empty", "", nil, "")
	wantPage(t, r, http.StatusUnprocessableEntity, "Choose a file or paste rows.")
	list := admin.open("/datasets")
	wantPage(t, list, http.StatusOK, "Capitals", "Pasted")
	if list.has("Broken") || list.has("Ragged") {
		t.Errorf("a refused upload is listed")
	}
}

func TestDatasetGridEditsAsVersions(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	var file strings.Builder
	file.WriteString("q,expected\n")
	for i := 1; i <= 120; i++ {
		fmt.Fprintf(&file, "question %d,answer %d\n", i, i)
	}
	id := createdDataset(t, admin.uploadPage("Long", "long.csv", []byte(file.String()), ""))
	path := "/datasets/" + strconv.FormatInt(id, 10)

	// Paged: 50 rows a page.
	page := admin.open(path)
	if !page.has("question 50<") || page.has("question 51<") || !page.has("Next rows") {
		t.Fatalf("page 1 shows more or less than rows 1 to 50")
	}
	page3 := admin.open(path + "?page=3")
	if !page3.has("question 120<") || page3.has("question 100<") {
		t.Fatalf("page 3 does not show rows 101 to 120")
	}

	_, rows := srv.rows(t, "admin", id)
	key := strconv.FormatInt(rows[1].Key, 10)
	// Edit a cell: the row is saved as version 2.
	r := admin.submit(path+"/rows/"+key, form("base", "1", "var.q", "question two, edited", "expected", "answer 2", "tags", "Edited"))
	wantPage(t, r, http.StatusOK, "Changed a row: saved as version 2.", "question two, edited")
	d, rows := srv.rows(t, "admin", id)
	if d.Version != 2 || rows[1].Vars["q"] != "question two, edited" || rows[1].Tags[0] != "edited" {
		t.Fatalf("after the edit: v%d %+v", d.Version, rows[1])
	}
	// A bad tag: its message at the row, nothing saved.
	r = admin.postForm(path+"/rows/"+key, form("base", "2", "var.q", "x", "tags", "not ok!"))
	wantPage(t, r, http.StatusUnprocessableEntity, "Nothing was saved:", "is not 1 to 32 of a-z")
	// Made on version 1: stale.
	r = admin.postForm(path+"/rows/"+key, form("base", "1", "var.q", "late"))
	wantPage(t, r, http.StatusConflict, "Someone saved a new version")
	// Add a row, remove two.
	r = admin.submit(path+"/rows", form("base", "2", "var.q", "added", "expected", ""))
	wantPage(t, r, http.StatusOK, "Added a row: saved as version 3.")
	f := form("base", "3", "keys", strconv.FormatInt(rows[0].Key, 10), "keys", strconv.FormatInt(rows[2].Key, 10))
	r = admin.submit(path+"/rows/remove", f)
	wantPage(t, r, http.StatusOK, "Removed 2 rows: saved as version 4.")
	d, rows = srv.rows(t, "admin", id)
	if d.Version != 4 || d.Rows != 119 || rows[0].Vars["q"] != "question two, edited" || rows[len(rows)-1].Vars["q"] != "added" || rows[len(rows)-1].Expected != nil {
		t.Fatalf("after add and remove: v%d %d rows, first %+v last %+v", d.Version, d.Rows, rows[0], rows[len(rows)-1])
	}
	// The versions, and version 1 read-only as it was.
	page = admin.open(path)
	wantPage(t, page, http.StatusOK, "Removed 2 rows", "Added a row", "Changed a row")
	old := admin.open(path + "?version=1")
	wantPage(t, old, http.StatusOK, "read-only", "question 1<", "question 2<")
	if old.has("<textarea") || old.has("Add row") {
		t.Errorf("an old version is editable")
	}
	// Exported, it reads back.
	csv := admin.get(path + "/export?format=csv&version=1")
	if csv.status != http.StatusOK || !strings.HasPrefix(csv.body, "\ufeffq,expected,tags\r\nquestion 1,answer 1,\r\nquestion 2,answer 2,") {
		t.Fatalf("export: %d %.80q", csv.status, csv.body)
	}
	if jl := admin.get(path + "/export?format=jsonl"); !strings.Contains(jl.body, `"added"`) || strings.Count(jl.body, "\n") != 119 {
		t.Errorf("jsonl export: %d lines", strings.Count(jl.body, "\n"))
	}
	// Deleted.
	r = admin.submit(path+"/delete", nil)
	wantPage(t, r, http.StatusOK, "Deleted the dataset.")
	if r := admin.get(path); r.status != http.StatusNotFound {
		t.Errorf("deleted dataset: %d", r.status)
	}
}

func TestDatasetPagesOfOthers(t *testing.T) {
	t.Parallel()
	_, admin := newTeam(t)
	mia := admin.addMember("mia")
	private := createdDataset(t, admin.uploadPage("Mine", "", nil, "q\nx\n"))
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	mw.WriteField("_csrf", admin.token())
	mw.WriteField("name", "Ours")
	mw.WriteField("visibility", "team")
	mw.WriteField("text", "q\nx\n")
	mw.Close()
	team := createdDataset(t, admin.post("/datasets", mw.FormDataContentType(), &b, nil))
	pp, tp := "/datasets/"+strconv.FormatInt(private, 10), "/datasets/"+strconv.FormatInt(team, 10)

	for _, p := range []string{pp, pp + "/export"} {
		if r := mia.get(p); r.status != http.StatusNotFound {
			t.Errorf("mia GET %s: %d", p, r.status)
		}
	}
	if r := mia.postForm(pp+"/rows", form("base", "1", "var.q", "y")); r.status != http.StatusNotFound {
		t.Errorf("mia adds to a private dataset: %d", r.status)
	}
	page := mia.open(tp)
	wantPage(t, page, http.StatusOK, "Ours", "x")
	if page.has("<textarea") || page.has("Delete the dataset") {
		t.Errorf("mia may edit the admin's team dataset")
	}
	if r := mia.postForm(tp+"/rows", form("base", "1", "var.q", "y")); r.status != http.StatusForbidden {
		t.Errorf("mia adds to the team dataset: %d", r.status)
	}
	if r := mia.postForm(tp+"/delete", nil); r.status != http.StatusForbidden {
		t.Errorf("mia deletes the team dataset: %d", r.status)
	}
	if list := mia.open("/datasets"); !list.has("Ours") || list.has("Mine") {
		t.Errorf("mia's list shows the wrong datasets")
	}
}

func TestDatasetFromHistoryRuns(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	plain := admin.finishedRun("Name a river", "")
	spec := `{"provider":"sim","endpoint":"chat","body":{"model":"sim-fast","messages":[{"role":"user","content":"Tell me about {{topic}}"}],"max_completion_tokens":30},"variables":{"topic":"glaciers"}}`
	r, run := admin.postRun(spec)
	if r.status != http.StatusCreated {
		t.Fatalf("run with variables: %d %s", r.status, r.body)
	}
	admin.readEvents(run.Events, 0, nil)

	hist := admin.open("/history")
	wantPage(t, hist, http.StatusOK, "New dataset from selected")
	ids := fmt.Sprintf("%d,%d", plain, run.ID)
	page := admin.open("/datasets/new?runs=" + ids)
	wantPage(t, page, http.StatusOK, "From 2 selected runs")
	r = admin.postForm("/datasets/from-runs", form("runs", ids, "name", "From history"))
	id := createdDataset(t, r)
	d, rows := srv.rows(t, "admin", id)
	if len(rows) != 2 || strings.Join(d.Columns, ",") != "input,topic" {
		t.Fatalf("columns %v, %d rows", d.Columns, len(rows))
	}
	uid := srv.userID(t, "admin")
	for i, runID := range []int64{plain, run.ID} {
		stored, err := srv.store.Run(context.Background(), uid, runID)
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			Choices []struct {
				Content string `json:"content"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(stored.Result), &res); err != nil || len(res.Choices) == 0 {
			t.Fatalf("run %d result: %v", runID, err)
		}
		if rows[i].Expected == nil || *rows[i].Expected != res.Choices[0].Content {
			t.Errorf("row %d expected %v, want the run's output %q", i, rows[i].Expected, res.Choices[0].Content)
		}
	}
	if rows[0].Vars["input"] != "Name a river" || len(rows[0].Vars) != 1 {
		t.Errorf("the run without variables: %+v", rows[0].Vars)
	}
	if rows[1].Vars["topic"] != "glaciers" || len(rows[1].Vars) != 1 {
		t.Errorf("the run with variables: %+v", rows[1].Vars)
	}
	// Another user's runs are not theirs to take.
	mia := admin.addMember("mia")
	if r := mia.postForm("/datasets/from-runs", form("runs", ids, "name", "Stolen")); r.status != http.StatusNotFound {
		t.Errorf("mia takes the admin's runs: %d", r.status)
	}
}
