package dataset

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestReadChoosesTheFormat(t *testing.T) {
	two := func(a, b string) Table {
		return Table{Columns: []string{"q", "ctx"}, Rows: []Row{{Vars: map[string]string{"q": a, "ctx": b}}}}
	}
	tests := []struct {
		name, file, in string
		want           Table
	}{
		{"tab-separated by extension", "cases.tsv", "q\tctx\nx\t\"a\tb, c\"\n", two("x", "a\tb, c")},
		{"semicolons in a .csv", "cases.CSV", "q;ctx\r\nx;\"y;z, w\"\r\n", two("x", "y;z, w")},
		{"JSON Lines by extension", "cases.jsonl", `{"q":"x","ctx":"y"}`, two("x", "y")},
		{"JSON Lines by content", "upload", "\ufeff\n  {\"q\":\"x\",\"ctx\":\"y\"}\n", two("x", "y")},
		{"tab-separated by content", "cases.txt", "\nq\tctx\nx,1\ty\n", two("x,1", "y")},
		{"CSV by content", "", "q,ctx\nx;1,y\n", two("x;1", "y")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Read(tt.file, strings.NewReader(tt.in), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %s\nwant %s", show(got), show(tt.want))
			}
		})
	}
}

func TestReadNamesTheSeparatorInQuoteErrors(t *testing.T) {
	tb, err := Read("cases.tsv", strings.NewReader("a\tb\n\"x\"y\t1\n"), Limits{})
	wantError(t, tb, err, 2, 3, "more text follows before the next tab")
	tb, err = Read("cases.csv", strings.NewReader("a;b\nx;1\n\"x\"y;1\n"), Limits{})
	wantError(t, tb, err, 3, 3, "more text follows before the next semicolon")
	tb, err = Read("cases.tsv", strings.NewReader("a\tb\nx\t1\t2\n"), Limits{})
	wantError(t, tb, err, 2, 5, "this value has no column (a value holding a tab goes in double quotes)")
}

