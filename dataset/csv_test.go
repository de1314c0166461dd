package dataset

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// wantError checks that err is the *Error a user would see, at line and
// col, saying want; and that no table came with it.
func wantError(t *testing.T, tb Table, err error, line, col int, want string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v (%T), want an *Error", err, err)
	}
	if e.Line != line || e.Column != col || !strings.Contains(e.Message, want) {
		t.Errorf("got line %d, column %d: %q\nwant line %d, column %d: …%q…", e.Line, e.Column, e.Message, line, col, want)
	}
	if line > 0 && !strings.HasPrefix(e.Error(), fmt.Sprintf("line %d, column %d: ", line, col)) {
		t.Errorf("the text %q does not name the line and column", e.Error())
	}
	if !reflect.DeepEqual(tb, Table{}) {
		t.Errorf("a refused file returned a table: %+v", tb)
	}
}

func TestReadCSVRefuses(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		lim       Limits
		line, col int
		want      string
	}{
		{"row with a value too few", "a,b\n1,2\n3\n", Limits{}, 3, 1,
			`this row has 1 value but the header names 2 columns; the value for "b" is missing`},
		{"row with a value too many", "a,b\n1,2\n3,4,5\n", Limits{}, 3, 5,
			"this row has 3 values but the header names 2 columns; this value has no column"},
		{"ragged row after a quoted value across lines", "a,b\n\"x\ny\",2,3\n", Limits{}, 3, 6,
			"this row has 3 values but the header names 2 columns"},
		{"duplicate header, other case", "name,Name\nx,y\n", Limits{}, 1, 6,
			`the name "Name" is already the name of the 1st column, "name" (names are compared ignoring case)`},
		{"duplicate special column", "q,expected,Expected\n1,2,3\n", Limits{}, 1, 12,
			`the name "Expected" is already the name of the 2nd column, "expected"`},
		{"empty header in the middle", "a,,b\n1,2,3\n", Limits{}, 1, 3,
			"the 2nd column has no name; the header names every column"},
		{"empty header at the end", "a,b,\n1,2,3\n", Limits{}, 1, 5,
			"the 3rd column has no name"},
		{"header that is not a variable name", "a,first name\n1,2\n", Limits{}, 1, 3,
			`"first name" is not a variable name: use letters, digits and _`},
		{"header starting with a digit", "2nd\nx\n", Limits{}, 1, 1,
			`"2nd" is not a variable name`},
		{"invalid UTF-8 in a value", "a,b\n1,\xff2\n", Limits{}, 2, 3,
			"the file is not UTF-8 text here (byte 0xFF); save it as UTF-8"},
		{"invalid UTF-8 after a two-byte letter", "a,b\nä,x\xe9y\n", Limits{}, 2, 5,
			"(byte 0xE9)"},
		{"invalid UTF-8 in the header", "a,\xc0b\n1,2\n", Limits{}, 1, 3,
			"not UTF-8"},
		{"invalid UTF-8 inside a quoted value across lines", "a\n\"x\ny\xfe\"\n", Limits{}, 3, 2,
			"(byte 0xFE)"},
		{"UTF-16 file", "\xff\xfea\x00,\x00b\x00", Limits{}, 1, 1,
			"the file is UTF-16 text"},
		{"rune cut by the end of the file", "a\nx\xc3", Limits{}, 2, 2,
			"(byte 0xC3)"},
		{"unterminated quote", "a,b\n1,\"x\ny\n", Limits{}, 2, 3,
			"this quote opens a value that is never closed"},
		{"unterminated quote opened on the record's second line", "a,b\n\"x\ny\",\"open\nz\n", Limits{}, 3, 4,
			"this quote opens a value that is never closed"},
		{"unterminated quote after CRLF lines", "a,b\r\n1,2\r\n3,\"x\r\n", Limits{}, 3, 3,
			"never closed"},
		{"bare quote in an unquoted value", "a,b\n1,x\"y\n", Limits{}, 2, 4,
			"a quote inside a value that does not start with one"},
		{"text after a closing quote", "a,b\n\"x\"y,2\n", Limits{}, 2, 3,
			"this quote ends a quoted value but more text follows before the next comma"},
		{"value over the cell cap", "a,b\n1,12345678901\n", Limits{MaxCell: 10}, 2, 3,
			`the value of "b" is longer than 10 bytes`},
		{"quoted value over the cell cap across lines", "a\n\"12345\n67890\n\"\n", Limits{MaxCell: 10}, 2, 1,
			`the value of "a" is longer than 10 bytes`},
		{"more rows than the limit", "a\n1\n2\n3\n", Limits{MaxRows: 2}, 4, 1,
			"the file has more than 2 rows"},
		{"bad tag", "q,tags\n1,\"ok, no!\"\n", Limits{}, 2, 3,
			`the tag "no!" is not 1 to 32 of a-z, 0-9, - and _`},
		{"too many tags", "q,tags\n1," + tagList(21) + "\n", Limits{}, 2, 3,
			"a row has at most 20 tags; this one has 21"},
		{"more variables than a dataset holds", manyColumns(1001) + "\n1\n", Limits{}, 1, strings.Index(manyColumns(1001), "v1000") + 1,
			"a dataset has at most 1,000 variables; this is one more"},
		{"header but no rows", "a,b\n", Limits{}, 0, 0, "the file has a header but no rows"},
		{"header and blank lines", "a,b\r\n\r\n\n", Limits{}, 0, 0, "the file has a header but no rows"},
		{"empty file", "", Limits{}, 0, 0, "the file is empty; its first line must be the header"},
		{"only a byte order mark", "\ufeff", Limits{}, 0, 0, "the file is empty"},
		{"over the size limit", "a\n" + strings.Repeat("x\n", 600), Limits{MaxBytes: 1 << 10}, 0, 0,
			"the file is larger than 1 KB, the most one upload may be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb, err := ReadCSV(strings.NewReader(tt.in), tt.lim)
			wantError(t, tb, err, tt.line, tt.col, tt.want)
			// The same bytes one at a time: runes and the byte order
			// mark cut between reads change nothing.
			tb, err = ReadCSV(iotest.OneByteReader(strings.NewReader(tt.in)), tt.lim)
			wantError(t, tb, err, tt.line, tt.col, tt.want)
		})
	}
}

