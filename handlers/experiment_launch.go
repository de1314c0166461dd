package handlers

import (
	"context"

	"knobs/experiment"
	"knobs/field"
)

// launchCell starts one run of an experiment (a cell or a judge's
// grading) as user: checked as any run is, budgets included (a spent
// one is a refusal the cell ends with), in a shared slot, so that an
// experiment's concurrency is bounded by Knobs' total and its own
// setting but leaves its owner free to run by hand meanwhile.
func (h *Handler) launchCell(ctx context.Context, user int64, s experiment.Setup) (experiment.Started, field.Errors, error) {
	p, fields, err := h.prepareRun(ctx, user, playgroundState{RunSpec: s.Spec, Variables: s.Variables, PresetID: s.PresetID})
	if err != nil || len(fields) > 0 {
		return experiment.Started{}, fields, err
	}
	p.experiment, p.arena = s.Experiment, s.Arena
	hold, _, err := h.holdBudget(ctx, user, []preparedRun{p})
	if err != nil {
		return experiment.Started{}, nil, err
	}
	defer hold.release()
	slots, err := h.runner.ReserveShared(user, 1)
	if err != nil {
		return experiment.Started{}, nil, err
	}
	defer slots.Release()
	run, err := h.launchRun(ctx, user, p, 0, 0, slots, hold)
	if err != nil {
		return experiment.Started{}, nil, err
	}
	return experiment.Started{Run: run, PricesKnown: p.model.Priced(),
		Stop: func() { h.runner.Cancel(run.ID, user) }}, nil, nil
}
