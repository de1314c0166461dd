package ordered

import (
	"encoding/json"
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