func manyColumns(n int) string {
	var names []string
	for i := range n {
		names = append(names, fmt.Sprintf("v%d", i))
	}
	return strings.Join(names, ",")
}

func tagList(n int) string {
	var tags []string
	for i := range n {
		tags = append(tags, fmt.Sprintf("t%d", i))
	}
	return strings.Join(tags, ";")
}

func TestReadCSVAccepts(t *testing.T) {
	s := func(v string) *string { return &v }
	tests := []struct {
		name string
		in   string
		want Table
	}{
		{"byte order mark is not part of the first header", "\ufeffname,n\nAda,1\n",
			Table{Columns: []string{"name", "n"}, Rows: []Row{{Vars: map[string]string{"name": "Ada", "n": "1"}}}}},
		{"CRLF line endings", "a,b\r\n1,2\r\n3,4\r\n",
			Table{Columns: []string{"a", "b"}, Rows: []Row{
				{Vars: map[string]string{"a": "1", "b": "2"}},
				{Vars: map[string]string{"a": "3", "b": "4"}},
			}}},
		{"quoted value across lines keeps its line breaks as LF", "q,expected\r\n\"first\r\nsecond\",\"say \"\"hi\"\", then, go\"\r\n",
			Table{Columns: []string{"q"}, Rows: []Row{{Vars: map[string]string{"q": "first\nsecond"}, Expected: s(`say "hi", then, go`)}}}},
		{"special columns in any case, tags split and normalised, empty expected is none", " Q ,TAGS,Expected\nx,\"Math; easy hard,easy\",\n,,4\n",
			Table{Columns: []string{"Q"}, Rows: []Row{
				{Vars: map[string]string{"Q": "x"}, Tags: []string{"easy", "hard", "math"}},
				{Vars: map[string]string{"Q": ""}, Expected: s("4")},
			}}},
		{"no last line break, blank lines skipped", "a\n\nx\n\ny",
			Table{Columns: []string{"a"}, Rows: []Row{{Vars: map[string]string{"a": "x"}}, {Vars: map[string]string{"a": "y"}}}}},
		{"protected formulas lose their quote, others keep theirs", "a,b,c,d\n'=SUM(A1),''x,'hello,-1\n",
			Table{Columns: []string{"a", "b", "c", "d"}, Rows: []Row{{Vars: map[string]string{"a": "=SUM(A1)", "b": "'x", "c": "'hello", "d": "-1"}}}}},
		{"only special columns", "expected\n42\n",
			Table{Rows: []Row{{Vars: map[string]string{}, Expected: s("42")}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(tt.in), iotest.OneByteReader(strings.NewReader(tt.in))} {
				got, err := ReadCSV(r, Limits{})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("got  %s\nwant %s", show(got), show(tt.want))
				}
			}
		})
	}
}

// show prints a table with its expected answers, not their addresses.
func show(t Table) string {
	var b strings.Builder
	fmt.Fprintf(&b, "columns %q;", t.Columns)
	for _, r := range t.Rows {
		exp := "<none>"
		if r.Expected != nil {
			exp = fmt.Sprintf("%q", *r.Expected)
		}
		fmt.Fprintf(&b, " {vars %q expected %s tags %q}", r.Vars, exp, r.Tags)
	}
	return b.String()
}

// lazyRows is a CSV file made as it is read: a header and n rows, so a
// test can offer a huge file without holding it.
type lazyRows struct {
	header string
	n, i   int
	pulled int64 // bytes handed to the reader so far
	buf    []byte
}

