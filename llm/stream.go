package llm

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"knobs/llm/sse"
)

// MaxRawResponse caps what a Stream keeps of the raw answer for the raw
// view, so that memory stays flat on endless streams.
const MaxRawResponse = 4 << 20

// maxJSONBody bounds a 200 answer that is JSON instead of a stream.
const maxJSONBody = 8 << 20

// rawCapNote ends the raw view of an answer longer than MaxRawResponse.
const rawCapNote = "\n[knobs: raw capture stopped at 4 MiB; the answer went on]\n"

// Stream is one streamed answer. Next, Event and the accessors belong to
// the goroutine that reads the stream; Close may be called from any
// goroutine, and must be called once the stream is no longer wanted.
//
// A 200 answer that is a complete non-streamed completion (JSON instead of
// an event stream, as some servers send when they ignore "stream") is
// turned into the same events, so the run still shows its answer; any
// other 200 that is not a stream ends with ErrBadResponse.
type Stream struct {
	key      string // only to redact it from what upstream echoes back
	redact   bool   // the key is long enough to be looked for (redactable)
	dialect  wireDialect
	endpoint Endpoint
	timeout  time.Duration

	parent    context.Context
	ctx       context.Context
	cancel    context.CancelFunc
	idle      time.Duration // the longest silence allowed once bytes flow
	timer     *time.Timer
	timedOut  atomic.Bool
	midStream atomic.Bool // bytes have arrived: the timer bounds silence
	closed    atomic.Bool
	release   sync.Once

	req     RawRequest
	started time.Time
	resp    *http.Response
	body    *captureBody
	sse     *sse.Reader
	checked bool // the body's first bytes were looked at
	foreign bool // the answer is a page or text, not the provider's JSON or stream

	ev    Event
	queue []Event
	qhead int
	done  bool
	err   *Error

	sawDone  bool
	chunks   int
	ttft     time.Duration
	choices  []*choiceState // by choice index, nil where none was seen
	usage    *Usage
	timeInfo *TimeInfo
	model    string
	id       string
	meta     Response // as last told to the reader in an EventResponse
	metaSent bool
	streamed bool   // the answer is an event stream, not one JSON body
	noted    string // the last note added to meta.Notes, to say it once
	scratch  Chunk  // reused by every chunk: nothing of it outlives add
	fast     fastChunk
}

// choiceState is what is assembled for one choice while streaming.
type choiceState struct {
	finish string
	tools  []*toolAcc
	think  *thinkSplitter
	// Key filters of the content and the reasoning (redact.go).
	content, reasoning keyFilter
}

// toolAcc assembles one tool call; a strings.Builder lets each event
// carry the arguments so far without copying them again.
type toolAcc struct {
	call ToolCall
	args strings.Builder
	keys keyFilter // of the arguments
}

// maxChoices bounds the choice index a server can make us track.
const maxChoices = 1024

func newStream(ctx context.Context, c *Client, e Endpoint) *Stream {
	s := &Stream{key: c.cfg.Key, redact: redactable(c.cfg.Key), dialect: c.dialect, endpoint: e, timeout: c.firstByte, idle: c.idle, parent: ctx, started: time.Now(), streamed: true}
	s.ctx, s.cancel = context.WithCancel(ctx)
	return s
}

func (s *Stream) firstByteTimeout() {
	s.timedOut.Store(true)
	s.cancel()
}

// start takes over the response once its headers are in.
func (s *Stream) start(resp *http.Response) {
	s.resp = resp
	s.body = &captureBody{r: resp.Body, onRead: s.heardFrom}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		s.fail(redirectError(resp.StatusCode, resp.Header))
		return
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, err := readCapped(s.body, maxErrorBody)
		if err != nil && len(b) == 0 {
			s.fail(s.transportError(err, true))
			return
		}
		if _, ok := parseErrorBody(b); !ok || isHTML(resp.Header, b) {
			s.foreign = true
		}
		s.fail(classifyResponse(resp.StatusCode, resp.Header, b, time.Now()))
		return
	}
	s.sse = sse.NewReader(s.body)
}

func (s *Stream) stopTimer() {
	if s.timer != nil {
		s.timer.Stop()
	}
}

