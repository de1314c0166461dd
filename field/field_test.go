package field

import (
	"errors"
	"testing"
)

func TestTheFirstMessageOfAFieldIsKept(t *testing.T) {
	e := Errors{}
	e.Add("temperature", "too hot")
	e.Add("temperature", "also wrong")
	e.Add("n", "at least 1")
	if e["temperature"] != "too hot" || len(e) != 2 {
		t.Errorf("errors %v, want the first message of each field", e)
	}
	if got, want := e.Error(), "invalid input: n: at least 1; temperature: too hot"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestNoErrorsIsANilError(t *testing.T) {
	var none Errors
	if err := none.Err(); err != nil {
		t.Errorf("empty errors gave %v, want nil", err)
	}
	some := Errors{"name": "Give it a name."}
	var fe Errors
	if err := some.Err(); !errors.As(err, &fe) || fe["name"] != "Give it a name." {
		t.Errorf("Err() = %v, want the errors", err)
	}
}