func TestReadPasted(t *testing.T) {
	s := func(v string) *string { return &v }
	// What a spreadsheet copies: tabs between cells, a cell with a line
	// break in quotes, CR LF line ends.
	sheet := "question\tExpected\ttags\r\n\"two\r\nlines\"\t4\tmath\r\nplain\t\t\r\n"
	got, err := ReadPasted(sheet, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := Table{Columns: []string{"question"}, Rows: []Row{
		{Vars: map[string]string{"question": "two\nlines"}, Expected: s("4"), Tags: []string{"math"}},
		{Vars: map[string]string{"question": "plain"}},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("spreadsheet paste: got %s\nwant %s", show(got), show(want))
	}

	got, err = ReadPasted("\n{\"vars\":{\"question\":\"plain\"}}\n", Limits{})
	if err != nil || !reflect.DeepEqual(got.Rows, want.Rows[1:]) {
		t.Errorf("JSON Lines paste: got %s, %v", show(got), err)
	}

	tb, err := ReadPasted("question,answer\n\"open\n", Limits{})
	wantError(t, tb, err, 2, 1, "this quote opens a value that is never closed")
}

func TestMissing(t *testing.T) {
	tb, err := ReadCSV(strings.NewReader("question,tone\nhi,\nbye,warm\n"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	// An empty cell is a value; a column the file lacks is missing in
	// every row.
	want := map[int][]string{0: {"audience"}, 1: {"audience"}}
	if got := Missing(tb, []string{"question", "tone", "audience"}); !reflect.DeepEqual(got, want) {
		t.Errorf("Missing = %v, want %v", got, want)
	}
	if got := Missing(tb, []string{"tone"}); len(got) != 0 {
		t.Errorf("Missing = %v, want none", got)
	}
}

func TestErrorText(t *testing.T) {
	for _, tt := range []struct {
		e    Error
		want string
	}{
		{Error{14, 3, "bad"}, "line 14, column 3: bad"},
		{Error{14, 0, "bad"}, "line 14: bad"},
		{Error{0, 0, "the file has a header but no rows"}, "the file has a header but no rows"},
	} {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
	for n, want := range map[int]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 112: "112th", 1002: "1,002nd"} {
		if got := ordinal(n); got != want {
			t.Errorf("ordinal(%d) = %q, want %q", n, got, want)
		}
	}
	for n, want := range map[int64]string{50 << 20: "50 MB", 64 << 10: "64 KB", 1000: "1,000 bytes", 1_234_567: "1,234,567 bytes"} {
		if got := sizeText(n); got != want {
			t.Errorf("sizeText(%d) = %q, want %q", n, got, want)
		}
	}
}

// FuzzRoundTrip writes tables built from arbitrary values and reads them
// back through every reader: the values survive commas, quotes, line
// breaks, formula starts and quotes of the formula protection.
func FuzzRoundTrip(f *testing.F) {
	for _, seed := range [][4]string{
		{"plain", "text", "", ""},
		{"a, b", `say "hi"`, "4", "math easy"},
		{"two\nlines", "cr\r\nlf", "\r", "A;b,c"},
		{"=SUM(A1:A2)", "+1", "-1", "x"},
		{"@cmd", "'quoted", "''", "-dash"},
		{"'=protected", "\ttab", "'", ""},
		{"", "", "", ""},
		{"\ufeffbom in a value", "é ü ✓ 😀", "\"\"\"", "_"},
		{",", "\"", "\n", ";"},
		{"\\.", "{\"not\":\"json\"}", "null", "tags"},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3], true)
	}
	f.Fuzz(func(t *testing.T, q, ctx, expected, tags string, lacking bool) {
		for _, v := range []string{q, ctx, expected, tags} {
			if !utf8.ValidString(v) {
				t.Skip("a dataset is UTF-8 text")
			}
		}
		opt := func(v string) *string {
			if v = cleanValue(v); v == "" {
				return nil
			}
			return &v
		}
		rowTags, msg := normalizeTags(splitTags(tags))
		if msg != "" {
			rowTags = nil
		}
		tb := Table{Columns: []string{"q", "ctx"}, Rows: []Row{
			{Vars: map[string]string{"q": cleanValue(q), "ctx": cleanValue(ctx)}, Expected: opt(expected), Tags: rowTags},
			{Vars: map[string]string{"q": cleanValue(ctx + q), "ctx": cleanValue(expected)}, Expected: opt(q)},
		}}
		roundTrip(t, tb, "cases.csv", WriteCSV)
		if lacking {
			tb.Rows = append(tb.Rows, Row{Vars: map[string]string{"ctx": cleanValue(tags)}})
		}
		roundTrip(t, tb, "cases.jsonl", WriteJSONL)
	})
}

func roundTrip(t *testing.T, tb Table, name string, write func(io.Writer, Table) error) {
	t.Helper()
	var buf bytes.Buffer
	if err := write(&buf, tb); err != nil {
		t.Fatal(err)
	}
	read := map[string]func() (Table, error){
		"Read":       func() (Table, error) { return Read(name, bytes.NewReader(buf.Bytes()), Limits{}) },
		"ReadPasted": func() (Table, error) { return ReadPasted(buf.String(), Limits{}) },
	}
	if strings.HasSuffix(name, ".csv") {
		read["ReadCSV"] = func() (Table, error) { return ReadCSV(bytes.NewReader(buf.Bytes()), Limits{}) }
	} else {
		read["ReadJSONL"] = func() (Table, error) { return ReadJSONL(bytes.NewReader(buf.Bytes()), Limits{}) }
	}
	for how, r := range read {
		got, err := r()
		if err != nil {
			t.Fatalf("%s of %q: %v", how, buf.String(), err)
		}
		if !reflect.DeepEqual(got, tb) {
			t.Fatalf("%s of %q:\ngot  %s\nwant %s", how, buf.String(), show(got), show(tb))
		}
	}
}

// FuzzReadCSV reads arbitrary bytes: a file is either refused with a
// position inside it and no table, or read into a table that writes and
// reads back unchanged.
func FuzzReadCSV(f *testing.F) {
	for _, seed := range []string{
		"a,b\n1,2\n", "a,b\n1,2\n3\n", "a,A\n1,2\n", "a,b\n1,\"x\ny\n", "a,b\n\"x\"y,2\n",
		"\ufeffq,expected,tags\r\n\"x\r\ny\",'=1,\"a b\"\r\n", "a\n\xff\n", "a,b\n1,x\"y\n", "",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tb, err := ReadCSV(bytes.NewReader(data), Limits{MaxBytes: 1 << 16})
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v (%T), want an *Error", err, err)
			}
			if lines := bytes.Count(data, []byte("\n")) + 1; e.Line < 0 || e.Line > lines || e.Column < 0 {
				t.Fatalf("%v: outside the file's %d lines", e, lines)
			}
			if !reflect.DeepEqual(tb, Table{}) {
				t.Fatalf("a refused file returned a table: %s", show(tb))
			}
			return
		}
		roundTrip(t, tb, "cases.csv", WriteCSV)
	})
}

// FuzzReadJSONL is FuzzReadCSV for JSON Lines.
func FuzzReadJSONL(f *testing.F) {
	for _, seed := range []string{
		`{"a":"x"}`, "{\"vars\":{\"a\":1,\"b\":null},\"expected\":\"4\",\"tags\":[\"x\"]}\n\n{\"a\":\"y\"}",
		`{"a":{"x":1}}`, `{"a":"x",}`, `[1]`, "{\"a\":\"\xff\"}", `{"a":"x"} y`, "",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tb, err := ReadJSONL(bytes.NewReader(data), Limits{MaxBytes: 1 << 16})
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v (%T), want an *Error", err, err)
			}
			if lines := bytes.Count(data, []byte("\n")) + 1; e.Line < 0 || e.Line > lines || e.Column < 0 {
				t.Fatalf("%v: outside the file's %d lines", e, lines)
			}
			if !reflect.DeepEqual(tb, Table{}) {
				t.Fatalf("a refused file returned a table: %s", show(tb))
			}
			return
		}
		roundTrip(t, tb, "cases.jsonl", WriteJSONL)
	})
}