// heardFrom is called on every read that brought bytes. The first byte
// ends the wait for an answer: from then on the timer bounds silence, so
// a provider that goes quiet mid-stream cannot hold a run open forever.
// Once the event stream is being read only data events count (see
// heardData): a server that sends nothing but keep-alive comments is
// stalled, however busy its connection looks. Before that (an error body,
// a JSON answer) every read counts.
func (s *Stream) heardFrom() {
	if !s.midStream.Swap(true) || s.sse == nil {
		s.rearm()
	}
}

// heardData rearms the timer when a data event arrives.
func (s *Stream) heardData() { s.rearm() }

func (s *Stream) rearm() {
	if s.timer != nil && !s.closed.Load() {
		s.timer.Reset(s.idle)
	}
}

// Next advances to the next event and reports whether there is one. After
// it returns false, Err says whether the stream ended cleanly.
func (s *Stream) Next() bool {
	for {
		if s.qhead < len(s.queue) {
			s.ev = s.queue[s.qhead]
			s.queue[s.qhead] = Event{}
			s.qhead++
			return true
		}
		s.queue, s.qhead = s.queue[:0], 0
		if s.done {
			return false
		}
		s.step()
	}
}

// Event returns the event Next advanced to.
func (s *Stream) Event() Event { return s.ev }

// Err returns nil when the stream finished cleanly (or is still going),
// and otherwise the classified failure, including a request that failed
// before any streaming.
func (s *Stream) Err() *Error { return s.err }

// Close ends the upstream request at once. It may be called from any
// goroutine and more than once.
func (s *Stream) Close() error {
	s.closed.Store(true)
	s.end()
	return nil
}

// end releases everything the request holds.
func (s *Stream) end() {
	s.release.Do(func() {
		s.stopTimer()
		s.cancel()
		if s.resp != nil {
			s.resp.Body.Close()
		}
	})
}

// fail ends the stream with err.
func (s *Stream) fail(err *Error) {
	s.flushHeld()
	s.sendMeta(time.Since(s.started), true)
	s.done = true
	redactError(err, s.key)
	s.err = err
	s.end()
}

// redactError removes key from every text of err, in case the provider
// echoed it back.
func redactError(err *Error, key string) {
	if !redactable(key) {
		return
	}
	for _, f := range []*string{&err.Message, &err.Code, &err.Type, &err.Field} {
		*f = strings.ReplaceAll(*f, key, "***")
	}
}

// redactable says whether a key is long enough to be searched for in what
// the provider sent without hitting ordinary text.
func redactable(key string) bool { return len(key) >= 8 }

// finish ends the stream cleanly.
func (s *Stream) finish() {
	s.flushHeld()
	s.sendMeta(time.Since(s.started), true)
	s.done = true
	s.end()
}

func (s *Stream) transportError(err error, midStream bool) *Error {
	if s.timedOut.Load() && s.midStream.Load() && !s.closed.Load() {
		return &Error{Kind: ErrTimeout, Message: fmt.Sprintf("the provider went silent for %s in the middle of the answer (no data; keep-alive comments do not count); what arrived is kept", s.idle)}
	}
	return transportError(err, s.parent, s.closed.Load(), s.timedOut.Load(), s.timeout, midStream)
}

// step reads one SSE event and queues what it carries, or ends the stream.
func (s *Stream) step() {
	if !s.checked {
		s.checked = true
		if !s.checkBody() {
			return
		}
	}
	e, err := s.sse.Next()
	if err != nil {
		switch {
		case err == io.EOF:
			s.endOfStream()
		case errors.Is(err, sse.ErrTooLarge):
			s.fail(&Error{Kind: ErrBadResponse, Message: "a stream event was larger than 16 MiB"})
		default:
			s.fail(s.transportError(err, true))
		}
		return
	}
	at := time.Since(s.started)
	data := bytes.TrimSpace(e.Data)
	switch {
	case e.Event == "error":
		s.fail(streamError(data, s.resp.Header, time.Now()))
		return
	case len(data) == 0 || e.Event == "ping":
		return // a keep-alive: the timer runs on
	}
	s.heardData()
	switch {
	case string(data) == "[DONE]":
		s.sawDone = true
		s.finish()
		return
	case data[0] != '{':
		s.fail(&Error{Kind: ErrBadResponse, Message: "the stream sent data that is not JSON: " + truncate(string(data), 200)})
		return
	}
	s.chunks++
	c := &s.scratch
	// The common text delta takes the fast path (chunkfast.go); anything
	// it does not handle with certainty, the full decoder.
	if !s.fast.decode(data, c) {
		note, err := decodeChunk(data, c)
		if err != nil {
			s.fail(err)
			return
		}
		s.note(note)
	}
	if hasError(c.Error) {
		s.fail(streamError(data, s.resp.Header, time.Now()))
		return
	}
	s.add(c, at)
}

