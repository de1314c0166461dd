package handlers

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/diff"
	"knobs/llm"
	"knobs/runner"
	"knobs/views"
)

// ShowRunComparePage compares two of the user's runs (?a=ID&b=ID): their
// parameters side by side, their messages one by one and their outputs
// word by word. A missing, malformed, unknown or other user's id is a 404,
// like a run that does not exist.
func (h *Handler) ShowRunComparePage(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	var runs [2]db.Run
	for i, q := range []string{"a", "b"} {
		id, err := strconv.ParseInt(c.Query(q), 10, 64)
		if err != nil || id <= 0 {
			return fiber.NewError(fiber.StatusNotFound, "There is no such run.")
		}
		if runs[i], err = h.store.Run(ctx(c), u.ID, id); err != nil {
			return err
		}
	}
	a, b := compared(runs[0]), compared(runs[1])
	v := views.RunCompareView{
		Page: h.page(c, fmt.Sprintf("Run %d and run %d", a.run.ID, b.run.ID), "history"),
		A:    a.side(), B: b.side(),
	}
	// The provider, endpoint and model first, then the body's fields by name.
	field := func(key, value string) json.RawMessage {
		m, _ := json.Marshal(map[string]string{key: value})
		return m
	}
	rows := append(diff.Params(field("provider", a.run.Provider), field("provider", b.run.Provider)),
		diff.Params(field("endpoint", a.run.Endpoint), field("endpoint", b.run.Endpoint))...)
	body := diff.Params(a.params, b.params)
	if i := slices.IndexFunc(body, func(r diff.Row) bool { return r.Key == "model" }); i > 0 {
		body = append(append([]diff.Row{body[i]}, body[:i]...), body[i+1:]...)
	}
	for _, r := range append(rows, body...) {
		v.Params = append(v.Params, views.ParamDiffRow{Key: r.Key, A: r.A, B: r.B, State: string(r.State)})
	}
	for i := range max(len(a.messages), len(b.messages)) {
		var ma, mb comparedMessage
		state := diff.Same
		switch {
		case i >= len(b.messages):
			ma, state = a.messages[i], diff.OnlyA
		case i >= len(a.messages):
			mb, state = b.messages[i], diff.OnlyB
		default:
			ma, mb = a.messages[i], b.messages[i]
			if ma != mb {
				state = diff.Changed
			}
		}
		role := ma.role
		switch {
		case state == diff.OnlyB:
			role = mb.role
		case state != diff.OnlyA && mb.role != ma.role:
			role = ma.role + " → " + mb.role
		}
		v.Messages = append(v.Messages, views.MessageDiff{N: i + 1, Role: role, State: string(state), Ops: diffOps(diff.Words(ma.text, mb.text))})
	}
	ca, cb := a.choice(), b.choice()
	v.Output = textDiff(ca.Content, cb.Content)
	if ca.Reasoning != "" || cb.Reasoning != "" {
		r := textDiff(ca.Reasoning, cb.Reasoning)
		v.Reasoning = &r
	}
	v.Metrics = metricPairs(a, b)
	return Render(c, fiber.StatusOK, views.RunComparePage(v))
}

// comparedRun is a stored run with its spec and result read.
type comparedRun struct {
	run      db.Run
	params   json.RawMessage // the body less its messages or prompt
	messages []comparedMessage
	result   runner.Result
}

// comparedMessage is one message (or prompt) of a request, as text.
type comparedMessage struct {
	role, text string
}

