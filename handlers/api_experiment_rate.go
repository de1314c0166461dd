package handlers

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"knobs/db"
	"knobs/field"
)

// RateCellInput is PUT /api/v1/experiments/{id}/cells/{cell}/rating.
type RateCellInput struct {
	ID   int64 `path:"id" minimum:"1" doc:"The experiment's id."`
	Cell int64 `path:"cell" minimum:"1" doc:"The cell's id."`
	Body struct {
		Thumbs *bool  `json:"thumbs,omitempty" doc:"Thumbs up (true) or down (false)."`
		Stars  int    `json:"stars,omitempty" minimum:"0" maximum:"5" doc:"1 to 5 stars; 0 for none."`
		Note   string `json:"note,omitempty" maxLength:"2000"`
	}
}

// RateAPICell saves the caller's rating of a cell of an experiment they
// see, replacing their earlier one; everyone's ratings are kept apart.
func (h *Handler) RateAPICell(ctx context.Context, in *RateCellInput) (*struct{}, error) {
	b := in.Body
	note := strings.TrimSpace(b.Note)
	if b.Thumbs == nil && b.Stars == 0 && note == "" {
		return nil, apiInvalid(field.Errors{"thumbs": "Give thumbs, stars or a note."})
	}
	if utf8.RuneCountInString(note) > 2000 {
		return nil, apiInvalid(field.Errors{"note": "A note is at most 2,000 characters."})
	}
	err := h.store.RateCell(ctx, apiUser(ctx).ID, in.ID, in.Cell, db.CellRating{Thumbs: b.Thumbs, Stars: b.Stars, Note: note})
	if errors.Is(err, db.ErrNotFound) {
		return nil, apiNotFound("cell")
	}
	return nil, err
}