// decodeChunk is the full decoder of a chunk, for every chunk the fast
// path leaves, and for a whole JSON answer. json v2 decodes a chunk in
// half the time of encoding/json with a quarter of the allocations. It
// stops at a field of an unexpected type, so encoding/json, which loses
// only that field, gets a second go and words the error when the JSON is
// broken. note names the field that was lost, "" when none was.
func decodeChunk(data []byte, c *Chunk) (note string, err *Error) {
	*c = Chunk{}
	if err := jsonv2.Unmarshal(data, c); err != nil {
		*c = Chunk{}
		if err := json.Unmarshal(data, c); err != nil {
			var te *json.UnmarshalTypeError
			if !errors.As(err, &te) {
				return "", &Error{Kind: ErrBadResponse, Message: fmt.Sprintf("a stream chunk is not valid JSON (%v): %s", err, truncate(string(data), 200))}
			}
			return fmt.Sprintf("%s: expected %s, got a JSON %s; left out", cmp.Or(te.Field, "a value"), te.Type, te.Value), nil
		}
	}
	return "", nil
}

// maxNotes bounds the notes kept of one answer.
const maxNotes = 16

// note keeps a note on what of the answer could not be read, once.
func (s *Stream) note(n string) {
	if n == "" || n == s.noted || len(s.meta.Notes) >= maxNotes || slices.Contains(s.meta.Notes, n) {
		return
	}
	s.noted = n
	s.meta.Notes = append(slices.Clip(s.meta.Notes), s.redacted(n))
	s.metaSent = false
}

func hasError(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && string(raw) != "null" && string(raw) != "{}" && string(raw) != `""`
}

// checkBody looks at the answer's first bytes when it is not declared an
// event stream, and handles JSON and HTML answers; it reports whether
// streaming goes on.
func (s *Stream) checkBody() bool {
	ct := strings.ToLower(s.resp.Header.Get("Content-Type"))
	if strings.Contains(ct, "text/event-stream") {
		return true
	}
	br := bufio.NewReaderSize(s.body, 4096)
	first := byte(0)
	for i := 1; i <= 4096; i++ {
		b, err := br.Peek(i)
		if len(b) < i {
			if err == io.EOF {
				break
			}
			s.fail(s.transportError(err, true))
			return false
		}
		if c := b[i-1]; c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			first = c
			break
		}
	}
	switch {
	case first == '{' || first == '[':
		s.jsonAnswer(br)
		return false
	case first == '<':
		b, _ := readCapped(br, maxErrorBody)
		s.foreign = true
		title := htmlTitle(b)
		if title == "" {
			title = "no title"
		}
		s.fail(&Error{Kind: ErrBadResponse, Status: s.resp.StatusCode, Message: "expected an event stream, got an HTML page: " + title})
		return false
	case first == 0 || first == ':' || first == 'd' || first == 'e' || first == 'i' || first == 'r':
		// An event stream under another content type (an SSE comment or
		// field comes first), or an empty body, which the stream reader
		// reports as truncated.
	default:
		b, _ := readCapped(br, maxErrorBody)
		s.foreign = true
		s.fail(&Error{Kind: ErrBadResponse, Status: s.resp.StatusCode, Message: "expected an event stream, got " + cmp.Or(ct, "no content type") + ": " + truncate(strings.TrimSpace(string(b)), 200)})
		return false
	}
	s.sse = sse.NewReader(br)
	return true
}

// jsonAnswer handles a 200 whose body is JSON: a complete completion
// becomes events, an error object an ErrStream, anything else
// ErrBadResponse.
func (s *Stream) jsonAnswer(r io.Reader) {
	b, err := readCapped(r, maxJSONBody)
	if err != nil {
		s.fail(s.transportError(err, true))
		return
	}
	at := time.Since(s.started)
	var c Chunk
	// Field by field, as the stream is read: one field of an unexpected
	// type (a float "created") costs that field, noted, not the answer.
	if note, err := decodeChunk(b, &c); err == nil {
		if hasError(c.Error) {
			s.fail(streamError(b, s.resp.Header, time.Now()))
			return
		}
		if len(c.Choices) > 0 {
			s.streamed = false
			s.note(note)
			s.add(&c, at)
			s.sawDone = true
			s.finish()
			return
		}
	}
	s.fail(&Error{Kind: ErrBadResponse, Status: s.resp.StatusCode, Message: "expected an event stream, got JSON: " + truncate(strings.TrimSpace(string(b)), 200)})
}

