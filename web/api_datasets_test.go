package web_test

// Datasets through the REST API over real HTTP with bearer tokens:
// created from JSON rows and from uploaded CSV and JSON Lines files,
// refused with the dataset package's messages (line and column) and
// nothing stored, versioned over a base, exported and read back, paged,
// private to their owner and closed to read tokens.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"knobs/dataset"
)

// apiDataset is a dataset as the API answers it.
type apiDataset struct {
	ID         int64          `json:"id"`
	Name       string         `json:"name"`
	Visibility string         `json:"visibility"`
	Owner      string         `json:"owner"`
	Version    int            `json:"version"`
	Columns    []string       `json:"columns"`
	Rows       int            `json:"rows"`
	Shown      int            `json:"shown_version"`
	Versions   []apiDSVersion `json:"versions"`
	RowPage    struct {
		Items      []apiDSRow `json:"items"`
		NextCursor *string    `json:"next_cursor"`
	} `json:"row_page"`
}

type apiDSVersion struct {
	Version int    `json:"version"`
	Rows    int    `json:"rows"`
	Note    string `json:"note"`
	SavedBy string `json:"saved_by"`
}

type apiDSRow struct {
	Key      int64             `json:"key"`
	Vars     map[string]string `json:"vars"`
	Expected *string           `json:"expected"`
	Tags     []string          `json:"tags"`
}