func compared(run db.Run) comparedRun {
	x := comparedRun{run: run}
	_ = json.Unmarshal([]byte(run.Result), &x.result) // a run cut short may hold an empty result
	var spec llm.RunSpec
	var body map[string]json.RawMessage
	if json.Unmarshal([]byte(run.Spec), &spec) != nil || json.Unmarshal(spec.Body, &body) != nil {
		return x
	}
	if raw, ok := body["messages"]; ok {
		var ms []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			Name       string          `json:"name"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  json.RawMessage `json:"tool_calls"`
		}
		_ = json.Unmarshal(raw, &ms) // compared as far as it reads
		for _, m := range ms {
			text := contentText(m.Content)
			if len(m.ToolCalls) > 0 && string(m.ToolCalls) != "null" {
				text = strings.TrimLeft(text+"\ntool_calls: "+string(m.ToolCalls), "\n")
			}
			role := m.Role
			if m.Name != "" {
				role += " (" + m.Name + ")"
			}
			if m.ToolCallID != "" {
				role += " for " + m.ToolCallID
			}
			x.messages = append(x.messages, comparedMessage{role, text})
		}
	}
	if raw, ok := body["prompt"]; ok {
		var one string
		var many []string
		switch {
		case json.Unmarshal(raw, &one) == nil:
			x.messages = append(x.messages, comparedMessage{"prompt", one})
		case json.Unmarshal(raw, &many) == nil:
			for _, p := range many {
				x.messages = append(x.messages, comparedMessage{"prompt", p})
			}
		default: // token ids
			x.messages = append(x.messages, comparedMessage{"prompt", string(raw)})
		}
	}
	delete(body, "messages")
	delete(body, "prompt")
	x.params, _ = json.Marshal(body)
	return x
}

// choice is the run's first answer, or an empty one.
func (x comparedRun) choice() runner.Choice {
	if len(x.result.Choices) == 0 {
		return runner.Choice{}
	}
	return x.result.Choices[0]
}

func (x comparedRun) side() views.CompareSide {
	return views.CompareSide{ID: x.run.ID, When: x.run.CreatedAt.Format("2 Jan 2006 15:04:05"), Provider: x.run.Provider, Model: x.run.Model, Status: x.run.Status}
}

func textDiff(a, b string) views.TextDiff {
	return views.TextDiff{Same: a == b, Ops: diffOps(diff.Words(a, b))}
}

func diffOps(ops []diff.Op) []views.DiffOp {
	out := make([]views.DiffOp, len(ops))
	for i, op := range ops {
		out[i] = views.DiffOp{Text: op.Text}
		switch op.Kind {
		case diff.Delete:
			out[i].Kind = views.DiffDelete
		case diff.Insert:
			out[i].Kind = views.DiffInsert
		}
	}
	return out
}

// metricPairs lines up what the two runs measured.
func metricPairs(a, b comparedRun) []views.MetricPair {
	ma, mb := a.result.Metrics, b.result.Metrics
	orDash := func(s string) string {
		if s == "" {
			return "—"
		}
		return s
	}
	num := func(v float64, format string) string {
		if v <= 0 {
			return "—"
		}
		return fmt.Sprintf(format, v)
	}
	errText := func(x comparedRun) string {
		if e := x.result.Error; e != nil {
			return strings.ReplaceAll(string(e.Kind), "_", " ") + ": " + e.Message
		}
		return ""
	}
	pairs := []views.MetricPair{
		{Label: "Status", A: a.run.Status, B: b.run.Status},
		{Label: "Finish reason", A: orDash(a.choice().FinishReason), B: orDash(b.choice().FinishReason)},
		{Label: "First token", A: num(ma.TTFTMs, "%.1f ms"), B: num(mb.TTFTMs, "%.1f ms")},
		{Label: "Tokens/s", A: num(ma.TokensPerSec, "%.0f"), B: num(mb.TokensPerSec, "%.0f")},
		{Label: "Tokens", A: strconv.Itoa(ma.Tokens), B: strconv.Itoa(mb.Tokens)},
		{Label: "Total", A: num(ma.TotalMs/1000, "%.2f s"), B: num(mb.TotalMs/1000, "%.2f s")},
		{Label: "Cost", A: num(ma.CostUSD, "$%.6f"), B: num(mb.CostUSD, "$%.6f")},
	}
	if ea, eb := errText(a), errText(b); ea != "" || eb != "" {
		pairs = append(pairs, views.MetricPair{Label: "Error", A: orDash(ea), B: orDash(eb)})
	}
	for i := range pairs {
		pairs[i].Differs = pairs[i].A != pairs[i].B
	}
	return pairs
}