func (l *lazyRows) Read(p []byte) (int, error) {
	for len(l.buf) < len(p) && l.i <= l.n {
		if l.i == 0 {
			l.buf = append(l.buf, l.header...)
		} else {
			l.buf = fmt.Appendf(l.buf, "question %d,context,%d,tag\n", l.i, l.i)
		}
		l.i++
	}
	if len(l.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, l.buf)
	l.buf = l.buf[n:]
	l.pulled += int64(n)
	return n, nil
}

func TestReadCSVMillionRowsRefusedAtTheLimit(t *testing.T) {
	src := &lazyRows{header: "q,ctx,expected,tags\n", n: 1_000_000}
	tb, err := ReadCSV(src, DefaultLimits)
	wantError(t, tb, err, 100_002, 1, "the file has more than 100,000 rows, the most one dataset may have")
	if src.i > 200_000 {
		t.Errorf("the reader made %d rows of the file before refusing it; it should stop near the limit", src.i)
	}
}

func TestReadCSVTooLargeStopsReading(t *testing.T) {
	src := &lazyRows{header: "q,ctx,expected,tags\n", n: 1_000_000} // about 35 MB
	tb, err := ReadCSV(src, Limits{MaxBytes: 1 << 20})
	wantError(t, tb, err, 0, 0, "the file is larger than 1 MB")
	if src.pulled > 1<<20+64<<10 {
		t.Errorf("read %d bytes of a file over a 1 MB limit", src.pulled)
	}
	if got := (&Error{Message: "the file is larger than " + sizeText(DefaultLimits.MaxBytes)}).Error(); got != "the file is larger than 50 MB" {
		t.Errorf("the default limit reads %q", got)
	}
}

func TestReadCSVPassesReadFailures(t *testing.T) {
	boom := errors.New("connection reset")
	_, err := ReadCSV(io.MultiReader(strings.NewReader("a\n1\n"), iotest.ErrReader(boom)), Limits{})
	var e *Error
	if !errors.Is(err, boom) || errors.As(err, &e) {
		t.Errorf("got %v, want the read failure itself, not a refusal of the content", err)
	}
}

func TestWriteCSV(t *testing.T) {
	exp := "=1+1"
	tb := Table{Columns: []string{"q", "note"}, Rows: []Row{
		{Vars: map[string]string{"q": "a, \"b\"\nc", "note": "@cmd"}, Expected: &exp, Tags: []string{"x", "b"}},
		{Vars: map[string]string{"q": "'quoted", "note": "-2"}},
		{Vars: map[string]string{"q": "plain"}},
	}}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, tb); err != nil {
		t.Fatal(err)
	}
	want := "\ufeffq,note,expected,tags\r\n" +
		"\"a, \"\"b\"\"\nc\",'@cmd,'=1+1,\"b,x\"\r\n" +
		"''quoted,'-2,,\r\n" +
		"plain,,,\r\n"
	if buf.String() != want {
		t.Errorf("wrote\n%q\nwant\n%q", buf.String(), want)
	}
	back, err := ReadCSV(&buf, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	// The missing note reads back as an empty one: CSV has no "missing".
	tb.Rows[2].Vars["note"] = ""
	tb.Rows[0].Tags = []string{"b", "x"}
	if !reflect.DeepEqual(back, tb) {
		t.Errorf("read back %s\nwant %s", show(back), show(tb))
	}
}

func TestWriteRefusesTablesAFileCannotCarry(t *testing.T) {
	tests := []struct {
		name string
		tb   Table
		want string
	}{
		{"bad column name", Table{Columns: []string{"first name"}}, `"first name" is not a variable name`},
		{"special column as a variable", Table{Columns: []string{"Tags"}}, `"Tags" is a special column`},
		{"columns differing by case", Table{Columns: []string{"a", "A"}}, `differ only by case`},
		{"value for no column", Table{Columns: []string{"a"}, Rows: []Row{{Vars: map[string]string{"b": "x"}}}}, `row 1 has a value for "b", which is not a column`},
		{"bad tag", Table{Rows: []Row{{Tags: []string{"no way"}}}}, `the tag "no way"`},
		{"not UTF-8", Table{Columns: []string{"a"}, Rows: []Row{{Vars: map[string]string{"a": "\xff"}}}}, "not UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, write := range []func(io.Writer, Table) error{WriteCSV, WriteJSONL} {
				var buf bytes.Buffer
				err := write(&buf, tt.tb)
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("got %v, want …%s…", err, tt.want)
				}
				if buf.Len() > 0 {
					t.Errorf("wrote %q for a refused table", buf.String())
				}
			}
		})
	}
}

func BenchmarkReadCSV100k(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString("question,context,expected,tags\n")
	for i := range 100_000 {
		fmt.Fprintf(&buf, "What is %d plus %d?,\"Arithmetic, \"\"simple\"\" case %d\",%d,math\n", i, i, i, 2*i)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		tb, err := ReadCSV(bytes.NewReader(data), DefaultLimits)
		if err != nil || len(tb.Rows) != 100_000 {
			b.Fatal(len(tb.Rows), err)
		}
	}
}
