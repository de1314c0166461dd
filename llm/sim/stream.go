package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"knobs/llm"
)

// errStopped ends a response whose client went away.
var errStopped = errors.New("sim: client gone")

// errFlaky is what sim-flaky fails with.
var errFlaky = errors.New(flakyMessage)

// run is one request being answered.
type run struct {
	*job
	choices     []*choice
	id          string
	object      string
	fingerprint string
	created     time.Time
	tps         float64
	pace        *pacer
	head, tail  []byte // see chunkFrame
}

// maxChunkTokens bounds how many tokens one chunk carries when the
// stream has fallen behind its pace.
const maxChunkTokens = 32

// pacer times tokens: token i is due ttft + i/tps after the start. The
// stream sends whatever is due in one chunk rather than sleeping per
// token, so the rate holds on a loaded machine.
type pacer struct {
	ctx      context.Context
	start    time.Time
	ttft     time.Duration
	perToken time.Duration // 0: no pacing
	timer    *time.Timer
}

func newPacer(ctx context.Context, unpaced bool, tps float64, ttft time.Duration) *pacer {
	p := &pacer{ctx: ctx, start: time.Now(), ttft: ttft}
	if unpaced {
		p.ttft = 0
	} else {
		p.perToken = max(time.Duration(float64(time.Second)/tps), 1)
	}
	return p
}

// due is the position up to which tokens should be out by now, given
// that sent are out: at least one more, at most maxChunkTokens more.
func (p *pacer) due(sent int) int {
	if p.perToken == 0 {
		return sent + 1
	}
	n := int((time.Since(p.start)-p.ttft)/p.perToken) + 1
	return min(max(n, sent+1), sent+maxChunkTokens)
}

// wait returns when token i is due, or with errStopped when the request
// is cancelled first.
func (p *pacer) wait(i int) error {
	if p.ctx.Err() != nil {
		return errStopped
	}
	if p.perToken == 0 && p.ttft == 0 {
		return nil
	}
	d := time.Until(p.start.Add(p.ttft + time.Duration(i)*p.perToken))
	if d <= 0 {
		return nil
	}
	if p.timer == nil {
		p.timer = time.NewTimer(d)
	} else {
		p.timer.Reset(d)
	}
	select {
	case <-p.ctx.Done():
		return errStopped
	case <-p.timer.C:
		return nil
	}
}

func (p *pacer) stop() {
	if p.timer != nil {
		p.timer.Stop()
	}
}

type pieceKind int

const (
	pieceText pieceKind = iota
	pieceReasoning
	pieceHidden
	pieceCallStart
	pieceCallArgs
)

// piece is one step of a choice's stream.
type piece struct {
	kind pieceKind
	tok  token
	call int
	frag string
	cost int // tokens it stands for
}

func pieces(c *choice) []piece {
	ps := make([]piece, 0, c.hidden+len(c.reasoning)+len(c.content)+4*len(c.calls))
	for range c.hidden {
		ps = append(ps, piece{kind: pieceHidden, cost: 1})
	}
	for _, t := range c.reasoning {
		ps = append(ps, piece{kind: pieceReasoning, tok: t, cost: 1})
	}
	for _, t := range c.content {
		ps = append(ps, piece{kind: pieceText, tok: t, cost: 1})
	}
	for i, k := range c.calls {
		header := k.tokens
		for _, f := range k.fragments {
			header -= countTokens(f)
		}
		ps = append(ps, piece{kind: pieceCallStart, call: i, cost: max(1, header)})
		for _, f := range k.fragments {
			ps = append(ps, piece{kind: pieceCallArgs, call: i, frag: f, cost: countTokens(f)})
		}
	}
	return ps
}

// cursor is where a choice's stream stands.
type cursor struct {
	c      *choice
	ps     []piece
	next   int
	pos    int // tokens out, hidden reasoning included
	offset int // runes of text out, for text_offset
	done   bool
}

// sse writes server-sent events, flushing each one.
type sse struct {
	w   io.Writer
	rc  *http.ResponseController
	buf []byte
}

