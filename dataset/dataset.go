package dataset

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Row is one case of a dataset: the variables' values, the reference
// answer and the tags.
type Row struct {
	// Vars maps a variable to its value. A variable the row has no value
	// for is absent; an empty string is a value.
	Vars map[string]string
	// Expected is the reference answer, nil when the row has none (never
	// a pointer to "").
	Expected *string
	// Tags are normalised (lowercase, sorted, no duplicates); nil when
	// the row has none.
	Tags []string
}

// Table is a dataset's content as read from a file.
type Table struct {
	// Columns are the variable names in file order ("expected" and
	// "tags" are not among them).
	Columns []string
	Rows    []Row
}

// Limits bound what one file may hold. A zero field takes its value from
// DefaultLimits.
type Limits struct {
	MaxBytes int64 // size of the file
	MaxRows  int   // data rows, the header not counted
	MaxCell  int   // bytes of one value
}

// DefaultLimits are the limits of an upload.
var DefaultLimits = Limits{MaxBytes: 50 << 20, MaxRows: 100_000, MaxCell: 1 << 20}

// Bounds of a row's tags (as a preset's) and of a dataset's variables.
const (
	MaxTags    = 20   // tags on one row
	MaxTagLen  = 32   // bytes of one tag
	MaxColumns = 1000 // variables in one dataset
)

// isVariableName reports whether s is a preset variable's name, as
// `^[A-Za-z_][A-Za-z0-9_]{0,63}$` says (written out: it runs per cell).
func isVariableName(s string) bool {
	if s == "" || len(s) > 64 || ('0' <= s[0] && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// isTag reports whether s is a normalised tag: `^[a-z0-9_-]{1,32}$`.
func isTag(s string) bool {
	if s == "" || len(s) > MaxTagLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Error is why a file was refused: the line and column of the first
// problem (both 0 for a problem with the whole file) and what is wrong,
// in words for the user.
type Error struct {
	Line, Column int
	Message      string
}

// Error says where and what: "line 14, column 3: …", or only what for a
// problem with the whole file.
func (e *Error) Error() string {
	switch {
	case e.Line > 0 && e.Column > 0:
		return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Message)
	case e.Line > 0:
		return fmt.Sprintf("line %d: %s", e.Line, e.Message)
	}
	return e.Message
}

func errorAt(line, col int, format string, args ...any) *Error {
	return &Error{Line: line, Column: col, Message: fmt.Sprintf(format, args...)}
}

// withDefaults fills lim's zero fields from DefaultLimits.
func (lim Limits) withDefaults() Limits {
	if lim.MaxBytes <= 0 {
		lim.MaxBytes = DefaultLimits.MaxBytes
	}
	if lim.MaxRows <= 0 {
		lim.MaxRows = DefaultLimits.MaxRows
	}
	if lim.MaxCell <= 0 {
		lim.MaxCell = DefaultLimits.MaxCell
	}
	return lim
}

// Missing returns, for each row index that lacks some of vars, the
// variables it lacks, in the order of vars. A row lacks a variable when
// it has no value for it at all (a CSV file without that column, a JSON
// line without that key or with null); an empty value is present. Rows
// that lack nothing are not in the map.
func Missing(t Table, vars []string) map[int][]string {
	out := map[int][]string{}
	for i, row := range t.Rows {
		for _, v := range vars {
			if _, ok := row.Vars[v]; !ok {
				out[i] = append(out[i], v)
			}
		}
	}
	return out
}

// Read reads an uploaded file, choosing the format by the file name's
// extension (.csv, .tsv or .tab, .jsonl or .ndjson or .json) and, for any
// other name, by the content: JSON Lines when it starts with "{", else
// tab-separated when the header line has a tab, else CSV. A CSV file
// whose header is separated by semicolons (as some spreadsheets save)
// is read with semicolons.
func Read(name string, data io.Reader, lim Limits) (Table, error) {
	ext := strings.ToLower(path.Ext(name))
	switch ext {
	case ".jsonl", ".ndjson", ".json":
		return ReadJSONL(data, lim)
	case ".tsv", ".tab":
		return readDelimited(data, lim, '\t')
	}
	// The look ahead only chooses; the reader chosen checks every byte,
	// these included. A read error here comes back to that reader.
	br := bufio.NewReaderSize(data, 64<<10)
	head, _ := br.Peek(64 << 10)
	head = bytes.TrimPrefix(head, bom)
	trimmed := bytes.TrimLeft(head, " \t\r\n")
	if ext != ".csv" && len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		return ReadJSONL(br, lim)
	}
	return readDelimited(br, lim, sniffDelimiter(head))
}

// ReadPasted reads text pasted into the dataset box: JSON Lines when it
// starts with "{", else CSV or tab-separated (what a spreadsheet copies)
// as the header line says.
func ReadPasted(text string, lim Limits) (Table, error) {
	return Read("", strings.NewReader(text), lim)
}

// sniffDelimiter picks the separator of the first non-blank line: a tab,
// a comma or a semicolon, in that order. A header holds only names,
// which contain none of them, so the first one present separates.
func sniffDelimiter(head []byte) byte {
	for len(head) > 0 {
		line := head
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		for _, d := range []byte{'\t', ',', ';'} {
			if bytes.IndexByte(line, d) >= 0 {
				return d
			}
		}
		break
	}
	return ','
}

// cleanValue stores line breaks as line feeds: CSV readers turn CR LF
// into LF, so every format does, and a value reads back as it was
// written.
func cleanValue(s string) string {
	if strings.IndexByte(s, '\r') < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// splitTags splits a tags cell at commas, semicolons and white space.
func splitTags(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return r == ',' || r == ';' || r == ' ' || r == '\t' || r == '\n' || r == '\r'
	})
}

