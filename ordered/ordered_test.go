package ordered

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestDecodeKeepsKeyOrderAtEveryDepth(t *testing.T) {
	in := `{"z":1,"a":{"y":[true,null,"s"],"b":2.50},"m":"x"}`
	v, err := Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"z":1,"a":{"y":[true,null,"s"],"b":2.50},"m":"x"}` {
		t.Errorf("round trip = %s, want the keys and numbers as written", out)
	}
	o := v.(*Object)
	if got, ok := o.Get("m"); !ok || got != "x" {
		t.Errorf("Get(m) = %v, %v", got, ok)
	}
	o.Set("a", "replaced")
	o.Set("new", 1)
	if len(o.Keys) != 4 || o.Keys[1] != "a" || o.Keys[3] != "new" {
		t.Errorf("keys after Set = %v: a replaced key keeps its place, a new one goes last", o.Keys)
	}
}

func TestDecodeRefusesWhatIsNotOneJSONValue(t *testing.T) {
	for _, in := range []string{`{"a":1} {"b":2}`, `{"a":`, ``, `{"a" 1}`} {
		if _, err := Decode([]byte(in)); err == nil {
			t.Errorf("Decode(%q) gave no error", in)
		}
	}
	var o Object
	if err := json.Unmarshal([]byte(`[1,2]`), &o); err == nil {
		t.Error("an array was read into an Object")
	}
}

func TestDecodeRefusesNestingPastMaxDepth(t *testing.T) {
	deep := func(n int) []byte {
		return []byte(strings.Repeat(`{"a":[`, n) + "1" + strings.Repeat("]}", n))
	}
	if _, err := Decode(deep(MaxDepth / 2)); err != nil {
		t.Errorf("Decode at exactly MaxDepth levels: %v", err)
	}
	// Far past what encoding/json's own limit lets through: the decoder
	// must refuse before it recurses, not after.
	for _, n := range []int{MaxDepth/2 + 1, 4000, 2_000_000} {
		_, err := Decode(deep(n))
		var de *DepthError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), "nested deeper than 64 levels") {
			t.Errorf("Decode of %d levels: %v, want a DepthError", 2*n, err)
		}
	}
}

func TestDepth(t *testing.T) {
	for in, want := range map[string]int{
		`1`:                           0,
		`"[[[{"`:                      0,
		`{"a":"\"[[["}`:               1,
		`[[],[[]],{"x":[{}]}]`:        4,
		`{"a":[1,{"b":"}}}"}],"c":2}`: 3,
		strings.Repeat("[", 100000):   100000, // not JSON: counted all the same
	} {
		if got := Depth([]byte(in)); got != want {
			t.Errorf("Depth(%.40q) = %d, want %d", in, got, want)
		}
	}
}