// endOfStream ends a stream that closed without [DONE]: fine when every
// choice has finished (some servers omit [DONE]), truncated otherwise.
func (s *Stream) endOfStream() {
	if s.sawDone {
		s.finish()
		return
	}
	seen, finished := 0, 0
	for _, st := range s.choices {
		if st != nil {
			seen++
			if st.finish != "" {
				finished++
			}
		}
	}
	if seen > 0 && finished == seen {
		s.finish()
		return
	}
	s.fail(&Error{Kind: ErrTruncated, Status: s.resp.StatusCode,
		Message: "the stream ended without [DONE] or a finish reason: the answer may be cut short"})
}

func (s *Stream) choice(i int) *choiceState {
	if i < 0 || i >= maxChoices {
		i = maxChoices - 1
	}
	if i >= len(s.choices) {
		s.choices = slices.Grow(s.choices, i+1-len(s.choices))[:i+1]
	}
	st := s.choices[i]
	if st == nil {
		st = &choiceState{}
		if s.dialect.thinkTags && s.endpoint == EndpointChat {
			st.think = &thinkSplitter{}
		}
		s.choices[i] = st
	}
	return st
}

// push queues e, with the key redacted from its text.
func (s *Stream) push(e Event) {
	if s.redact && (e.Kind == EventDelta || e.Kind == EventReasoning) {
		st := s.choice(e.Choice)
		f := &st.content
		if e.Kind == EventReasoning {
			f = &st.reasoning
		}
		if e.Text = f.feed(s.key, e.Text); e.Text == "" {
			return
		}
	}
	s.queue1(e)
}

// queue1 queues e as it is.
func (s *Stream) queue1(e Event) {
	switch e.Kind {
	case EventDelta, EventReasoning, EventToolCall:
		if s.ttft == 0 {
			s.ttft = max(e.At, 1)
		}
	}
	s.queue = append(s.queue, e)
}

// add queues the events of one chunk: per choice reasoning, content, tool
// calls, logprobs and finish reason, then usage and timing.
func (s *Stream) add(c *Chunk, at time.Duration) {
	if c.Model != "" && s.model == "" {
		s.model = s.redacted(c.Model)
	}
	if c.ID != "" && s.id == "" {
		s.id = s.redacted(c.ID)
	}
	s.describe(c)
	queued := len(s.queue)
	defer func() {
		if len(s.queue) > queued {
			s.sendMeta(at, false)
		}
	}()
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index < 0 || ch.Index >= maxChoices {
			// Every layer above grows a list to the index: refuse one no
			// request can ask for rather than allocate for it.
			s.fail(&Error{Kind: ErrBadResponse, Message: fmt.Sprintf("the stream sent choice index %d; Knobs takes 0 to %d", ch.Index, maxChoices-1)})
			return
		}
		st := s.choice(ch.Index)
		d := ch.Delta
		if d == nil {
			d = ch.Message
		}
		if d != nil {
			if d.Reasoning != "" {
				s.push(Event{Kind: EventReasoning, Choice: ch.Index, Text: d.Reasoning, At: at})
			}
			if d.ReasoningContent != "" {
				s.push(Event{Kind: EventReasoning, Choice: ch.Index, Text: d.ReasoningContent, At: at})
			}
			s.content(st, ch.Index, d.Content, at)
			if d.Refusal != "" {
				s.push(Event{Kind: EventDelta, Choice: ch.Index, Text: d.Refusal, At: at})
			}
			for j := range d.ToolCalls {
				s.toolCall(st, ch.Index, j, &d.ToolCalls[j], at)
			}
			if d.FunctionCall != nil {
				zero := 0
				s.toolCall(st, ch.Index, 0, &ChunkToolCall{Index: &zero, Type: "function", Function: *d.FunctionCall}, at)
			}
		}
		if ch.Text != "" {
			s.push(Event{Kind: EventDelta, Choice: ch.Index, Text: ch.Text, At: at})
		}
		if d != nil && len(d.Tokens) > 0 {
			s.push(Event{Kind: EventTokens, Choice: ch.Index, Tokens: slices.Clone(d.Tokens), At: at})
		}
		if len(ch.Tokens) > 0 {
			s.push(Event{Kind: EventTokens, Choice: ch.Index, Tokens: slices.Clone(ch.Tokens), At: at})
		}
		s.logprobs(ch.Index, ch.Logprobs, "", at)
		if ch.Logprobs != nil {
			s.logprobs(ch.Index, &ChunkLogprobs{Content: ch.Logprobs.Refusal}, PartRefusal, at)
		}
		if rl := ch.ReasoningLogprobs; rl != nil {
			s.logprobs(ch.Index, rl, PartReasoning, at)
			s.logprobs(ch.Index, &ChunkLogprobs{Content: rl.Refusal}, PartRefusal, at)
		}
		if ch.FinishReason != "" {
			st.finish = ch.FinishReason
			if r, c := st.flush(); r != "" || c != "" {
				s.pushSplit(ch.Index, r, c, at)
			}
			s.flushKeys(ch.Index, st, at)
			s.push(Event{Kind: EventFinish, Choice: ch.Index, FinishReason: ch.FinishReason, At: at})
		}
	}
	if c.Usage != nil {
		u := convertUsage(c.Usage)
		u.ReasoningApart = s.dialect.reasoningApart
		s.usage = u
		s.push(Event{Kind: EventUsage, Usage: u, At: at})
	}
	if c.TimeInfo != nil {
		ti := &TimeInfo{QueueTime: c.TimeInfo.QueueTime, PromptTime: c.TimeInfo.PromptTime,
			CompletionTime: c.TimeInfo.CompletionTime, TotalTime: c.TimeInfo.TotalTime, Created: c.TimeInfo.Created}
		s.timeInfo = ti
		s.push(Event{Kind: EventTimeInfo, TimeInfo: ti, At: at})
	}
	if t := c.Timings; t != nil {
		ti := &TimeInfo{PromptTime: t.PromptMS / 1000, CompletionTime: t.PredictedMS / 1000,
			TotalTime: (t.PromptMS + t.PredictedMS) / 1000}
		s.timeInfo = ti
		s.push(Event{Kind: EventTimeInfo, TimeInfo: ti, At: at})
	}
}

