package runner

import (
	"bytes"
	"encoding/json"
)

// Replay builds the frames of a run that has no recorded events (one
// interrupted by a restart) from its stored result: each choice's text
// whole, then the done event.
func Replay(status, result string) []byte {
	var r Result
	_ = json.Unmarshal([]byte(result), &r) // a broken checkpoint replays as empty
	run := &Run{changed: make(chan struct{})}
	run.mu.Lock()
	for _, ch := range r.Choices {
		if ch.Reasoning != "" {
			run.emit("reasoning", textData{ch.Index, ch.Reasoning})
		}
		if ch.Content != "" {
			run.emit("delta", textData{ch.Index, ch.Content})
		}
		for _, tc := range ch.ToolCalls {
			run.emit("tool_call", toolCallData{ch.Index, tc, tc.Arguments})
		}
	}
	if r.Error != nil {
		run.emit("error", errorData{r.Error, r.Error.RetryAfter.Seconds()})
	}
	done := doneData{Status: status, Usage: r.Usage, TimeInfo: r.TimeInfo, Metrics: r.Metrics}
	for _, ch := range r.Choices {
		done.FinishReasons = append(done.FinishReasons, ch.FinishReason)
	}
	run.emit("done", done)
	run.mu.Unlock()
	return bytes.Join(run.frames, nil)
}