func (s *sse) write(b []byte) error {
	if _, err := s.w.Write(b); err != nil {
		return errStopped
	}
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return errStopped
	}
	return nil
}

func (s *sse) data(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	s.buf = append(append(append(s.buf[:0], "data: "...), b...), "\n\n"...)
	return s.write(s.buf)
}

// stream sends the choices as Cerebras streams them: a role chunk, text
// and reasoning deltas as they come due, tool call fragments by index, a
// finish chunk per choice (the last with usage and time_info unless a
// usage chunk with empty choices is asked for), then [DONE].
func (r *run) stream(w http.ResponseWriter) error {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	out := &sse{w: w, rc: http.NewResponseController(w)}
	if err := out.write(nil); err != nil { // headers out before the first token
		return err
	}
	if err := r.pace.wait(0); err != nil {
		return err
	}
	curs := make([]*cursor, len(r.choices))
	for i, c := range r.choices {
		curs[i] = &cursor{c: c, ps: pieces(c)}
		var err error
		switch {
		case r.endpoint == llm.EndpointChat:
			err = out.data(r.chatChunk(chatChunkChoice{Delta: delta{Role: "assistant"}, Index: c.index}))
		case c.echo != "":
			ch := completionChoice{Index: c.index, Text: c.echo}
			if r.logprobs {
				// Echo with logprobs scores the prompt, token by token.
				ch.Logprobs = completionLogprobsFor(promptTokens(c.echo), r.topLogprobs, 0, true)
			}
			err = out.data(r.completionChunk(ch))
			curs[i].offset = len([]rune(c.echo))
		}
		if err != nil {
			return err
		}
	}
	finished, sent := 0, 0
	for finished < len(curs) {
		target := r.pace.due(sent)
		for _, cur := range curs {
			if cur.done {
				continue
			}
			if err := r.advance(out, cur, target); err != nil {
				return err
			}
			if cur.next == len(cur.ps) {
				cur.done = true
				finished++
				if err := r.finish(out, cur.c, finished == len(curs)); err != nil {
					return err
				}
			}
		}
		sent = target
		if finished < len(curs) {
			if err := r.pace.wait(sent); err != nil {
				return err
			}
		}
	}
	if r.includeUsage {
		u, ti := r.usage()
		var err error
		if r.endpoint == llm.EndpointChat {
			err = out.data(chatChunk{ID: r.id, Choices: []chatChunkChoice{}, Created: r.created.Unix(), Model: r.prof.id,
				SystemFingerprint: r.fingerprint, Object: "chat.completion.chunk", Usage: u, TimeInfo: ti})
		} else {
			err = out.data(completionChunk{ID: r.id, Choices: []completionChoice{}, Created: r.created.Unix(), Model: r.prof.id,
				SystemFingerprint: r.fingerprint, Object: r.object, Usage: u, TimeInfo: ti})
		}
		if err != nil {
			return err
		}
	}
	return out.write([]byte("data: [DONE]\n\n"))
}