// describe notes what the chunk says of how the answer is labelled; an
// EventResponse goes out when that changed (the first chunk, a tier or
// fingerprint that comes on the last chunk only). Text deltas repeat the
// same interned strings, so this costs a few comparisons per chunk.
func (s *Stream) describe(c *Chunk) {
	m := &s.meta
	set := func(dst *string, v string) {
		if v != "" && v != *dst {
			*dst, s.metaSent = s.redacted(v), false
		}
	}
	set(&m.ID, c.ID)
	set(&m.Object, c.Object)
	set(&m.Model, c.Model)
	set(&m.SystemFingerprint, c.SystemFingerprint)
	set(&m.ServiceTier, c.ServiceTier)
	if c.Created != 0 && c.Created != m.Created {
		m.Created, s.metaSent = c.Created, false
	}
	m.Streamed = s.streamed
}

// sendMeta queues an EventResponse when the labels changed since the last
// one. add calls it after a chunk that brought other events, and the end
// of the stream in any case, so that it goes after them: the first event
// a reader gets is still the first token, which the relay's first
// metrics tick is taken by.
func (s *Stream) sendMeta(at time.Duration, end bool) {
	if s.metaSent || (end && s.meta.ID == "" && s.meta.Model == "" && len(s.meta.Notes) == 0) {
		return
	}
	s.metaSent = true
	r := s.meta
	r.Notes = slices.Clone(s.meta.Notes)
	s.queue1(Event{Kind: EventResponse, Response: &r, At: at})
}

// logprobs queues the logprobs of one part of a choice.
func (s *Stream) logprobs(choice int, w *ChunkLogprobs, part string, at time.Duration) {
	lp := convertLogprobs(w)
	if len(lp) == 0 {
		return
	}
	for i := range lp {
		lp[i].Part = part
	}
	s.redactLogprobs(lp)
	s.push(Event{Kind: EventLogprobs, Choice: choice, Logprobs: lp, At: at})
}

// content queues a content fragment, split by the choice's think tags when
// the dialect has them.
func (s *Stream) content(st *choiceState, choice int, text string, at time.Duration) {
	if text == "" {
		return
	}
	if st.think == nil {
		s.push(Event{Kind: EventDelta, Choice: choice, Text: text, At: at})
		return
	}
	r, c := st.think.feed(text)
	s.pushSplit(choice, r, c, at)
}

