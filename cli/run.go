package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

const runUsage = `knobs run --preset NAME [--label L | --version N] [--var k=v ...] [--set param=json ...] [--json]
       knobs run --provider P --model M [--endpoint chat|completion] [--system S] [--set param=json ...] [--json] PROMPT

Runs on the Knobs server and streams the answer to stdout as it arrives
(reasoning to stderr). PROMPT "-" reads the prompt from stdin. With --json
it prints the finished run as GET /api/v1/runs/{id} answers it instead.
Exit status: 0 done, 1 the run ended in an error (its message on stderr),
2 bad usage, 130 interrupted (the run is cancelled on the server).`

// maxPrompt caps a prompt read from stdin.
const maxPrompt = 1 << 20

// maxEventLine caps one line of the event stream (a frame's data).
const maxEventLine = 16 << 20

// streamRetries bounds the reconnects to a run's event stream that broke
// before the run ended.
const streamRetries = 5

func runCommand(e *env, args []string) error {
	const name = "knobs run"
	fs := flagSet(name, runUsage)
	srv := addServerFlags(fs)
	preset := fs.String("preset", "", "run this preset (its name or id)")
	label := fs.String("label", "", "with --preset: the version its label points at (such as production or staging)")
	version := fs.Int("version", 0, "with --preset: this version")
	provider := fs.String("provider", "", "run a quick prompt on this provider (such as sim, cerebras, xai)")
	model := fs.String("model", "", "with --provider: the model")
	endpoint := fs.String("endpoint", "chat", "with --provider: chat or completion")
	system := fs.String("system", "", "with --provider and the chat endpoint: a system message")
	asJSON := fs.Bool("json", false, "print the finished run as JSON instead of streaming its text")
	var vars, sets listFlag
	fs.Var(&vars, "var", "a value for a {{placeholder}}: name=value (repeatable)")
	fs.Var(&sets, "set", "a request body parameter: name=JSON, such as temperature=0.2 (repeatable)")
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}

	variables, err := pairs(name, "var", vars)
	if err != nil {
		return err
	}
	params, err := jsonPairs(name, sets)
	if err != nil {
		return err
	}
	spec := map[string]any{}
	switch {
	case *preset != "" && *provider != "":
		return usagef(name, "give --preset or --provider, not both")
	case *preset != "":
		if len(rest) > 0 {
			return usagef(name, "a preset holds its prompt: unexpected %q (use --var to fill its placeholders)", rest[0])
		}
		if *label != "" && *version != 0 {
			return usagef(name, "give --label or --version, not both")
		}
		spec["preset"] = *preset
		if *label != "" {
			spec["label"] = *label
		}
		if *version != 0 {
			spec["version"] = *version
		}
		if len(params) > 0 {
			spec["overrides"] = params
		}
	case *provider != "":
		if *model == "" {
			return usagef(name, "--provider needs --model")
		}
		if *label != "" || *version != 0 {
			return usagef(name, "--label and --version choose a preset's version: give --preset")
		}
		if len(rest) != 1 {
			return usagef(name, "give the prompt as one argument (quote it), or - to read it from stdin")
		}
		prompt := rest[0]
		if prompt == "-" {
			b, err := io.ReadAll(io.LimitReader(e.stdin, maxPrompt+1))
			if err != nil {
				return fmt.Errorf("unable to read the prompt from stdin: %w", err)
			}
			if len(b) > maxPrompt {
				return usagef(name, "the prompt on stdin is larger than %d KiB", maxPrompt>>10)
			}
			prompt = string(b)
		}
		body := map[string]any{"model": *model}
		switch *endpoint {
		case "chat":
			var msgs []map[string]string
			if *system != "" {
				msgs = append(msgs, map[string]string{"role": "system", "content": *system})
			}
			body["messages"] = append(msgs, map[string]string{"role": "user", "content": prompt})
		case "completion":
			if *system != "" {
				return usagef(name, "--system is for the chat endpoint")
			}
			body["prompt"] = prompt
		default:
			return usagef(name, "--endpoint %q: want chat or completion", *endpoint)
		}
		for k, v := range params {
			body[k] = v
		}
		spec["provider"], spec["endpoint"], spec["body"] = *provider, *endpoint, body
	default:
		return usagef(name, "give --preset NAME, or --provider and --model with a prompt")
	}
	if len(variables) > 0 {
		spec["variables"] = variables
	}

	c, err := srv.client(e)
	if err != nil {
		return err
	}
	var started struct {
		ID     int64  `json:"id"`
		Events string `json:"events"`
	}
	if err := c.callJSON(e.ctx, http.MethodPost, "/runs", spec, &started); err != nil {
		if errors.Is(err, context.Canceled) {
			return errInterrupted
		}
		return err
	}
	out := &runOutput{stdout: e.stdout, stderr: e.stderr, quiet: *asJSON}
	status, err := c.follow(e.ctx, started.ID, out)
	if e.ctx.Err() != nil {
		return c.cancel(e, started.ID)
	}
	if err != nil {
		return err
	}
	out.endLine()
	if *asJSON {
		raw, _, err := c.call(e.ctx, http.MethodGet, runPath(started.ID), nil)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		if json.Indent(&b, raw, "", "  ") != nil {
			return fmt.Errorf("Knobs answered run %d with something that is not JSON", started.ID)
		}
		b.WriteByte('\n')
		if _, err := e.stdout.Write(b.Bytes()); err != nil {
			return err
		}
	}
	switch status {
	case "done":
		return nil
	case "error":
		msg := out.errMsg
		if msg == "" {
			msg = "the provider gave no message"
		}
		return &runFailed{fmt.Sprintf("run %d failed: %s", started.ID, msg)}
	default:
		return &runFailed{fmt.Sprintf("run %d ended %s", started.ID, status)}
	}
}

