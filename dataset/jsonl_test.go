package dataset

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReadJSONLRefuses(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		lim       Limits
		line, col int
		want      string
	}{
		{"object as a value", `{"a":{"x":1}}`, Limits{}, 1, 6,
			`the value of "a" is an object; it must be text (a string, a number or true/false)`},
		{"list as a value in vars", "{\"a\":\"1\"}\n\n{\"vars\": {\"a\": [1]}}", Limits{}, 3, 16,
			`the value of "a" is a list`},
		{"object as the expected answer", `{"a":"1","expected":{"x":1}}`, Limits{}, 1, 21,
			"the expected answer is an object"},
		{"tags of the wrong type", `{"a":"1","tags":3}`, Limits{}, 1, 17,
			`"tags" must be a list of strings`},
		{"a list of non-strings as tags", `{"a":"1","tags":["x",2]}`, Limits{}, 1, 17,
			`"tags" must be a list of strings`},
		{"bad tag", `{"a":"1","tags":"ok bad!"}`, Limits{}, 1, 17,
			`the tag "bad!"`},
		{"text after the object", `{"a":"x"} y`, Limits{}, 1, 11,
			"more text follows the JSON object; a line holds one object"},
		{"trailing comma", `{"a":"x",}`, Limits{}, 1, 10,
			"this line is not valid JSON: invalid character '}' looking for beginning of object key string"},
		{"bad literal", "{\"a\":\"1\"}\r\n{\"a\":tru}\r\n", Limits{}, 2, 9,
			"this line is not valid JSON: invalid character '}' in literal true"},
		{"bad JSON inside vars", `{"vars":{"a":"x",3}}`, Limits{}, 1, 18,
			"invalid character '3' looking for beginning of object key string"},
		{"object not closed on its line", "{\"a\":\"x\",\n\"b\":\"y\"}", Limits{}, 1, 10,
			"the line ends before its JSON object is closed; a JSON Lines file has one whole object per line"},
		{"a JSON array", `[{"a":"x"}]`, Limits{}, 1, 1,
			"a JSON array is not JSON Lines: write one object per line"},
		{"a line that is not an object", "{\"a\":\"x\"}\n  \"b\"\n", Limits{}, 2, 3,
			"each line must be one JSON object, starting with {"},
		{"duplicate key", `{"a":"x","a":"y"}`, Limits{}, 1, 10,
			`the key "a" appears twice in this object`},
		{"special key twice in other case", `{"a":"x","expected":"1","Expected":"2"}`, Limits{}, 1, 25,
			`the key "Expected" appears twice`},
		{"variable differing from a column by case", "{\"name\":\"x\"}\n{\"Name\":\"x\"}", Limits{}, 2, 2,
			`the variable "Name" differs from the column "name" only by case`},
		{"unknown key beside vars", `{"vars":{"a":"b"},"id":3}`, Limits{}, 1, 19,
			`the key "id" is not known here: beside "vars", a line may have only "expected" and "tags"`},
		{"special name inside vars", `{"vars":{"a":"b","tags":"x"}}`, Limits{}, 1, 18,
			`"tags" is a special column here and cannot be a variable`},
		{"key that is not a variable name", `{"first name":"Ada"}`, Limits{}, 1, 2,
			`"first name" is not a variable name`},
		{"invalid UTF-8", "{\"a\":\"x\"}\n{\"a\":\"\xe2\x82\"}", Limits{}, 2, 7,
			"the file is not UTF-8 text here (byte 0xE2)"},
		{"value over the cell cap", `{"a":"12345678901"}`, Limits{MaxCell: 10}, 1, 6,
			`the value of "a" is longer than 10 bytes`},
		{"more rows than the limit", "{\"a\":\"1\"}\n\n{\"a\":\"2\"}\n{\"a\":\"3\"}\n", Limits{MaxRows: 2}, 4, 1,
			"the file has more than 2 rows"},
		{"no rows", "\n  \n\r\n", Limits{}, 0, 0, "the file has no rows"},
		{"over the size limit", strings.Repeat(`{"a":"1"}`+"\n", 200), Limits{MaxBytes: 1000}, 0, 0,
			"the file is larger than 1,000 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb, err := ReadJSONL(strings.NewReader(tt.in), tt.lim)
			wantError(t, tb, err, tt.line, tt.col, tt.want)
			tb, err = ReadJSONL(iotest.OneByteReader(strings.NewReader(tt.in)), tt.lim)
			wantError(t, tb, err, tt.line, tt.col, tt.want)
		})
	}
}

func TestReadJSONL(t *testing.T) {
	s := func(v string) *string { return &v }
	in := "\ufeff" + `{"question":"What is 2+2?","n":4,"exact":true,"expected":"4","tags":"Math, easy"}` + "\r\n" +
		"\r\n" +
		`  {"vars":{"n":1.50,"question":"line\r\nbreak","context":null},"expected":null,"tags":["b","A","b"]}` + "\n" +
		`{"vars":{},"expected":""}` + "\n" +
		`{"question":"","Tags":null,"EXPECTED":7}`
	want := Table{Columns: []string{"question", "n", "exact", "context"}, Rows: []Row{
		{Vars: map[string]string{"question": "What is 2+2?", "n": "4", "exact": "true"}, Expected: s("4"), Tags: []string{"easy", "math"}},
		{Vars: map[string]string{"n": "1.50", "question": "line\nbreak"}, Tags: []string{"a", "b"}},
		{Vars: map[string]string{}},
		{Vars: map[string]string{"question": ""}, Expected: s("7")},
	}}
	got, err := ReadJSONL(strings.NewReader(in), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %s\nwant %s", show(got), show(want))
	}
	// A row lacks a variable it has no key for, or null; "" is a value.
	wantMissing := map[int][]string{0: {"context"}, 1: {"exact", "context"}, 2: {"question", "exact", "context"}, 3: {"exact", "context"}}
	if m := Missing(got, []string{"question", "exact", "context"}); !reflect.DeepEqual(m, wantMissing) {
		t.Errorf("Missing = %v, want %v", m, wantMissing)
	}
}

func TestWriteJSONL(t *testing.T) {
	exp := "<b>4</b> & \"so\"\non"
	tb := Table{Columns: []string{"q", "ctx"}, Rows: []Row{
		{Vars: map[string]string{"q": "2+2", "ctx": "=x"}, Expected: &exp, Tags: []string{"z", "a"}},
		{Vars: map[string]string{"ctx": ""}},
	}}
	var buf bytes.Buffer
	if err := WriteJSONL(&buf, tb); err != nil {
		t.Fatal(err)
	}
	want := `{"vars":{"q":"2+2","ctx":"=x"},"expected":"<b>4</b> & \"so\"\non","tags":["a","z"]}` + "\n" +
		`{"vars":{"q":null,"ctx":""}}` + "\n"
	if buf.String() != want {
		t.Errorf("wrote\n%s\nwant\n%s", buf.String(), want)
	}
	if tb.Rows[0].Tags[0] != "z" {
		t.Error("writing sorted the caller's tags")
	}
	back, err := ReadJSONL(&buf, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	tb.Rows[0].Tags = []string{"a", "z"}
	if !reflect.DeepEqual(back, tb) {
		t.Errorf("read back %s\nwant %s", show(back), show(tb))
	}
}