func (s *Stream) pushSplit(choice int, reasoning, content string, at time.Duration) {
	if reasoning != "" {
		s.push(Event{Kind: EventReasoning, Choice: choice, Text: reasoning, At: at})
	}
	if content != "" {
		s.push(Event{Kind: EventDelta, Choice: choice, Text: content, At: at})
	}
}

func (st *choiceState) flush() (reasoning, content string) {
	if st.think == nil {
		return "", ""
	}
	return st.think.flush()
}

// flushHeld delivers text held back by think splitters and key filters
// when the stream ends, whatever way it ends.
func (s *Stream) flushHeld() {
	at := time.Since(s.started)
	for i, st := range s.choices {
		if st != nil {
			if r, c := st.flush(); r != "" || c != "" {
				s.pushSplit(i, r, c, at)
			}
			s.flushKeys(i, st, at)
		}
	}
}

// flushKeys delivers what the key filters of choice i hold back: its text
// ended without completing the key.
func (s *Stream) flushKeys(i int, st *choiceState, at time.Duration) {
	if !s.redact {
		return
	}
	if t := st.reasoning.flush(); t != "" {
		s.queue1(Event{Kind: EventReasoning, Choice: i, Text: t, At: at})
	}
	if t := st.content.flush(); t != "" {
		s.queue1(Event{Kind: EventDelta, Choice: i, Text: t, At: at})
	}
	for _, a := range st.tools {
		if t := a.keys.flush(); t != "" {
			a.args.WriteString(t)
			call := a.call
			call.Arguments = a.args.String()
			s.queue1(Event{Kind: EventToolCall, Choice: i, Text: t, ToolCall: &call, At: at})
		}
	}
}

// redacted is text with the key replaced, for texts that come whole.
func (s *Stream) redacted(text string) string {
	if s.redact && strings.Contains(text, s.key) {
		return strings.ReplaceAll(text, s.key, "***")
	}
	return text
}

// redactLogprobs redacts the key from tokens; one cut across tokens is
// not looked for (a key is many tokens, and logprobs are not text that is
// kept as output).
func (s *Stream) redactLogprobs(lp []TokenLogprob) {
	if !s.redact {
		return
	}
	for i := range lp {
		lp[i].Token = s.redacted(lp[i].Token)
		for j := range lp[i].Top {
			lp[i].Top[j].Token = s.redacted(lp[i].Top[j].Token)
		}
	}
}

// toolCall assembles a tool call fragment by index. A fragment without an
// index (xAI sends calls whole) takes its position in the delta, or the
// next free index when that position holds a different call.
func (s *Stream) toolCall(st *choiceState, choice, pos int, tc *ChunkToolCall, at time.Duration) {
	idx := pos
	if tc.Index != nil {
		idx = *tc.Index
	} else if a := st.tool(idx); a != nil && a.call.ID != "" && tc.ID != "" && a.call.ID != tc.ID {
		for _, a := range st.tools {
			idx = max(idx, a.call.Index+1)
		}
	}
	a := st.tool(idx)
	if a == nil {
		a = &toolAcc{call: ToolCall{Index: idx}}
		st.tools = append(st.tools, a)
	}
	if tc.ID != "" {
		a.call.ID = s.redacted(tc.ID)
	}
	if tc.Type != "" {
		a.call.Type = s.redacted(tc.Type)
	}
	// Servers that repeat the name in every fragment must not get it
	// doubled; none is known to split a name.
	if tc.Function.Name != "" && a.call.Name == "" {
		a.call.Name = s.redacted(tc.Function.Name)
	}
	fragment := tc.Function.Arguments
	if s.redact {
		fragment = a.keys.feed(s.key, fragment)
	}
	a.args.WriteString(fragment)
	call := a.call
	call.Arguments = a.args.String()
	s.push(Event{Kind: EventToolCall, Choice: choice, Text: fragment, ToolCall: &call, At: at})
}

func (st *choiceState) tool(idx int) *toolAcc {
	for _, a := range st.tools {
		if a.call.Index == idx {
			return a
		}
	}
	return nil
}

