package dataset

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// ReadCSV reads a CSV file (comma-separated, header first) within lim.
// On any problem it returns an *Error and no table; a failure of r itself
// is returned wrapped.
func ReadCSV(r io.Reader, lim Limits) (Table, error) {
	return readDelimited(r, lim, ',')
}

// The kinds of a delimited file's columns.
const (
	isVariable = iota
	isExpected
	isTags
)

func readDelimited(r io.Reader, lim Limits, delim byte) (Table, error) {
	lim = lim.withDefaults()
	src := newSource(r, lim.MaxBytes, delim)
	cr := csv.NewReader(src)
	cr.Comma = rune(delim)
	cr.FieldsPerRecord = -1 // counted below, for a message naming both counts
	cr.ReuseRecord = true
	fail := func(err error) (Table, error) { return Table{}, readError(err, src) }

	header, err := cr.Read()
	if err == io.EOF {
		return Table{}, &Error{Message: "the file is empty; its first line must be the header, naming the columns"}
	}
	if err != nil {
		return fail(err)
	}
	names := make([]string, len(header))
	kinds := make([]int, len(header))
	var t Table
	seen := map[string]int{}
	for i, h := range header {
		line, col := cr.FieldPos(i)
		name := strings.TrimSpace(h)
		if j, ok := seen[strings.ToLower(name)]; ok && name != "" {
			return Table{}, errorAt(line, col, "the name %q is already the name of the %s column, %q (names are compared ignoring case)", name, ordinal(j+1), names[j])
		}
		seen[strings.ToLower(name)] = i
		names[i] = name
		switch {
		case strings.EqualFold(name, "expected"):
			kinds[i] = isExpected
		case strings.EqualFold(name, "tags"):
			kinds[i] = isTags
		default:
			if msg := checkName(name); msg != "" {
				if name == "" {
					msg = fmt.Sprintf("the %s column has no name; the header names every column", ordinal(i+1))
				}
				return Table{}, errorAt(line, col, "%s", msg)
			}
			if len(t.Columns) == MaxColumns {
				return Table{}, errorAt(line, col, "a dataset has at most %s variables; this is one more", countText(MaxColumns))
			}
			t.Columns = append(t.Columns, name)
		}
	}

	var expected []string
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail(err)
		}
		line, _ := cr.FieldPos(0)
		if len(t.Rows) == lim.MaxRows {
			return Table{}, errorAt(line, 1, "the file has more than %s rows, the most one dataset may have; split it into smaller files", countText(lim.MaxRows))
		}
		if len(rec) != len(names) {
			return Table{}, raggedError(cr, rec, names, delim)
		}
		if len(expected) == cap(expected) {
			// Expected answers point into a block of strings: one
			// allocation per 1,024 rows instead of one per row.
			expected = make([]string, 0, 1024)
		}
		row := Row{Vars: make(map[string]string, len(t.Columns))}
		for i, v := range rec {
			if len(v) > lim.MaxCell {
				line, col := cr.FieldPos(i)
				return Table{}, errorAt(line, col, "the value of %q is longer than %s, the most one value may be", names[i], sizeText(int64(lim.MaxCell)))
			}
			v = cleanValue(unprotect(v))
			switch kinds[i] {
			case isVariable:
				row.Vars[names[i]] = v
			case isExpected:
				if v != "" {
					expected = append(expected, v)
					row.Expected = &expected[len(expected)-1]
				}
			case isTags:
				tags, msg := normalizeTags(splitTags(v))
				if msg != "" {
					line, col := cr.FieldPos(i)
					return Table{}, errorAt(line, col, "%s", msg)
				}
				row.Tags = tags
			}
		}
		t.Rows = append(t.Rows, row)
	}
	if len(t.Rows) == 0 {
		return Table{}, &Error{Message: "the file has a header but no rows"}
	}
	return t, nil
}