// jsonPairs reads each "name=JSON" of --set.
func jsonPairs(cmd string, l listFlag) (map[string]json.RawMessage, error) {
	kv, err := pairs(cmd, "set", l)
	if err != nil {
		return nil, err
	}
	out := make(map[string]json.RawMessage, len(kv))
	for k, v := range kv {
		if !json.Valid([]byte(v)) {
			return nil, usagef(cmd, "--set %s=%s: the value is not JSON (quote a string: %s='\"text\"')", k, v, k)
		}
		out[k] = json.RawMessage(v)
	}
	return out, nil
}

func runPath(id int64) string { return "/runs/" + strconv.FormatInt(id, 10) }

// cancel stops run id on the server after an interrupt, says so, and
// returns errInterrupted.
func (c *client) cancel(e *env, id int64) error {
	ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	_, _, err := c.call(ctx, http.MethodPost, runPath(id)+"/cancel", nil)
	switch {
	case err == nil:
		fmt.Fprintf(e.stderr, "\nknobs run: cancelled run %d\n", id)
	case statusIs(err, http.StatusConflict):
		fmt.Fprintf(e.stderr, "\nknobs run: run %d had already ended\n", id)
	default:
		fmt.Fprintf(e.stderr, "\nknobs run: interrupted, but run %d could not be cancelled: %s\n", id, err)
	}
	return errInterrupted
}

// runOutput writes a run's events as they come: the first answer's text
// to stdout and its reasoning to stderr (nothing when quiet), and keeps
// the error message.
type runOutput struct {
	stdout, stderr io.Writer
	quiet          bool
	errMsg         string
	last           byte // the last byte written to stdout
	reasoning      bool // reasoning was written and not yet closed by a newline
}

func (o *runOutput) event(name string, data []byte) error {
	switch name {
	case "delta", "reasoning":
		var d textPart
		if json.Unmarshal(data, &d) != nil {
			return nil
		}
		return o.text(name, d)
	case "texts":
		// Text that arrived together, delta and reasoning mixed: the
		// parts in order.
		var d struct {
			Parts []textPart `json:"parts"`
		}
		if json.Unmarshal(data, &d) != nil {
			return nil
		}
		for _, p := range d.Parts {
			if err := o.text(p.Event, p); err != nil {
				return err
			}
		}
	case "error":
		var d struct {
			Message string `json:"message"`
			Status  int    `json:"status"`
		}
		if json.Unmarshal(data, &d) == nil {
			o.errMsg = d.Message
			if d.Status != 0 {
				o.errMsg = fmt.Sprintf("%s (HTTP %d)", d.Message, d.Status)
			}
		}
	}
	return nil
}