func convertUsage(w *ChunkUsage) *Usage {
	u := &Usage{PromptTokens: w.PromptTokens, CompletionTokens: w.CompletionTokens, TotalTokens: w.TotalTokens}
	if d := w.PromptTokensDetails; d != nil {
		u.CachedTokens = d.CachedTokens
	}
	if d := w.PromptTokensDetails; d != nil {
		u.PromptTextTokens, u.PromptAudioTokens, u.PromptImageTokens = d.TextTokens, d.AudioTokens, d.ImageTokens
	}
	if d := w.CompletionTokensDetails; d != nil {
		u.ReasoningTokens = d.ReasoningTokens
		u.AcceptedPredictionTokens, u.RejectedPredictionTokens = d.AcceptedPredictionTokens, d.RejectedPredictionTokens
		u.CompletionAudioTokens = d.AudioTokens
	}
	u.ImageTokens, u.NumSourcesUsed = w.ImageTokens, w.NumSourcesUsed
	if w.CostInUSDTicks > 0 {
		u.CostInUSDTicks = w.CostInUSDTicks
		u.CostUSD = float64(w.CostInUSDTicks) / 1e10
	}
	return u
}

// convertLogprobs reads either wire form into TokenLogprobs.
func convertLogprobs(w *ChunkLogprobs) []TokenLogprob {
	if w == nil {
		return nil
	}
	if len(w.Content) > 0 {
		out := make([]TokenLogprob, len(w.Content))
		for i, t := range w.Content {
			out[i] = TokenLogprob{Token: t.Token, Logprob: t.Logprob, Bytes: t.Bytes}
			if len(t.TopLogprobs) > 0 {
				out[i].Top = make([]TopLogprob, len(t.TopLogprobs))
				for j, top := range t.TopLogprobs {
					out[i].Top[j] = TopLogprob{Token: top.Token, Logprob: top.Logprob, Bytes: top.Bytes}
				}
			}
		}
		return out
	}
	if len(w.Tokens) == 0 {
		return nil
	}
	out := make([]TokenLogprob, len(w.Tokens))
	for i, tok := range w.Tokens {
		out[i].Token = tok
		if i < len(w.TokenLogprobs) && w.TokenLogprobs[i] != nil {
			out[i].Logprob = *w.TokenLogprobs[i]
		} else {
			out[i].NoLogprob = true
		}
		if i < len(w.TextOffset) {
			off := w.TextOffset[i]
			out[i].TextOffset = &off
		}
		if i < len(w.TopLogprobs) && len(w.TopLogprobs[i]) > 0 {
			top := make([]TopLogprob, 0, len(w.TopLogprobs[i]))
			for t, lp := range w.TopLogprobs[i] {
				top = append(top, TopLogprob{Token: t, Logprob: lp})
			}
			// The wire form is a map: order by likelihood, ties by token,
			// so the view is stable.
			slices.SortFunc(top, func(a, b TopLogprob) int {
				if a.Logprob != b.Logprob {
					if a.Logprob > b.Logprob {
						return -1
					}
					return 1
				}
				return strings.Compare(a.Token, b.Token)
			})
			out[i].Top = top
		}
	}
	return out
}

// Request returns the request as sent, with the key redacted.
func (s *Stream) Request() RawRequest { return s.req }

// RawResponse returns the raw bytes received, up to MaxRawResponse; past
// the cap it ends with a note saying the capture stopped. An answer that
// is not the provider's (an HTML or plain-text page) is kept as a short
// text excerpt with a note.
//
// A provider that echoes the key back gets it replaced with "***".
func (s *Stream) RawResponse() []byte {
	if s.body == nil {
		return nil
	}
	raw := s.body.raw()
	if s.foreign {
		// A proxy's or CDN's page is not the provider's answer: keep what
		// says what it was, not its markup.
		raw = fmt.Appendf(nil, "%s\n[knobs: the answer (%d bytes, %s) was not the provider's; only the start of its text is kept]\n",
			excerpt(raw, maxExcerpt), s.body.total, cmp.Or(s.resp.Header.Get("Content-Type"), "no content type"))
	}
	if redactable(s.key) && bytes.Contains(raw, []byte(s.key)) {
		return bytes.ReplaceAll(raw, []byte(s.key), []byte("***"))
	}
	return raw
}

// RawResponseSize returns how many bytes of the answer were received in
// all, including those past the raw capture's cap.
func (s *Stream) RawResponseSize() int64 {
	if s.body == nil {
		return 0
	}
	return s.body.total
}

// Status returns the HTTP status of the answer, or 0 when none came.
func (s *Stream) Status() int {
	if s.resp == nil {
		return 0
	}
	return s.resp.StatusCode
}

// Header returns the response headers, or nil when no answer came.
func (s *Stream) Header() http.Header {
	if s.resp == nil {
		return nil
	}
	return s.resp.Header
}

