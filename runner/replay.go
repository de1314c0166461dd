package runner

import (
	"bytes"
	"encoding/json"

	"knobs/db"
	"knobs/llm"
	"knobs/llm/sim"
	"knobs/web/sse"
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
	run.emitEnding(status, r)
	run.mu.Unlock()
	return bytes.Join(run.frames, nil)
}

// emitEnding emits the frames that close a run rebuilt from its stored
// result: its error, if any, then done with status; the caller holds
// run.mu.
func (run *Run) emitEnding(status string, r Result) {
	if r.Error != nil {
		run.emit("error", errorData{r.Error, r.Error.RetryAfter.Seconds()})
	}
	done := doneData{Status: status, Usage: r.Usage, TimeInfo: r.TimeInfo, Metrics: r.Metrics}
	for _, ch := range r.Choices {
		done.FinishReasons = append(done.FinishReasons, ch.FinishReason)
	}
	run.emit("done", done)
}

// ResultFromFrames rebuilds a run's result from the frames it streamed,
// for a run that stopped with its process before it stored its result:
// each choice's text, reasoning, tool calls and logprobs, and the last
// metrics it sent. Frames that do not parse are skipped. The provider
// sends its usage last, so the run's is estimated as a stopped run's is
// (estimateUsage): the prompt of the request it sent, a token per output
// frame, and costed at the price it started with.
func ResultFromFrames(stopped db.StoppedRun) string {
	frames := stopped.Frames
	var r Result
	var chunks, reasoning int
	var sent llm.RawRequest // the request as sent, from its frame
	texts := map[int]*choiceText{}
	text := func(i int) *choiceText {
		if texts[i] == nil {
			texts[i] = &choiceText{}
			r.choice(i)
		}
		return texts[i]
	}
	for rest := frames; len(rest) > 0; {
		var f []byte
		if i := bytes.Index(rest, []byte("\n\n")); i >= 0 {
			f, rest = rest[:i], rest[i+2:]
		} else {
			f, rest = rest, nil
		}
		event, data := sse.FrameParts(f)
		switch string(event) {
		case "delta", "reasoning", "tool_call":
			chunks++
			if string(event) == "reasoning" {
				reasoning++
			}
		}
		switch string(event) {
		case "request":
			_ = json.Unmarshal(data, &sent) // without it the prompt is read from the spec
		case "delta", "reasoning":
			var d textData
			if json.Unmarshal(data, &d) != nil || d.Choice < 0 || d.Choice > maxReplayChoice {
				continue
			}
			if string(event) == "delta" {
				text(d.Choice).content.WriteString(d.Text)
			} else {
				text(d.Choice).reasoning.WriteString(d.Text)
			}
		case "tool_call":
			var d toolCallData
			if json.Unmarshal(data, &d) != nil || d.Choice < 0 || d.Choice > maxReplayChoice {
				continue
			}
			text(d.Choice)
			r.choice(d.Choice).setToolCall(d.Call)
		case "logprobs":
			var d logprobsData
			if json.Unmarshal(data, &d) != nil || d.Choice < 0 || d.Choice > maxReplayChoice {
				continue
			}
			text(d.Choice)
			ch := r.choice(d.Choice)
			ch.Logprobs = append(ch.Logprobs, d.Tokens...)
		case "metrics":
			var m Metrics
			if json.Unmarshal(data, &m) == nil {
				r.Metrics = m
			}
		}
	}
	for i, t := range texts {
		ch := r.choice(i)
		ch.Content, ch.Reasoning = t.content.String(), t.reasoning.String()
	}
	if p := stopped.Price; p != nil {
		r.Price = &Price{Input: p.Input, Output: p.Output, CachedInput: p.CachedInput, Reasoning: p.Reasoning}
	}
	if chunks > 0 {
		body := []byte(sent.Body)
		if len(body) == 0 {
			var spec llm.RunSpec
			_ = json.Unmarshal([]byte(stopped.Spec), &spec) // a spec that does not parse has no prompt to count
			body = spec.Body
		}
		prompt := sim.EstimatePromptTokens(llm.Endpoint(stopped.Endpoint), body)
		r.Usage = estimatedUsage(prompt, chunks, reasoning)
		r.Metrics.Tokens = r.Usage.OutputTokens()
		r.Metrics.CostUSD = cost(r.Usage, r.Price)
	}
	b, err := json.Marshal(r)
	if err != nil {
		return "{}"
	}
	return string(b)
}

// maxReplayChoice bounds the choice indexes a rebuild accepts: frames the
// runner wrote never go past what a request may ask for.
const maxReplayChoice = 128

// Ending returns the frames that close a stored stream which has none
// (its process stopped before it ended): the error, if the result has
// one, then done with status, numbered from next.
func Ending(status, result string, next int) []byte {
	var r Result
	_ = json.Unmarshal([]byte(result), &r)
	run := &Run{changed: make(chan struct{}), frames: make([][]byte, next-1)}
	run.mu.Lock()
	defer run.mu.Unlock()
	run.emitEnding(status, r)
	return bytes.Join(run.frames[next-1:], nil)
}
