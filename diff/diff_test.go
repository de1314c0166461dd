package diff

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"knobs/ordered"
)

// sides joins the ops back into the two texts.
func sides(ops []Op) (a, b string) {
	var sa, sb strings.Builder
	for _, op := range ops {
		if op.Kind != Insert {
			sa.WriteString(op.Text)
		}
		if op.Kind != Delete {
			sb.WriteString(op.Text)
		}
	}
	return sa.String(), sb.String()
}

func TestWords(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want []Op
	}{
		{"both empty", "", "", nil},
		{"same", "The cat sat.", "The cat sat.", []Op{{Equal, "The cat sat."}}},
		{"all new", "", "Hello there", []Op{{Insert, "Hello there"}}},
		{"all gone", "Hello there", "", []Op{{Delete, "Hello there"}}},
		{"one word replaced", "The quick brown fox", "The slow brown fox",
			[]Op{{Equal, "The "}, {Delete, "quick "}, {Insert, "slow "}, {Equal, "brown fox"}}},
		{"a word inserted", "Glaciers move slowly.", "Glaciers move very slowly.",
			[]Op{{Equal, "Glaciers move "}, {Insert, "very "}, {Equal, "slowly."}}},
		{"a word deleted", "a b c", "a c", []Op{{Equal, "a "}, {Delete, "b "}, {Equal, "c"}}},
		{"whole words, not letters", "cart", "care", []Op{{Delete, "cart"}, {Insert, "care"}}},
		{"punctuation is its own token", "Hi, you", "Hi! you",
			[]Op{{Equal, "Hi"}, {Delete, ", "}, {Insert, "! "}, {Equal, "you"}}},
		{"newlines kept", "one\ntwo\n\nthree", "one\nTWO\n\nthree",
			[]Op{{Equal, "one\n"}, {Delete, "two\n\n"}, {Insert, "TWO\n\n"}, {Equal, "three"}}},
		{"a short equality between changes joins them", "one two three four", "uno two tres four",
			[]Op{{Delete, "one two three "}, {Insert, "uno two tres "}, {Equal, "four"}}},
		{"a longer equality stays", "one two three four five", "uno two three four cinco",
			[]Op{{Delete, "one "}, {Insert, "uno "}, {Equal, "two three four "}, {Delete, "five"}, {Insert, "cinco"}}},
		{"non-ASCII words", "über café naïve", "über thé naïve",
			[]Op{{Equal, "über "}, {Delete, "café "}, {Insert, "thé "}, {Equal, "naïve"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Words(tt.a, tt.b)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Words(%q, %q) = %+v, want %+v", tt.a, tt.b, got, tt.want)
			}
			if a, b := sides(got); a != tt.a || b != tt.b {
				t.Errorf("the ops give back %q and %q", a, b)
			}
		})
	}
}

func TestWordsGiveBackBothTexts(t *testing.T) {
	// More distinct tokens than the surrogate range starts at, and text
	// that is not valid UTF-8.
	var a, b strings.Builder
	for i := range 60000 {
		a.WriteString("w")
		a.WriteString(strings.Repeat("x", i%7))
		a.WriteString(string(rune('a'+i%26)) + itoa(i) + " ")
		if i%5 != 0 {
			b.WriteString("w" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + itoa(i) + " ")
		}
	}
	a.WriteString("\xff end")
	b.WriteString("\xfe end")
	ops := Words(a.String(), b.String())
	if ga, gb := sides(ops); ga != a.String() || gb != b.String() {
		t.Fatalf("the ops do not give back the texts")
	}
	var del, ins int
	for _, op := range ops {
		switch op.Kind {
		case Delete:
			del++
		case Insert:
			ins++
		}
	}
	if del == 0 || ins == 0 {
		t.Errorf("%d deletions and %d insertions, want some of each", del, ins)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestTokens(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"  lead", []string{"  ", "lead"}},
		{"Hello, world!\n", []string{"Hello", ", ", "world", "!\n"}},
		{"don't stop_here", []string{"don't ", "stop_here"}},
		{"a\t\tb", []string{"a\t\t", "b"}},
	}
	for _, tt := range tests {
		if got := tokens(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("tokens(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParams(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want []Row
	}{
		{"nothing", `{}`, `null`, []Row{}},
		{"same and changed", `{"model":"m","temperature":0.2}`, `{"model":"m","temperature":0.9}`, []Row{
			{Key: "model", A: `"m"`, B: `"m"`, State: Same},
			{Key: "temperature", A: "0.2", B: "0.9", State: Changed},
		}},
		{"numbers by value", `{"max_tokens":100}`, `{"max_tokens":100.0}`, []Row{
			{Key: "max_tokens", A: "100", B: "100.0", State: Same},
		}},
		{"only on one side", `{"seed":7}`, `{"top_p":0.5}`, []Row{
			{Key: "seed", A: "7", State: OnlyA},
			{Key: "top_p", B: "0.5", State: OnlyB},
		}},
		{"nested objects are dotted", `{"response_format":{"type":"json_schema","json_schema":{"name":"a","strict":true}}}`,
			`{"response_format":{"type":"json_schema","json_schema":{"name":"b","strict":true}}}`, []Row{
				{Key: "response_format.json_schema.name", A: `"a"`, B: `"b"`, State: Changed},
				{Key: "response_format.json_schema.strict", A: "true", B: "true", State: Same},
				{Key: "response_format.type", A: `"json_schema"`, B: `"json_schema"`, State: Same},
			}},
		{"arrays whole, compacted", `{"stop":["a", "b"]}`, `{"stop":["a","c"]}`, []Row{
			{Key: "stop", A: `["a","b"]`, B: `["a","c"]`, State: Changed},
		}},
		{"an object against a value", `{"tool_choice":{"type":"function"}}`, `{"tool_choice":"auto"}`, []Row{
			{Key: "tool_choice", B: `"auto"`, State: OnlyB},
			{Key: "tool_choice.type", A: `"function"`, State: OnlyA},
		}},
		{"an empty object shows", `{"extra":{}}`, `{"extra":{}}`, []Row{
			{Key: "extra", A: "{}", B: "{}", State: Same},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Params(json.RawMessage(tt.a), json.RawMessage(tt.b))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Params = %+v\nwant     %+v", got, tt.want)
			}
		})
	}
}

func TestParamsStopFlatteningAtMaxDepth(t *testing.T) {
	// A stored body nested thousands deep (presets are saved as written)
	// is compared as one value below the depth limit instead of being
	// re-read once per level.
	deep := func(leaf string) json.RawMessage {
		return json.RawMessage(strings.Repeat(`{"a":`, 5000) + leaf + strings.Repeat("}", 5000))
	}
	rows := Params(deep("1"), deep("2"))
	if len(rows) != 1 || rows[0].State != Changed {
		t.Fatalf("rows = %d, want the one changed value", len(rows))
	}
	if parts := strings.Count(rows[0].Key, ".") + 1; parts != ordered.MaxDepth {
		t.Errorf("key has %d parts, want %d", parts, ordered.MaxDepth)
	}
}