// RateLimit returns the rate-limit budgets the answer's headers reported.
func (s *Stream) RateLimit() RateLimit { return ParseRateLimit(s.Header()) }

// Started returns when the request was sent.
func (s *Stream) Started() time.Time { return s.started }

// TTFT returns the time from sending the request to the first content,
// reasoning or tool-call token, or 0 before there was one.
func (s *Stream) TTFT() time.Duration { return s.ttft }

// SawDone reports whether the stream ended with "data: [DONE]" (or was a
// complete non-streamed answer).
func (s *Stream) SawDone() bool { return s.sawDone }

// Chunks returns how many data chunks have been decoded.
func (s *Stream) Chunks() int { return s.chunks }

// Model returns the model the provider says answered, or "".
func (s *Stream) Model() string { return s.model }

// ResponseID returns the provider's id of the answer, or "".
func (s *Stream) ResponseID() string { return s.id }

// Usage returns the last usage reported, or nil.
func (s *Stream) Usage() *Usage { return s.usage }

// TimeInfo returns the last timing reported (Cerebras time_info or
// llama.cpp timings), or nil.
func (s *Stream) TimeInfo() *TimeInfo { return s.timeInfo }

// FinishReasons returns the finish reason of each choice that has one.
func (s *Stream) FinishReasons() map[int]string {
	out := make(map[int]string)
	for i, st := range s.choices {
		if st != nil && st.finish != "" {
			out[i] = st.finish
		}
	}
	return out
}

// ToolCalls returns the tool calls of a choice as assembled so far, by
// index.
func (s *Stream) ToolCalls(choice int) []ToolCall {
	if choice < 0 || choice >= len(s.choices) || s.choices[choice] == nil {
		return nil
	}
	var out []ToolCall
	for _, a := range s.choices[choice].tools {
		c := a.call
		c.Arguments = a.args.String()
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b ToolCall) int { return a.Index - b.Index })
	return out
}

// captureBody keeps the first MaxRawResponse bytes of the answer for the
// raw view and reports the first byte.
//
// The capture is kept in blocks rather than one growing slice: appending
// read after read to one slice re-copies it at every growth (by 1.25× past
// 256 KiB), which for a long stream cost about 1 µs per token while
// streaming. Blocks are joined once, when the raw answer is asked for.
type captureBody struct {
	r      io.Reader
	blocks [][]byte // full blocks, in order
	cur    []byte   // the block being filled
	size   int      // bytes captured, in blocks and cur
	total  int64
	capped bool
	onRead func() // after every read that brought bytes
}

// Capture blocks: small first, so that a short answer holds little, then
// large enough that a long one needs few.
const (
	firstRawBlock = 8 << 10
	rawBlock      = 64 << 10
)

func (b *captureBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 {
		if b.onRead != nil {
			b.onRead()
		}
		b.total += int64(n)
		if !b.capped {
			room := MaxRawResponse - b.size
			if n <= room {
				b.write(p[:n])
			} else {
				b.write(p[:room])
				b.write([]byte(rawCapNote))
				b.capped = true
			}
		}
	}
	return n, err
}

// write appends p to the capture.
func (b *captureBody) write(p []byte) {
	for len(p) > 0 {
		if len(b.cur) == cap(b.cur) {
			size := firstRawBlock
			if len(b.cur) > 0 || len(b.blocks) > 0 {
				size = rawBlock
			}
			if len(b.cur) > 0 {
				b.blocks = append(b.blocks, b.cur)
			}
			b.cur = make([]byte, 0, size)
		}
		k := copy(b.cur[len(b.cur):cap(b.cur)], p)
		b.cur = b.cur[:len(b.cur)+k]
		b.size += k
		p = p[k:]
	}
}

// raw returns the capture so far as one slice. The joined slice replaces
// the blocks, full to its capacity, so that later reads never write into
// what a caller holds.
func (b *captureBody) raw() []byte {
	switch {
	case len(b.blocks) == 0:
		return b.cur[:len(b.cur):len(b.cur)]
	case len(b.blocks) == 1 && len(b.cur) == 0:
		return b.blocks[0] // joined already
	}
	out := make([]byte, 0, b.size)
	for _, blk := range b.blocks {
		out = append(out, blk...)
	}
	out = append(out, b.cur...)
	b.blocks, b.cur = [][]byte{out}, nil
	return out
}