// upload sends body to POST /api/v1/datasets/import: raw as
// contentType with ?name=, or, when contentType is "", as the multipart
// file fileName with the field name.
func (s *server) upload(t testing.TB, token, name, fileName, contentType string, body []byte) apiAnswer {
	t.Helper()
	var rd io.Reader = bytes.NewReader(body)
	path := "/api/v1/datasets/import"
	if contentType == "" {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		if err := mw.WriteField("name", name); err != nil {
			t.Fatal(err)
		}
		fw, err := mw.CreateFormFile("file", fileName)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(body)
		mw.Close()
		rd, contentType = &b, mw.FormDataContentType()
	} else {
		path += "?name=" + url.QueryEscape(name)
	}
	req, err := http.NewRequest("POST", s.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("upload: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return apiAnswer{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// getDataset reads GET /api/v1/datasets/{id}?query, or fails the test.
func (s *server) getDataset(t testing.TB, token string, id int64, query string) apiDataset {
	t.Helper()
	a := s.apiCall(t, "GET", "/api/v1/datasets/"+strconv.FormatInt(id, 10)+query, token, nil)
	if a.status != http.StatusOK {
		t.Fatalf("get dataset %d%s: %d %s", id, query, a.status, a.body)
	}
	var d apiDataset
	a.json(t, &d)
	return d
}

func created(t testing.TB, what string, a apiAnswer) apiDataset {
	t.Helper()
	if a.status != http.StatusCreated {
		t.Fatalf("%s: %d %s", what, a.status, a.body)
	}
	var d apiDataset
	a.json(t, &d)
	return d
}

// datasetCount is how many datasets the admin sees in the store, for
// "nothing stored".
func (s *server) datasetCount(t testing.TB) int {
	t.Helper()
	all, err := s.store.Datasets(context.Background(), s.userID(t, "admin"))
	if err != nil {
		t.Fatal(err)
	}
	return len(all)
}

func TestAPIDatasetCreatedFromRowsAndFiles(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token

	// Sent as text: the variables' order is the columns'.
	a := srv.apiCall(t, "POST", "/api/v1/datasets", tok, `{"name": "Sums", "rows": [
		{"vars": {"question": "What is 2+2?", "level": 1}, "expected": "4", "tags": ["Math"]},
		{"vars": {"question": "What is 3+3?", "level": null}, "tags": "math, easy"}]}`)
	d := created(t, "JSON rows", a)
	if d.Name != "Sums" || d.Version != 1 || d.Rows != 2 || !reflect.DeepEqual(d.Columns, []string{"question", "level"}) || d.Owner != "admin" || d.Visibility != "private" {
		t.Fatalf("created: %+v", d)
	}
	got := srv.getDataset(t, tok, d.ID, "")
	rows := got.RowPage.Items
	if len(rows) != 2 || rows[0].Vars["level"] != "1" || *rows[0].Expected != "4" || !reflect.DeepEqual(rows[0].Tags, []string{"math"}) {
		t.Fatalf("first row: %+v", rows)
	}
	if _, ok := rows[1].Vars["level"]; ok || rows[1].Expected != nil || !reflect.DeepEqual(rows[1].Tags, []string{"easy", "math"}) {
		t.Errorf("second row: null is no value, tags split and sorted: %+v", rows[1])
	}

	csv := "\ufeffquestion,expected,tags\n\"Say \"\"hi\"\"\nthen stop\",hi,greet\nWhat is 1+1?,2,\n"
	d = created(t, "raw CSV", srv.upload(t, tok, "From CSV", "", "text/csv", []byte(csv)))
	got = srv.getDataset(t, tok, d.ID, "")
	if d.Rows != 2 || got.RowPage.Items[0].Vars["question"] != "Say \"hi\"\nthen stop" || got.RowPage.Items[1].Expected == nil {
		t.Fatalf("CSV rows: %+v", got.RowPage.Items)
	}
	d = created(t, "multipart CSV", srv.upload(t, tok, "Multipart", "cases.csv", "", []byte(csv)))
	if d.Rows != 2 || d.Name != "Multipart" {
		t.Fatalf("multipart: %+v", d)
	}
	jsonl := `{"vars": {"city": "Paris"}, "expected": "France"}` + "\n\n" + `{"city": "Lyon", "tags": ["fr"]}` + "\n"
	d = created(t, "raw JSON Lines", srv.upload(t, tok, "Cities", "", "application/x-ndjson", []byte(jsonl)))
	if d.Rows != 2 || !reflect.DeepEqual(d.Columns, []string{"city"}) {
		t.Fatalf("JSON Lines: %+v", d)
	}
	d = created(t, "multipart JSON Lines", srv.upload(t, tok, "Cities 2", "cities.jsonl", "", []byte(jsonl)))
	if d.Rows != 2 {
		t.Fatalf("multipart JSON Lines: %+v", d)
	}

	// The list, paged newest first.
	var seen []string
	cursor := ""
	for i := 0; i < 10; i++ {
		a := srv.apiCall(t, "GET", "/api/v1/datasets?limit=2&cursor="+cursor, tok, nil)
		var p struct {
			Items      []apiDataset `json:"items"`
			NextCursor *string      `json:"next_cursor"`
		}
		a.json(t, &p)
		for _, it := range p.Items {
			seen = append(seen, it.Name)
		}
		if p.NextCursor == nil {
			break
		}
		cursor = *p.NextCursor
	}
	if want := []string{"Cities 2", "Cities", "Multipart", "From CSV", "Sums"}; !reflect.DeepEqual(seen, want) {
		t.Errorf("listed %v, want %v", seen, want)
	}
}

func TestAPIDatasetBadInputNamesLineAndColumnAndStoresNothing(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token

	files := []struct {
		name, body, want string
	}{
		{"ragged row", "a,b\n1,2\n1,2,3\n", "line 3"},
		{"duplicate header", "a,A\n1,2\n", "line 1"},
		{"empty header", "a,,c\n1,2,3\n", "line 1, column"},
		{"invalid UTF-8", "a,b\n1,\xff\n", "line 2, column 3"},
		{"quote across lines never closed", "a,b\n\"1,2\n3,4\n", "line 2"},
		{"UTF-16", "\xff\xfea\x00,\x00b\x00\n\x00", "UTF-16"},
		{"no rows", "a,b\n", "no rows"},
	}
	for _, f := range files {
		// What the file reader says, through the API.
		_, want := dataset.ReadCSV(strings.NewReader(f.body), dataset.DefaultLimits)
		if want == nil || !strings.Contains(want.Error(), f.want) {
			t.Fatalf("%s: the reader says %v, want %q in it", f.name, want, f.want)
		}
		a := srv.upload(t, tok, f.name, "", "text/csv", []byte(f.body))
		e := wantAPIError(t, f.name, a, http.StatusUnprocessableEntity, "file")
		if e.Fields["file"] != want.Error() {
			t.Errorf("%s: file: %q, want the reader's %q", f.name, e.Fields["file"], want.Error())
		}
	}
	// A BOM is fine: it is dropped.
	created(t, "BOM", srv.upload(t, tok, "bom", "", "text/csv", []byte("\ufeffa\n1\n")))

	// A million rows: refused at the limit, nothing half-imported.
	var big strings.Builder
	big.WriteString("n\n")
	for i := 0; i < 1_000_000; i++ {
		big.WriteString("1\n")
	}
	a := srv.upload(t, tok, "million", "m.csv", "", []byte(big.String()))
	e := wantAPIError(t, "a million rows", a, http.StatusUnprocessableEntity, "file")
	if !strings.Contains(e.Fields["file"], "100,000") {
		t.Errorf("a million rows: %q", e.Fields["file"])
	}

	// JSON rows: the row and the reader's message.
	a = srv.apiCall(t, "POST", "/api/v1/datasets", tok, map[string]any{"name": "bad", "rows": []map[string]any{
		{"vars": map[string]any{"q": "ok"}}, {"vars": map[string]any{"q": map[string]any{"nested": 1}}}}})
	e = wantAPIError(t, "an object value", a, http.StatusUnprocessableEntity, "rows[1]")
	if !strings.Contains(e.Fields["rows[1]"], `the value of "q" is an object`) {
		t.Errorf("an object value: %q", e.Fields["rows[1]"])
	}
	a = srv.apiCall(t, "POST", "/api/v1/datasets", tok, map[string]any{"name": "bad", "rows": []map[string]any{
		{"vars": map[string]any{"2fast": "x"}}}})
	wantAPIError(t, "a bad variable name", a, http.StatusUnprocessableEntity, "rows[0]")
	a = srv.apiCall(t, "POST", "/api/v1/datasets", tok, map[string]any{"name": " ", "rows": []map[string]any{{"vars": map[string]any{"q": "x"}}}})
	wantAPIError(t, "no name", a, http.StatusUnprocessableEntity, "name")
	a = srv.upload(t, tok, "json", "", "application/json", []byte(`{"a":1}`))
	wantAPIError(t, "a JSON body on import", a, http.StatusUnsupportedMediaType)

	if n := srv.datasetCount(t); n != 1 {
		t.Errorf("%d datasets stored, want only the one with a BOM", n)
	}
}

func TestAPIDatasetUploadLimit(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	row := strings.Repeat("x", 1000) + "\n"
	file := func(size int) []byte {
		var b bytes.Buffer
		b.WriteString("text\n")
		for b.Len()+len(row) <= size {
			b.WriteString(row)
		}
		return b.Bytes()
	}
	// Over the dataset limit by a little: read, and refused by the reader.
	a := srv.upload(t, tok, "over", "over.csv", "", file(50<<20+10<<10))
	e := wantAPIError(t, "50 MB and a bit", a, http.StatusUnprocessableEntity, "file")
	if !strings.Contains(e.Fields["file"], "50 MB") {
		t.Errorf("50 MB and a bit: %q", e.Fields["file"])
	}
	// 51 MB, raw: the same message.
	a = srv.upload(t, tok, "51", "", "text/csv", file(51<<20))
	e = wantAPIError(t, "51 MB", a, http.StatusUnprocessableEntity, "file")
	if !strings.Contains(e.Fields["file"], "larger than 50 MB") {
		t.Errorf("51 MB: %q", e.Fields["file"])
	}
	// Larger: refused by its Content-Length, before it is read.
	status, body := announce(t, srv, "/api/v1/datasets/import?name=big", tok, 60<<20)
	if status != http.StatusRequestEntityTooLarge || !strings.Contains(body, "a dataset file is at most 50 MB") {
		t.Errorf("60 MB announced: %d %s", status, body)
	}
	// Without a token or a session, the upload route keeps 16 MB too.
	if status, body := announce(t, srv, "/api/v1/datasets/import?name=big", "", 17<<20); status != http.StatusRequestEntityTooLarge || !strings.Contains(body, "at most 16 MB") {
		t.Errorf("17 MB anonymous: %d %s", status, body)
	}
	// Every other route keeps the app's 16 MB.
	if status, body := announce(t, srv, "/api/v1/datasets", tok, 17<<20); status != http.StatusRequestEntityTooLarge || !strings.Contains(body, "at most 16 MB") {
		t.Errorf("17 MB elsewhere: %d %s", status, body)
	}
	// Just under: stored.
	d := created(t, "49 MB", srv.upload(t, tok, "49", "", "text/csv", file(49<<20)))
	if d.Rows < 50_000 {
		t.Errorf("49 MB: %d rows", d.Rows)
	}
	if n := srv.datasetCount(t); n != 1 {
		t.Errorf("%d datasets stored, want the 49 MB one alone", n)
	}
}

// announce sends the header of a POST of n bytes to path and no body,
// and reads the answer: a body refused by its size is answered at once.
func announce(t testing.TB, srv *server, path, token string, n int) (int, string) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	auth := ""
	if token != "" {
		auth = "Authorization: Bearer " + token + "\r\n"
	}
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: knobs\r\n%sContent-Type: text/csv\r\nContent-Length: %d\r\n\r\n", path, auth, n)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("announce %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestAPIDatasetVersionsOverABase(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	d := created(t, "create", srv.apiCall(t, "POST", "/api/v1/datasets", tok, map[string]any{"name": "QA", "rows": []map[string]any{
		{"vars": map[string]any{"q": "one"}}, {"vars": map[string]any{"q": "two"}}, {"vars": map[string]any{"q": "three"}}}}))
	v1 := srv.getDataset(t, tok, d.ID, "")
	keys := []int64{v1.RowPage.Items[0].Key, v1.RowPage.Items[1].Key, v1.RowPage.Items[2].Key}
	path := "/api/v1/datasets/" + strconv.FormatInt(d.ID, 10)

	a := srv.apiCall(t, "PUT", path, tok, map[string]any{"base_version": 1, "note": "tidy",
		"add":    []map[string]any{{"vars": map[string]any{"q": "four", "lang": "en"}, "expected": "4"}},
		"change": []map[string]any{{"key": keys[1], "vars": map[string]any{"q": "TWO"}}},
		"remove": []int64{keys[0]}})
	if a.status != http.StatusOK {
		t.Fatalf("edit: %d %s", a.status, a.body)
	}
	v2 := srv.getDataset(t, tok, d.ID, "")
	var qs []string
	for _, r := range v2.RowPage.Items {
		qs = append(qs, r.Vars["q"])
	}
	if v2.Version != 2 || !reflect.DeepEqual(qs, []string{"TWO", "three", "four"}) || !reflect.DeepEqual(v2.Columns, []string{"q", "lang"}) {
		t.Fatalf("v2: %d %v %v", v2.Version, qs, v2.Columns)
	}
	if v2.RowPage.Items[0].Key != keys[1] || len(v2.Versions) != 2 || v2.Versions[0].Note != "tidy" || v2.Versions[0].SavedBy != "admin" || v2.Versions[0].Rows != 3 {
		t.Errorf("v2 keys and versions: %+v %+v", v2.RowPage.Items[0], v2.Versions)
	}
	// The old version reads as it was.
	old := srv.getDataset(t, tok, d.ID, "?version=1")
	if old.Shown != 1 || len(old.RowPage.Items) != 3 || old.RowPage.Items[0].Vars["q"] != "one" || !reflect.DeepEqual(old.Columns, []string{"q"}) {
		t.Errorf("v1: %+v", old)
	}
	// A stale base: 409, nothing changed.
	a = srv.apiCall(t, "PUT", path, tok, map[string]any{"base_version": 1, "remove": []int64{keys[2]}})
	wantAPIError(t, "stale base", a, http.StatusConflict)
	// A bad row: the reader's message at the row; a key not in the version: 404.
	a = srv.apiCall(t, "PUT", path, tok, map[string]any{"base_version": 2, "add": []map[string]any{{"vars": map[string]any{"q": "ok"}}},
		"change": []map[string]any{{"key": keys[2], "vars": map[string]any{"q": "x"}, "tags": []string{"not a tag!"}}}})
	wantAPIError(t, "bad tag", a, http.StatusUnprocessableEntity, "change[0]")
	a = srv.apiCall(t, "PUT", path, tok, map[string]any{"base_version": 2, "add": []map[string]any{{"vars": map[string]any{"Q": "case"}}}})
	wantAPIError(t, "a column by another case", a, http.StatusUnprocessableEntity, "body")
	a = srv.apiCall(t, "PUT", path, tok, map[string]any{"base_version": 2, "remove": []int64{keys[0]}})
	wantAPIError(t, "removed key", a, http.StatusNotFound)
	if got := srv.getDataset(t, tok, d.ID, ""); got.Version != 2 {
		t.Errorf("refused edits saved a version: v%d", got.Version)
	}
	if a := srv.apiCall(t, "GET", path+"?version=9", tok, nil); a.status != http.StatusNotFound {
		t.Errorf("version 9: %d", a.status)
	}
}

func TestAPIDatasetExportReadsBackAndRowsPage(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	var rows []map[string]any
	for i := 0; i < 250; i++ {
		r := map[string]any{"vars": map[string]any{"q": fmt.Sprintf("=SUM(%d)", i), "note": "line one\nline \"two\", and, commas"}, "tags": []string{"t" + strconv.Itoa(i%3)}}
		if i%2 == 0 {
			r["expected"] = strconv.Itoa(i)
		}
		if i%5 == 0 {
			r["vars"].(map[string]any)["note"] = nil
		}
		rows = append(rows, r)
	}
	d := created(t, "create", srv.apiCall(t, "POST", "/api/v1/datasets", tok, map[string]any{"name": "Export me", "rows": rows}))
	id := strconv.FormatInt(d.ID, 10)

	// Paging: 100 at a time, in order, every row once.
	var all []apiDSRow
	cursor := ""
	for i := 0; i < 10; i++ {
		p := srv.getDataset(t, tok, d.ID, "?limit=100&cursor="+cursor)
		all = append(all, p.RowPage.Items...)
		if p.RowPage.NextCursor == nil {
			break
		}
		cursor = *p.RowPage.NextCursor
	}
	if len(all) != 250 || all[249].Vars["q"] != "=SUM(249)" {
		t.Fatalf("paged %d rows", len(all))
	}
	if a := srv.apiCall(t, "GET", "/api/v1/datasets/"+id+"?cursor=bogus", tok, nil); a.status != http.StatusUnprocessableEntity {
		t.Errorf("a made-up cursor: %d", a.status)
	}

	for _, format := range []string{"csv", "jsonl"} {
		a := srv.apiCall(t, "GET", "/api/v1/datasets/"+id+"/export?format="+format, tok, nil)
		if a.status != http.StatusOK || !strings.Contains(a.header.Get("Content-Disposition"), "export-me-v1."+format) {
			t.Fatalf("%s export: %d %v", format, a.status, a.header)
		}
		back := created(t, format+" re-import", srv.upload(t, tok, "Back "+format, "back."+format, "", []byte(a.body)))
		var got []apiDSRow
		p := srv.getDataset(t, tok, back.ID, "?limit=1000")
		got = p.RowPage.Items
		if len(got) != len(all) {
			t.Fatalf("%s: %d rows back, want %d", format, len(got), len(all))
		}
		for i := range all {
			want := all[i]
			if format == "csv" && want.Vars["note"] == "" {
				// CSV cannot tell no value from an empty one.
				if _, ok := want.Vars["note"]; !ok {
					want.Vars = map[string]string{"q": want.Vars["q"], "note": ""}
				}
			}
			if !reflect.DeepEqual(got[i].Vars, want.Vars) || !reflect.DeepEqual(got[i].Expected, want.Expected) || !reflect.DeepEqual(got[i].Tags, want.Tags) {
				t.Fatalf("%s row %d: %+v, want %+v", format, i, got[i], want)
			}
		}
	}
}

func TestAPIDatasetPrivateAndReadTokens(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	member := admin.addMember("mia")
	adminTok := admin.makeToken("ci", "write", nil).Token
	miaTok := member.makeToken("ci", "write", nil).Token
	readTok := admin.makeToken("read", "read", nil).Token
	rows := []map[string]any{{"vars": map[string]any{"q": "x"}}}
	private := created(t, "private", srv.apiCall(t, "POST", "/api/v1/datasets", adminTok, map[string]any{"name": "Mine", "rows": rows}))
	team := created(t, "team", srv.apiCall(t, "POST", "/api/v1/datasets", adminTok, map[string]any{"name": "Ours", "visibility": "team", "rows": rows}))
	pid, tid := strconv.FormatInt(private.ID, 10), strconv.FormatInt(team.ID, 10)

	for _, c := range []struct{ method, path string }{
		{"GET", "/api/v1/datasets/" + pid}, {"GET", "/api/v1/datasets/" + pid + "/export"}, {"DELETE", "/api/v1/datasets/" + pid},
	} {
		wantAPIError(t, "mia: "+c.method+" "+c.path, srv.apiCall(t, c.method, c.path, miaTok, nil), http.StatusNotFound)
	}
	a := srv.apiCall(t, "PUT", "/api/v1/datasets/"+pid, miaTok, map[string]any{"base_version": 1, "add": rows})
	wantAPIError(t, "mia edits a private dataset", a, http.StatusNotFound)
	// The team's: she reads it, and may not change it.
	if d := srv.getDataset(t, miaTok, team.ID, ""); d.Name != "Ours" {
		t.Errorf("team dataset: %+v", d)
	}
	a = srv.apiCall(t, "PUT", "/api/v1/datasets/"+tid, miaTok, map[string]any{"base_version": 1, "add": rows})
	wantAPIError(t, "mia edits the admin's team dataset", a, http.StatusForbidden)
	wantAPIError(t, "mia deletes it", srv.apiCall(t, "DELETE", "/api/v1/datasets/"+tid, miaTok, nil), http.StatusForbidden)

	// A read token reads and cannot write.
	srv.getDataset(t, readTok, private.ID, "")
	wantAPIError(t, "read token creates", srv.apiCall(t, "POST", "/api/v1/datasets", readTok, map[string]any{"name": "No", "rows": rows}), http.StatusForbidden)
	wantAPIError(t, "read token uploads", srv.upload(t, readTok, "No", "", "text/csv", []byte("a\n1\n")), http.StatusForbidden)
	wantAPIError(t, "read token deletes", srv.apiCall(t, "DELETE", "/api/v1/datasets/"+pid, readTok, nil), http.StatusForbidden)
	if n := srv.datasetCount(t); n != 2 {
		t.Errorf("%d datasets, want 2", n)
	}
	// The owner deletes.
	if a := srv.apiCall(t, "DELETE", "/api/v1/datasets/"+pid, adminTok, nil); a.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", a.status, a.body)
	}
	wantAPIError(t, "deleted", srv.apiCall(t, "GET", "/api/v1/datasets/"+pid, adminTok, nil), http.StatusNotFound)
}
