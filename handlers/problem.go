package handlers

import "knobs/field"

// Problem refuses a request: its status, a message for the user, and
// what is wrong with each field when the input had fields. Handlers
// return it (or a fiber.Error when there are no fields) and the app's one
// error handler (web/app.go) answers it: as JSON, {"error", "fields",
// "panes"}, to a script, and as a page to a browser.
//
// It is also the API's error (huma's NewError makes one, see web/api.go),
// so the OpenAPI document describes this shape.
type Problem struct {
	Status  int          `json:"-"`
	Message string       `json:"error" doc:"What went wrong, for the user."`
	Fields  field.Errors `json:"fields,omitempty" doc:"What is wrong with each field of the input, by the field's name."`
	Panes   []PaneFields `json:"panes,omitempty" doc:"A comparison's panes that are wrong."`
	// Budget is the monthly cap that refused a run (402).
	Budget *BudgetRefusal `json:"budget,omitempty" doc:"The monthly cap that refused a run (402): which, its limit, what was spent and when it resets."`
}

// PaneFields is what is wrong with one pane of a comparison.
type PaneFields struct {
	Index  int          `json:"index"`
	Fields field.Errors `json:"fields"`
}

// GetStatus is the answer's HTTP status (huma.StatusError).
func (p *Problem) GetStatus() int { return p.Status }

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