// advance sends cur's pieces that are due before position target,
// grouping runs of text or reasoning into one chunk.
func (r *run) advance(out *sse, cur *cursor, target int) error {
	for cur.next < len(cur.ps) && cur.pos < target {
		if f := cur.c.failAt; f > 0 && cur.pos >= f {
			return r.fail(out)
		}
		p := cur.ps[cur.next]
		switch p.kind {
		case pieceHidden:
			cur.next++
			cur.pos += p.cost
		case pieceText, pieceReasoning:
			var toks []token
			for cur.next < len(cur.ps) && cur.ps[cur.next].kind == p.kind && cur.pos < target && (cur.c.failAt == 0 || cur.pos < cur.c.failAt) {
				toks = append(toks, cur.ps[cur.next].tok)
				cur.next++
				cur.pos++
			}
			if err := r.textChunk(out, cur, p.kind, toks); err != nil {
				return err
			}
		case pieceCallStart, pieceCallArgs:
			k := cur.c.calls[p.call]
			d := toolCallDelta{Index: p.call, Type: "function", Function: functionCall{Arguments: p.frag}}
			if p.kind == pieceCallStart {
				d.ID, d.Function.Name = k.id, k.name
			}
			cur.next++
			cur.pos += p.cost
			if err := out.data(r.chatChunk(chatChunkChoice{Delta: delta{ToolCalls: []toolCallDelta{d}}, Index: cur.c.index})); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *run) textChunk(out *sse, cur *cursor, kind pieceKind, toks []token) error {
	text := joinTokens(toks)
	if !r.logprobs {
		return r.fastChunk(out, cur.c.index, kind, text)
	}
	if r.endpoint == llm.EndpointCompletion {
		ch := completionChoice{Index: cur.c.index, Text: text}
		if r.logprobs {
			ch.Logprobs = completionLogprobsFor(toks, r.topLogprobs, cur.offset, false)
		}
		cur.offset += len([]rune(text))
		return out.data(r.completionChunk(ch))
	}
	ch := chatChunkChoice{Index: cur.c.index}
	if kind == pieceReasoning {
		ch.Delta.Reasoning = &text
	} else {
		ch.Delta.Content = &text
		if r.logprobs {
			ch.Logprobs = &chatLogprobs{Content: logprobEntries(toks, r.topLogprobs)}
		}
	}
	return out.data(r.chatChunk(ch))
}

// fastChunk writes the most common chunk, a text delta without
// logprobs, without reflection: the bytes are those json.Marshal would
// write for the same chunk.
func (r *run) fastChunk(out *sse, index int, kind pieceKind, text string) error {
	if r.head == nil {
		r.head, r.tail = r.chunkFrame()
	}
	b := append(out.buf[:0], "data: "...)
	b = append(b, r.head...)
	switch {
	case r.endpoint == llm.EndpointCompletion:
		b = strconv.AppendInt(append(b, `{"index":`...), int64(index), 10)
		b = appendJSONString(append(b, `,"text":`...), text)
		b = append(b, '}')
	default:
		field := `{"delta":{"content":`
		if kind == pieceReasoning {
			field = `{"delta":{"reasoning":`
		}
		b = appendJSONString(append(b, field...), text)
		b = strconv.AppendInt(append(b, `},"index":`...), int64(index), 10)
		b = append(b, '}')
	}
	b = append(append(b, r.tail...), "\n\n"...)
	out.buf = b
	return out.write(b)
}

// chunkFrame is a chunk's JSON before and after its one choice.
func (r *run) chunkFrame() (head, tail []byte) {
	var frame []byte
	if r.endpoint == llm.EndpointCompletion {
		frame, _ = json.Marshal(r.completionChunk(completionChoice{}))
	} else {
		frame, _ = json.Marshal(r.chatChunk(chatChunkChoice{}))
	}
	open := bytes.Index(frame, []byte(`"choices":[`)) + len(`"choices":[`)
	close := bytes.Index(frame, []byte(`],"created":`))
	return frame[:open], frame[close:]
}

// finish sends a choice's finish reason; the last one carries usage and
// time_info unless they get a chunk of their own.
func (r *run) finish(out *sse, c *choice, last bool) error {
	var u *usage
	var ti *timeInfo
	if last && !r.includeUsage {
		u, ti = r.usage()
	}
	if r.endpoint == llm.EndpointCompletion {
		ch := r.completionChunk(completionChoice{Index: c.index, FinishReason: c.finish})
		ch.Usage, ch.TimeInfo = u, ti
		return out.data(ch)
	}
	ch := r.chatChunk(chatChunkChoice{Delta: delta{}, FinishReason: c.finish, Index: c.index})
	ch.Usage, ch.TimeInfo = u, ti
	return out.data(ch)
}

// fail ends the stream the way Cerebras reports an error after a 200: an
// error object in a data line, and no [DONE].
func (r *run) fail(out *sse) error {
	err := out.data(errorChunk{StatusCode: 500, Error: errorContent{
		Code: "internal_server_error", ID: r.id, Message: flakyMessage, Param: "", Type: "server_error"}})
	if err != nil {
		return err
	}
	return errFlaky
}

func (r *run) chatChunk(ch chatChunkChoice) chatChunk {
	return chatChunk{ID: r.id, Choices: []chatChunkChoice{ch}, Created: r.created.Unix(), Model: r.prof.id,
		SystemFingerprint: r.fingerprint, Object: "chat.completion.chunk"}
}

func (r *run) completionChunk(ch completionChoice) completionChunk {
	return completionChunk{ID: r.id, Choices: []completionChoice{ch}, Created: r.created.Unix(), Model: r.prof.id,
		SystemFingerprint: r.fingerprint, Object: r.object}
}

// usage accounts for the whole response. time_info reports the model's
// nominal speed, not the wall clock, so that it is the same on every run.
func (r *run) usage() (*usage, *timeInfo) {
	u := &usage{PromptTokens: r.promptTokens}
	u.PromptTokensDetails.CachedTokens = r.cachedTokens
	longest := 0
	for _, c := range r.choices {
		n := c.completionTokens()
		u.CompletionTokens += n
		u.CompletionTokensDetails.ReasoningTokens += c.reasoned
		longest = max(longest, n)
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	ti := &timeInfo{
		QueueTime:      r.prof.queue.Seconds(),
		PromptTime:     float64(r.promptTokens) / r.prof.promptTPS,
		CompletionTime: float64(longest) / r.tps,
		Created:        float64(r.created.UnixMicro()) / 1e6,
	}
	ti.TotalTime = ti.QueueTime + ti.PromptTime + ti.CompletionTime
	return u, ti
}

// whole answers a request without stream: after the time the tokens
// would take, one response object.
func (r *run) whole(w http.ResponseWriter) error {
	longest := 0
	for _, c := range r.choices {
		n := c.completionTokens()
		if c.failAt > 0 && n > c.failAt {
			if err := r.pace.wait(c.failAt); err != nil {
				return err
			}
			return errFlaky
		}
		longest = max(longest, n)
	}
	if err := r.pace.wait(longest); err != nil {
		return err
	}
	u, ti := r.usage()
	if r.endpoint == llm.EndpointCompletion {
		resp := completionChunk{ID: r.id, Created: r.created.Unix(), Model: r.prof.id,
			SystemFingerprint: r.fingerprint, Object: r.object, Usage: u, TimeInfo: ti}
		for _, c := range r.choices {
			text := joinTokens(c.content)
			ch := completionChoice{Index: c.index, FinishReason: c.finish, Text: c.echo + text}
			if r.logprobs {
				lp := completionLogprobsFor(c.content, r.topLogprobs, len([]rune(c.echo)), false)
				if c.echo != "" {
					e := completionLogprobsFor(promptTokens(c.echo), r.topLogprobs, 0, true)
					lp.TextOffset = append(e.TextOffset, lp.TextOffset...)
					lp.TokenLogprobs = append(e.TokenLogprobs, lp.TokenLogprobs...)
					lp.Tokens = append(e.Tokens, lp.Tokens...)
					lp.TopLogprobs = append(e.TopLogprobs, lp.TopLogprobs...)
				}
				ch.Logprobs = lp
			}
			resp.Choices = append(resp.Choices, ch)
		}
		writeJSON(w, http.StatusOK, resp)
		return nil
	}
	resp := chatResponse{ID: r.id, Created: r.created.Unix(), Model: r.prof.id,
		SystemFingerprint: r.fingerprint, Object: r.object, Usage: u, TimeInfo: ti}
	for _, c := range r.choices {
		ch := chatChoice{FinishReason: c.finish, Index: c.index, Message: chatMessage{Role: "assistant"}}
		if len(c.calls) == 0 {
			ch.Message.Content = new(joinTokens(c.content))
		}
		if len(c.reasoning) > 0 {
			ch.Message.Reasoning = new(joinTokens(c.reasoning))
		}
		for i, k := range c.calls {
			ch.Message.ToolCalls = append(ch.Message.ToolCalls, toolCallDelta{Index: i, ID: k.id, Type: "function",
				Function: functionCall{Name: k.name, Arguments: strings.Join(k.fragments, "")}})
		}
		if r.logprobs {
			ch.Logprobs = &chatLogprobs{Content: logprobEntries(c.content, r.topLogprobs)}
		}
		resp.Choices = append(resp.Choices, ch)
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}