// textPart is the data of a delta or reasoning event, or a part of a
// texts event.
type textPart struct {
	Event  string `json:"event"`
	Choice int    `json:"choice"`
	Text   string `json:"text"`
}

// text writes the first answer's text to stdout, its reasoning to stderr.
func (o *runOutput) text(event string, d textPart) error {
	if d.Choice != 0 || d.Text == "" || o.quiet {
		return nil
	}
	switch event {
	case "reasoning":
		o.reasoning = true
		_, err := io.WriteString(o.stderr, d.Text)
		return err
	case "delta":
		if o.reasoning {
			io.WriteString(o.stderr, "\n")
			o.reasoning = false
		}
		o.last = d.Text[len(d.Text)-1]
		_, err := io.WriteString(o.stdout, d.Text)
		return err
	}
	return nil
}

// endLine ends the streamed answer with a newline when it has none.
func (o *runOutput) endLine() {
	if o.reasoning {
		io.WriteString(o.stderr, "\n")
	}
	if o.last != 0 && o.last != '\n' {
		io.WriteString(o.stdout, "\n")
	}
}

// follow reads run id's events into out until its done event and returns
// the run's status. A stream that breaks before done is resumed after
// the last event read, a bounded number of times.
func (c *client) follow(ctx context.Context, id int64, out *runOutput) (string, error) {
	after := 0
	for try := 0; ; try++ {
		status, last, err := c.readEvents(ctx, id, after, out)
		var werr *writeError
		if status != "" || ctx.Err() != nil || errors.As(err, &werr) {
			return status, err
		}
		if err == nil && last < 0 {
			// 204: every event was read, done included, before the break.
			return c.runStatus(ctx, id)
		}
		after = max(after, last)
		if try == streamRetries {
			if err == nil {
				err = errors.New("the stream ended before the run did")
			}
			return "", fmt.Errorf("lost run %d's event stream (%w); see it with GET %s%s", id, err, apiPrefix, runPath(id))
		}
	}
}

// writeError is output that could not be written (a closed pipe): the
// stream is not read again for it.
type writeError struct{ err error }

func (w *writeError) Error() string { return "unable to write the answer: " + w.err.Error() }
func (w *writeError) Unwrap() error { return w.err }

// runStatus reads run id's status and error message.
func (c *client) runStatus(ctx context.Context, id int64) (string, error) {
	var r struct {
		Status string `json:"status"`
	}
	err := c.callJSON(ctx, http.MethodGet, runPath(id), nil, &r)
	return r.Status, err
}

// readEvents reads one connection of run id's event stream, from after
// its event number after. It returns the status of the done event ("" if
// none came), the id of the last event read (-1 when the server answered
// 204: nothing after it), and why the stream broke.
func (c *client) readEvents(ctx context.Context, id int64, after int, out *runOutput) (status string, last int, err error) {
	hdr := http.Header{"Accept": {"text/event-stream"}}
	path := runPath(id) + "/events"
	if after > 0 {
		path += "?after=" + strconv.Itoa(after)
	}
	resp, err := c.request(ctx, http.MethodGet, path, nil, hdr)
	if err != nil {
		return "", after, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNoContent {
		return "", -1, nil
	}
	last = after
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventLine)
	var event string
	var data []byte
	frameID := 0
	for sc.Scan() {
		line := sc.Bytes()
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch {
		case len(line) == 0:
			if event != "" {
				last = max(last, frameID)
				if err := out.event(event, data); err != nil {
					return "", last, &writeError{err}
				}
				if event == "done" {
					var d struct {
						Status string `json:"status"`
					}
					if err := json.Unmarshal(data, &d); err != nil || d.Status == "" {
						return "", last, fmt.Errorf("run %d's done event is not what Knobs sends: %s", id, data)
					}
					return d.Status, last, nil
				}
			}
			event, data = "", data[:0]
		case string(field) == "id":
			if n, err := strconv.Atoi(strings.TrimSpace(string(value))); err == nil {
				frameID = n
			}
		case string(field) == "event":
			event = string(value)
		case string(field) == "data":
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, value...)
		}
	}
	return "", last, sc.Err()
}
