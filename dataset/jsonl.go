package dataset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// ReadJSONL reads a JSON Lines file (one object per line) within lim. On
// any problem it returns an *Error and no table; a failure of r itself is
// returned wrapped.
func ReadJSONL(r io.Reader, lim Limits) (Table, error) {
	lim = lim.withDefaults()
	br := bufio.NewReaderSize(newSource(r, lim.MaxBytes, 0), 64<<10)
	p := jsonlReader{lim: lim, columns: map[string]string{}}
	var buf []byte
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A long line: the size limit bounds it.
			buf = append(buf[:0], line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				buf = append(buf, line...)
			}
			line = buf
		}
		if err != nil && err != io.EOF {
			var e *Error
			if errors.As(err, &e) {
				return Table{}, e
			}
			return Table{}, fmt.Errorf("dataset: unable to read the file: %w", err)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if len(p.t.Rows) == lim.MaxRows {
				return Table{}, errorAt(lineNo, 1, "the file has more than %s rows, the most one dataset may have; split it into smaller files", countText(lim.MaxRows))
			}
			row, e := p.row(bytes.TrimRight(line, "\r\n"), lineNo)
			if e != nil {
				return Table{}, e
			}
			p.t.Rows = append(p.t.Rows, row)
		}
		if err == io.EOF {
			break
		}
	}
	if len(p.t.Rows) == 0 {
		return Table{}, &Error{Message: "the file has no rows; a JSON Lines file has one JSON object per line"}
	}
	return p.t, nil
}

type jsonlReader struct {
	lim     Limits
	t       Table
	columns map[string]string // lowercased name → the column's name
}

// member is one key of a JSON object and its value, with their columns.
type member struct {
	key            string
	keyCol, valCol int
	raw            []byte
}

// row reads one line's object.
func (p *jsonlReader) row(line []byte, lineNo int) (Row, *Error) {
	start := len(line) - len(bytes.TrimLeft(line, " \t"))
	switch line[start] {
	case '{':
	case '[':
		return Row{}, errorAt(lineNo, start+1, "a JSON array is not JSON Lines: write one object per line")
	default:
		return Row{}, errorAt(lineNo, start+1, "each line must be one JSON object, starting with {")
	}
	members, end, e := readObject(line[start:], start, lineNo)
	if e != nil {
		return Row{}, e
	}
	if rest := bytes.TrimSpace(line[start+end:]); len(rest) > 0 {
		return Row{}, errorAt(lineNo, len(line)-len(bytes.TrimLeft(line[start+end:], " \t"))+1, "more text follows the JSON object; a line holds one object")
	}

	row := Row{Vars: map[string]string{}}
	var vars []member
	nested := false
	for _, m := range members {
		if strings.EqualFold(m.key, "vars") && m.raw[0] == '{' {
			nested = true
			if vars, _, e = readObject(m.raw, m.valCol-1, lineNo); e != nil {
				return Row{}, e
			}
		}
	}
	special := map[string]bool{}
	for _, m := range members {
		if lower := strings.ToLower(m.key); isReserved(lower) || (nested && lower == "vars") {
			if special[lower] {
				return Row{}, errorAt(lineNo, m.keyCol, "the key %q appears twice in this object (these keys are compared ignoring case)", m.key)
			}
			special[lower] = true
		}
		switch {
		case strings.EqualFold(m.key, "expected"):
			text, ok, e := p.text(m, lineNo, "the expected answer")
			if e != nil {
				return Row{}, e
			}
			if ok && text != "" {
				row.Expected = &text
			}
		case strings.EqualFold(m.key, "tags"):
			if row.Tags, e = tagsValue(m, lineNo); e != nil {
				return Row{}, e
			}
		case nested && strings.EqualFold(m.key, "vars"):
		case nested:
			return Row{}, errorAt(lineNo, m.keyCol, `the key %q is not known here: beside "vars", a line may have only "expected" and "tags"`, m.key)
		default:
			vars = append(vars, m)
		}
	}
	for _, m := range vars {
		if e := p.variable(row.Vars, m, lineNo); e != nil {
			return Row{}, e
		}
	}
	return row, nil
}

// variable checks one variable's name and value into vars.
func (p *jsonlReader) variable(vars map[string]string, m member, lineNo int) *Error {
	if msg := checkName(m.key); msg != "" {
		return errorAt(lineNo, m.keyCol, "%s", msg)
	}
	lower := strings.ToLower(m.key)
	switch col, ok := p.columns[lower]; {
	case ok && col != m.key:
		return errorAt(lineNo, m.keyCol, "the variable %q differs from the column %q only by case; names are compared ignoring case", m.key, col)
	case !ok:
		if len(p.t.Columns) == MaxColumns {
			return errorAt(lineNo, m.keyCol, "a dataset has at most %s variables; this is one more", countText(MaxColumns))
		}
		p.columns[lower] = m.key
		p.t.Columns = append(p.t.Columns, m.key)
	}
	text, ok, e := p.text(m, lineNo, fmt.Sprintf("the value of %q", m.key))
	if e != nil {
		return e
	}
	if ok {
		vars[m.key] = text
	}
	return nil
}

