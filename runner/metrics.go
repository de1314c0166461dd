package runner

import (
	"errors"
	"time"

	"knobs/llm"
	"knobs/metrics"
)

// metricsEnd is how the run ended, for the metrics: once per run, after
// finish, so nothing of it is counted per token.
func (run *Run) metricsEnd(status string, upstreamErr *llm.Error, cause error, end ending) metrics.RunEnd {
	e := metrics.RunEnd{Provider: run.provider, Model: run.modelName, KnownModel: knownModel(run.model), Status: status}
	if upstreamErr != nil {
		e.ErrorKind, e.ErrorStatus = string(upstreamErr.Kind), upstreamErr.Status
		// Knobs' own bounds share the kind "limit" for the user; the
		// metrics tell them apart.
		switch {
		case upstreamErr.Kind != KindLimit:
		case errors.Is(cause, ErrOutputLimit):
			e.ErrorKind = "output_limit"
		case errors.Is(cause, ErrMaxDuration):
			e.ErrorKind = "max_duration"
		}
	}
	run.mu.Lock()
	defer run.mu.Unlock()
	if !run.firstToken.IsZero() {
		e.FirstToken = run.firstToken.Sub(run.started)
	}
	if f := end.write.Finish; f != nil {
		e.Duration = f.At.Sub(run.started)
	} else {
		e.Duration = time.Since(run.started)
	}
	if u := run.result.Usage; u != nil {
		e.InputTokens, e.OutputTokens = u.PromptTokens, u.OutputTokens()
	}
	e.CostUSD = run.result.Metrics.CostUSD
	return e
}