// normalizeTags lowercases, sorts and deduplicates tags, as presets do,
// in tags' own array; msg says what is wrong with the first bad tag or
// the count.
func normalizeTags(tags []string) (out []string, msg string) {
	out = tags[:0]
	for _, t := range tags {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" {
			continue
		}
		if !isTag(t) {
			return nil, fmt.Sprintf("the tag %q is not 1 to %d of a-z, 0-9, - and _", t, MaxTagLen)
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, ""
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > MaxTags {
		return nil, fmt.Sprintf("a row has at most %d tags; this one has %d", MaxTags, len(out))
	}
	return out, ""
}

// checkName says what is wrong with a variable name, or "".
func checkName(name string) string {
	switch {
	case name == "":
		return "this column has no name; the header names every column"
	case isReserved(name):
		return fmt.Sprintf("%q is a special column here and cannot be a variable", name)
	case !isVariableName(name):
		return fmt.Sprintf("%q is not a variable name: use letters, digits and _, starting with a letter or _, at most 64 characters (such as user_name)", name)
	}
	return ""
}

func isReserved(name string) bool {
	return strings.EqualFold(name, "expected") || strings.EqualFold(name, "tags")
}

// sizeText says n bytes as a user reads a limit: "50 MB", "64 KB".
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return countText(int(n)) + " bytes"
}

// countText writes n with thousands separators: 100,000.
func countText(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// check refuses a table that a file could not carry back: a bad or
// repeated column name, a value for a variable that is not a column, a
// bad tag, a value that is not UTF-8.
func check(t Table) error {
	seen := map[string]string{}
	for _, c := range t.Columns {
		if msg := checkName(c); msg != "" {
			return fmt.Errorf("dataset: unable to write the table: %s", msg)
		}
		if prev, ok := seen[strings.ToLower(c)]; ok {
			return fmt.Errorf("dataset: unable to write the table: the columns %q and %q differ only by case", prev, c)
		}
		seen[strings.ToLower(c)] = c
	}
	for i, row := range t.Rows {
		for k, v := range row.Vars {
			if seen[strings.ToLower(k)] != k {
				return fmt.Errorf("dataset: unable to write the table: row %d has a value for %q, which is not a column", i+1, k)
			}
			if !isText(v) {
				return fmt.Errorf("dataset: unable to write the table: row %d: the value of %q is not UTF-8", i+1, k)
			}
		}
		if row.Expected != nil && !isText(*row.Expected) {
			return fmt.Errorf("dataset: unable to write the table: row %d: the expected answer is not UTF-8", i+1)
		}
		if _, msg := normalizeTags(slices.Clone(row.Tags)); msg != "" {
			return fmt.Errorf("dataset: unable to write the table: row %d: %s", i+1, msg)
		}
	}
	return nil
}

// plural says n things: "1 value", "3 values".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return countText(n) + " " + thing + "s"
}

// ordinal says n as a position: 1st, 2nd, 3rd, 11th, 22nd.
func ordinal(n int) string {
	suffix := "th"
	switch n % 10 {
	case 1:
		suffix = "st"
	case 2:
		suffix = "nd"
	case 3:
		suffix = "rd"
	}
	if n%100 >= 11 && n%100 <= 13 {
		suffix = "th"
	}
	return countText(n) + suffix
}