// text reads a value as text: a string as it is, a number or true/false
// as its JSON text; ok is false for null.
func (p *jsonlReader) text(m member, lineNo int, what string) (text string, ok bool, e *Error) {
	switch m.raw[0] {
	case 'n':
		return "", false, nil
	case '{':
		return "", false, errorAt(lineNo, m.valCol, "%s is an object; it must be text (a string, a number or true/false)", what)
	case '[':
		return "", false, errorAt(lineNo, m.valCol, "%s is a list; it must be text (a string, a number or true/false)", what)
	case '"':
		if err := json.Unmarshal(m.raw, &text); err != nil {
			return "", false, errorAt(lineNo, m.valCol, "%s is not a valid JSON string", what)
		}
	default:
		text = string(m.raw)
	}
	if len(text) > p.lim.MaxCell {
		return "", false, errorAt(lineNo, m.valCol, "%s is longer than %s, the most one value may be", what, sizeText(int64(p.lim.MaxCell)))
	}
	return cleanValue(text), true, nil
}

// tagsValue reads "tags": a list of strings or one string to split.
func tagsValue(m member, lineNo int) ([]string, *Error) {
	var tags []string
	switch m.raw[0] {
	case 'n':
		return nil, nil
	case '"':
		var s string
		if err := json.Unmarshal(m.raw, &s); err != nil {
			return nil, errorAt(lineNo, m.valCol, "the tags are not a valid JSON string")
		}
		tags = splitTags(s)
	case '[':
		if err := json.Unmarshal(m.raw, &tags); err != nil {
			return nil, errorAt(lineNo, m.valCol, `"tags" must be a list of strings, such as ["math", "easy"]`)
		}
	default:
		return nil, errorAt(lineNo, m.valCol, `"tags" must be a list of strings, such as ["math", "easy"]`)
	}
	tags, msg := normalizeTags(tags)
	if msg != "" {
		return nil, errorAt(lineNo, m.valCol, "%s", msg)
	}
	return tags, nil
}

// readObject reads the JSON object at the start of data, which sits at
// byte base of its line, and returns its members in order and where the
// object ends in data.
func readObject(data []byte, base, lineNo int) ([]member, int, *Error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	// The decoder's error offsets differ between its methods; a second
	// look with Unmarshal names the first bad byte the same way each time.
	syntax := func(err error) *Error {
		var raw json.RawMessage
		var se *json.SyntaxError
		if !errors.As(json.Unmarshal(data, &raw), &se) {
			return errorAt(lineNo, base+1, "this line is not valid JSON: %v", err)
		}
		if strings.Contains(se.Error(), "unexpected end") {
			return errorAt(lineNo, base+len(data)+1, "the line ends before its JSON object is closed; a JSON Lines file has one whole object per line")
		}
		return errorAt(lineNo, base+int(se.Offset), "this line is not valid JSON: %s", strings.TrimPrefix(se.Error(), "json: "))
	}
	if _, err := dec.Token(); err != nil { // the "{" the caller saw
		return nil, 0, syntax(err)
	}
	var members []member
	seen := map[string]bool{}
	for dec.More() {
		keyAt := skipSeparators(data, int(dec.InputOffset()))
		tok, err := dec.Token()
		if err != nil {
			return nil, 0, syntax(err)
		}
		key, _ := tok.(string)
		if seen[key] {
			return nil, 0, errorAt(lineNo, base+keyAt+1, "the key %q appears twice in this object", key)
		}
		seen[key] = true
		valAt := skipSeparators(data, int(dec.InputOffset()))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, 0, syntax(err)
		}
		members = append(members, member{key: key, keyCol: base + keyAt + 1, valCol: base + valAt + 1, raw: raw})
	}
	if _, err := dec.Token(); err != nil { // "}"
		return nil, 0, syntax(err)
	}
	return members, int(dec.InputOffset()), nil
}

// skipSeparators returns the offset of the next byte of data at or after
// off that is not white space, a comma or a colon.
func skipSeparators(data []byte, off int) int {
	for off < len(data) {
		switch data[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
		default:
			return off
		}
	}
	return off
}

// WriteJSONL writes t as JSON Lines for export, one row a line:
// {"vars":{…},"expected":…,"tags":[…]}, every column in the order of
// t.Columns and null for a variable the row has no value for, so that
// ReadJSONL(WriteJSONL(t)) is t for every table a reader returns.
func WriteJSONL(w io.Writer, t Table) error {
	if err := check(t); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	quote := func(s string) {
		buf.Reset()
		enc.Encode(s) // a string always encodes
		bw.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	}
	for _, row := range t.Rows {
		bw.WriteString(`{"vars":{`)
		for i, c := range t.Columns {
			if i > 0 {
				bw.WriteByte(',')
			}
			quote(c)
			bw.WriteByte(':')
			if v, ok := row.Vars[c]; ok {
				quote(v)
			} else {
				bw.WriteString("null")
			}
		}
		bw.WriteByte('}')
		if row.Expected != nil {
			bw.WriteString(`,"expected":`)
			quote(*row.Expected)
		}
		if tags, _ := normalizeTags(slices.Clone(row.Tags)); len(tags) > 0 {
			bw.WriteString(`,"tags":[`)
			for i, tag := range tags {
				if i > 0 {
					bw.WriteByte(',')
				}
				quote(tag)
			}
			bw.WriteByte(']')
		}
		bw.WriteString("}\n")
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("dataset: unable to write the JSON Lines file: %w", err)
	}
	return nil
}
