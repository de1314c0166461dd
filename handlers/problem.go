package handlers

import "knobs/field"

// Problem refuses a request: its status, a message for the user, and
// what is wrong with each field when the input had fields. Handlers
// return it (or a fiber.Error when there are no fields) and the app's one
// error handler (web/app.go) answers it: as JSON, {"error", "fields",
// "panes"}, to a script, and as a page to a browser.
type Problem struct {
	Status  int
	Message string
	Fields  field.Errors // by field; JSON "fields"
	Panes   []PaneFields // a comparison's panes that are wrong; JSON "panes"
}

// PaneFields is what is wrong with one pane of a comparison.
type PaneFields struct {
	Index  int          `json:"index"`
	Fields field.Errors `json:"fields"`
}

func (p *Problem) Error() string {
	if !p.Fields.Empty() {
		return p.Message + " (" + p.Fields.Error() + ")"
	}
	return p.Message
}

// invalid refuses input whose fields are wrong (422): msg says what to do,
// fe what is wrong with each field.
func invalid(msg string, fe field.Errors) error {
	return &Problem{Status: 422, Message: msg, Fields: fe}
}
