package preset

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
)

// member is one field of a JSON object, its value as written.
type member struct {
	key   string
	value json.RawMessage
}

// members reads the fields of a JSON object in their order, values
// untouched; it fails when raw is not exactly one object.
func members(raw []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errNotObject
	}
	var out []member
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{kt.(string), v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errTrailing
	}
	return out, nil
}

var (
	errNotObject = errors.New("not a JSON object")
	errTrailing  = errors.New("more JSON after the object")
)

// object writes members back as a compact JSON object.
func object(ms []member) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(encodeString(m.key))
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return compact(b.Bytes())
}

// array writes elements back as a JSON array.
func array(elems []json.RawMessage) json.RawMessage {
	b := []byte{'['}
	for i, e := range elems {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e...)
	}
	return append(b, ']')
}

func compact(raw []byte) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw // only ever called on JSON this package has read
	}
	return b.Bytes()
}

// encodeString encodes s as JSON leaving <, > and & as they are, so that
// prompts stay readable in exports and raw views.
func encodeString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// stringValue decodes raw when it is a JSON string.
func stringValue(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}

// secretFields are body fields that could only hold a credential, by
// their name lowercased without "-" and "_". A RunSpec never needs one:
// keys live in the vault.
var secretFields = map[string]bool{
	"apikey": true, "xapikey": true, "authorization": true, "accesstoken": true,
	"bearertoken": true, "secret": true, "clientsecret": true, "password": true,
}

func isSecretField(key string) bool {
	k := strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(key))
	return secretFields[k]
}

// cleanBody drops the top-level fields Knobs does not keep from a body:
// "stream", which Knobs sets itself, and any credential-like field. It
// returns the compact body and the names of the fields dropped.
func cleanBody(ms []member) (json.RawMessage, []string) {
	var kept []member
	var dropped []string
	for _, m := range ms {
		if m.key == "stream" || isSecretField(m.key) {
			dropped = append(dropped, m.key)
			continue
		}
		kept = append(kept, m)
	}
	return object(kept), dropped
}
