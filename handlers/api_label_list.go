package handlers

import (
	"context"
	"time"
)

// ListLabelsInput is GET /api/v1/presets/{id}/labels.
type ListLabelsInput struct {
	ID int64 `path:"id" minimum:"1" doc:"The preset's id."`
}

// LabelMoveItem is one move of a label, as the history lists it.
type LabelMoveItem struct {
	Label     string    `json:"label"`
	From      *int      `json:"from" doc:"The version it pointed at; null when the move made the label."`
	To        *int      `json:"to" doc:"The version it points at; null when the move removed the label."`
	Protected bool      `json:"protected" doc:"Whether the label was protected after the move."`
	By        string    `json:"by" doc:"Who moved it; empty once that account is removed."`
	At        time.Time `json:"at"`
}

// LabelsAnswer is a preset's labels and their history.
type LabelsAnswer struct {
	Labels  []LabelItem     `json:"labels" nullable:"false"`
	History []LabelMoveItem `json:"history" nullable:"false" doc:"The latest 200 moves, newest first."`
}

// ListLabelsOutput is the answer to GET /api/v1/presets/{id}/labels.
type ListLabelsOutput struct {
	Body LabelsAnswer
}

// labelHistoryMax bounds the moves a label history lists.
const labelHistoryMax = 200

// ListAPILabels answers the labels of a preset the caller sees and the
// history of their moves.
func (h *Handler) ListAPILabels(ctx context.Context, in *ListLabelsInput) (*ListLabelsOutput, error) {
	u := apiUser(ctx)
	ls, err := h.store.PresetLabels(ctx, u.ID, in.ID)
	if err != nil {
		return nil, presetProblem(err)
	}
	moves, err := h.store.LabelMoves(ctx, u.ID, in.ID, labelHistoryMax)
	if err != nil {
		return nil, presetProblem(err)
	}
	out := LabelsAnswer{Labels: labelItems(ls), History: make([]LabelMoveItem, 0, len(moves))}
	for _, m := range moves {
		item := LabelMoveItem{Label: m.Label, Protected: m.Protected, By: m.By, At: m.At}
		if m.From != 0 {
			item.From = &m.From
		}
		if m.To != 0 {
			item.To = &m.To
		}
		out.History = append(out.History, item)
	}
	return &ListLabelsOutput{Body: out}, nil
}