// raggedError names a row whose count of values is not the header's.
func raggedError(cr *csv.Reader, rec, names []string, delim byte) *Error {
	if len(rec) > len(names) {
		line, col := cr.FieldPos(len(names))
		return errorAt(line, col, "this row has %s but the header names %s; this value has no column (a value holding a %s goes in double quotes)", plural(len(rec), "value"), plural(len(names), "column"), delimName(delim))
	}
	line, col := cr.FieldPos(len(rec) - 1)
	return errorAt(line, col, "this row has %s but the header names %s; the value for %q is missing after this one", plural(len(rec), "value"), plural(len(names), "column"), names[len(rec)])
}

// readError turns what encoding/csv or the source refused into an *Error.
func readError(err error, src *source) error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return fmt.Errorf("dataset: unable to read the file: %w", err)
	}
	switch {
	case errors.Is(pe.Err, csv.ErrBareQuote):
		return errorAt(pe.Line, pe.Column, `a quote inside a value that does not start with one; put the whole value in quotes and write each quote inside it twice: "say ""hi"""`)
	case errors.Is(pe.Err, csv.ErrQuote):
		if line, col, ok := src.unclosed(); ok {
			return errorAt(line, col, `this quote opens a value that is never closed; end the value with a quote, and write each quote inside it twice ("")`)
		}
		return errorAt(pe.Line, pe.Column, `this quote ends a quoted value but more text follows before the next %s; write each quote inside a quoted value twice ("")`, delimName(src.delim))
	}
	return errorAt(pe.Line, pe.Column, "%v", pe.Err)
}

func delimName(d byte) string {
	switch d {
	case '\t':
		return "tab"
	case ';':
		return "semicolon"
	}
	return "comma"
}

// formulaStart holds what a spreadsheet may read as the start of a
// formula, and the quote that protects it.
const formulaStart = "=+-@\t\r'"

// protect puts a ' before a value a spreadsheet could run as a formula
// (and before a value starting with ', so that unprotect is exact).
func protect(v string) string {
	if v != "" && strings.IndexByte(formulaStart, v[0]) >= 0 {
		return "'" + v
	}
	return v
}

// unprotect removes the ' that protect added.
func unprotect(v string) string {
	if len(v) >= 2 && v[0] == '\'' && strings.IndexByte(formulaStart, v[1]) >= 0 {
		return v[1:]
	}
	return v
}

// WriteCSV writes t as CSV for export: a UTF-8 byte order mark (so that
// spreadsheets read the text as UTF-8), the header (the variables, then
// "expected" and "tags"), one line per row, lines ended by CR LF. A value
// that could start a formula is protected with ' (see the package
// comment), which ReadCSV removes. A variable a row has no value for is
// written empty, so it reads back as an empty value; apart from that,
// ReadCSV(WriteCSV(t)) is t for every table a reader returns.
func WriteCSV(w io.Writer, t Table) error {
	if err := check(t); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	bw.Write(bom)
	record := append(append([]string{}, t.Columns...), "expected", "tags")
	writeRecord(bw, record)
	n := len(t.Columns)
	for _, row := range t.Rows {
		for i, c := range t.Columns {
			record[i] = protect(row.Vars[c])
		}
		record[n] = ""
		if row.Expected != nil {
			record[n] = protect(*row.Expected)
		}
		tags, _ := normalizeTags(slices.Clone(row.Tags))
		record[n+1] = protect(strings.Join(tags, ","))
		writeRecord(bw, record)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("dataset: unable to write the CSV file: %w", err)
	}
	return nil
}

// writeRecord writes one CSV line, quoting the values that need it.
// A bufio.Writer keeps its first error for Flush to return.
func writeRecord(bw *bufio.Writer, record []string) {
	for i, v := range record {
		if i > 0 {
			bw.WriteByte(',')
		}
		if !strings.ContainsAny(v, "\",\r\n") {
			bw.WriteString(v)
			continue
		}
		bw.WriteByte('"')
		bw.WriteString(strings.ReplaceAll(v, `"`, `""`))
		bw.WriteByte('"')
	}
	bw.WriteString("\r\n")
}

// SpreadsheetSafe is a value as Knobs writes it in any CSV file: a value
// a spreadsheet could run as a formula gets a ' in front, by the rule
// WriteCSV follows.
func SpreadsheetSafe(v string) string { return protect(v) }
