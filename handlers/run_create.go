package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/field"
	"knobs/llm"
	"knobs/preset"
	"knobs/runner"
	"knobs/vault"
)

// runCreated is the answer to a run started with POST /runs.
type runCreated struct {
	ID     int64  `json:"id"`
	Events string `json:"events"`
}

// CreateRun validates a RunSpec, starts the run and stores it. It takes
// JSON ({"provider","endpoint","body"}) or a form with the same fields,
// body as JSON text. A client that accepts text/event-stream gets the
// run's events in the answer itself, as GET /runs/{id}/events would give
// them (the id in the X-Knobs-Run header): the page's first token comes
// one round trip sooner. Others get {"id","events"} once the run is in
// the database.
func (h *Handler) CreateRun(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	st, err := readSpec(c)
	if err != nil {
		return fiber.NewError(fiber.StatusBadRequest, err.Error())
	}
	run, warn, fields, err := h.startRun(c.UserContext(), u.ID, st)
	if err != nil {
		return err
	}
	if len(fields) > 0 {
		return invalid("Nothing was sent: fix the fields marked.", fields)
	}
	if warn != "" {
		c.Set(budgetWarningHeader, warn)
	}
	events := "/runs/" + strconv.FormatInt(run.ID, 10) + "/events"
	if wantsEventStream(c) {
		c.Set("X-Knobs-Run", strconv.FormatInt(run.ID, 10))
		c.Set(fiber.HeaderLocation, events)
		return h.serveEvents(c, run, 0, run.Subscribe())
	}
	if err := run.WaitStored(); err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(runCreated{ID: run.ID, Events: events})
}

// wantsEventStream says whether the client asked for the events in the
// answer.
func wantsEventStream(c *fiber.Ctx) bool {
	return strings.Contains(c.Get(fiber.HeaderAccept), "text/event-stream")
}

// startRun fills the variables into the spec, validates it for user,
// checks it against the budgets, and starts the run with the filled
// spec; the runner stores it (the template and the values, as history
// keeps both). Field errors come back in fields, a spent budget as a
// 402, with nothing sent or stored; warn is the budget warning to show
// the user, if any.
func (h *Handler) startRun(ctx context.Context, user int64, st playgroundState) (run *runner.Run, warn string, fields field.Errors, err error) {
	p, fields, err := h.prepareRun(ctx, user, st)
	if err != nil || len(fields) > 0 {
		return nil, "", fields, err
	}
	hold, warn, err := h.holdBudget(ctx, user, []preparedRun{p})
	if err != nil {
		return nil, "", nil, err
	}
	defer hold.release()
	slots, err := h.reserveRuns(user, 1)
	if err != nil {
		return nil, "", nil, err
	}
	defer slots.Release()
	run, err = h.launchRun(ctx, user, p, 0, 0, slots, hold)
	return run, warn, nil, err
}

// reserveRuns takes room for n runs of user before anything is stored or
// sent, and refuses with a 429 naming the bound when there is none.
func (h *Handler) reserveRuns(user int64, n int) (*runner.Slots, error) {
	slots, err := h.runner.Reserve(user, n)
	var le *runner.LimitError
	switch {
	case errors.As(err, &le):
		return nil, fiber.NewError(fiber.StatusTooManyRequests, limitMessage(le))
	case errors.Is(err, runner.ErrShutdown):
		return nil, fiber.NewError(fiber.StatusServiceUnavailable, "Knobs is shutting down; try again in a moment.")
	}
	return slots, err
}

// limitMessage tells the user which bound on runs going at once refused
// them, with its value and the setting that changes it.
func limitMessage(le *runner.LimitError) string {
	asked := "one more run"
	if le.Wanted > 1 {
		asked = strconv.Itoa(le.Wanted) + " more runs (one per pane)"
	}
	if le.PerUser {
		return fmt.Sprintf("You already have %d %s going, and %s would pass the limit of %d runs at once per user (KNOBS_MAX_RUNS_PER_USER). "+
			"Wait for one to finish or stop one, then try again.", le.Running, plural(le.Running, "run", "runs"), asked, le.Limit)
	}
	return fmt.Sprintf("Knobs already has %d %s going for everyone, and %s would pass its limit of %d runs at once (KNOBS_MAX_RUNS). "+
		"Try again in a moment.", le.Running, plural(le.Running, "run", "runs"), asked, le.Limit)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// preparedRun is a run validated and ready to start: what launchRun
// stores and sends.
type preparedRun struct {
	template llm.RunSpec // as the user wrote it, placeholders and all
	spec     llm.RunSpec // with the variables filled in
	provider string
	model    llm.Model
	client   *llm.Client
	vars     []byte // the variable values as JSON; nil when none
	presetID int64
	// experiment is the experiment the run is a cell (or a judge's
	// grading) of; 0 when none.
	experiment int64
	// arena is the arena the run makes an answer for; 0 when none.
	arena int64
}

// checkedRun is a run spec with its variables filled in and validated
// for its provider and model: what would be sent, before a key is found.
type checkedRun struct {
	template llm.RunSpec // as the user wrote it, placeholders and all
	spec     llm.RunSpec // with the variables filled in
	provider Provider
	model    llm.Model
}

// checkRun fills the variables into the spec and validates it, sending
// and storing nothing. Field errors come back in fields.
func (h *Handler) checkRun(ctx context.Context, st playgroundState) (checkedRun, field.Errors, error) {
	fields := field.Errors{}
	template := st.RunSpec
	if len(bytes.TrimSpace(template.Body)) == 0 {
		fields["body"] = "The request body is missing: send the JSON body for the endpoint."
		return checkedRun{}, fields, nil
	}
	spec, missing, err := preset.Fill(template, st.Variables, MaxBody)
	var tooLarge *preset.TooLargeError
	if errors.As(err, &tooLarge) {
		fields["variables"] = "The variables make the body too large: " + err.Error() + "."
		return checkedRun{}, fields, nil
	} else if err != nil {
		fields["body"] = "The variables cannot be filled in: " + err.Error()
		return checkedRun{}, fields, nil
	}
	for _, name := range missing {
		fields["variables."+name] = "Give {{" + name + "}} a value."
	}
	if len(fields) > 0 {
		return checkedRun{}, fields, nil
	}
	p, err := h.findProvider(ctx, spec.Provider)
	if errors.Is(err, errNoProvider) {
		fields["provider"] = "There is no provider " + strconv.Quote(spec.Provider) + "."
	} else if err != nil {
		return checkedRun{}, nil, err
	}
	if !spec.Endpoint.Valid() {
		fields["endpoint"] = `Choose the endpoint "chat" or "completion".`
	}
	var model llm.Model
	if len(fields) == 0 {
		if model, err = h.pricedModel(ctx, p, spec.Model()); err != nil {
			return checkedRun{}, nil, err
		}
		for k, v := range llm.Validate(spec, p.Dialect, model) {
			fields[k] = v
		}
	}
	if len(fields) > 0 {
		return checkedRun{}, fields, nil
	}
	return checkedRun{template: template, spec: spec, provider: p, model: model}, nil, nil
}

// prepareRun checks a run (checkRun) and finds the key it is sent with
// for user, sending and storing nothing. Field errors come back in
// fields.
func (h *Handler) prepareRun(ctx context.Context, user int64, st playgroundState) (preparedRun, field.Errors, error) {
	cr, fields, err := h.checkRun(ctx, st)
	if err != nil || len(fields) > 0 {
		return preparedRun{}, fields, err
	}
	p := cr.provider
	client, err := h.client(ctx, user, p)
	switch {
	case errors.Is(err, errNoKey):
		fields = field.Errors{"provider": "There is no API key for " + p.Name + ". Add yours in Settings, or ask an admin for a team key."}
	case errors.Is(err, vault.ErrOpen):
		fields = field.Errors{"provider": "The stored " + p.Name + " key cannot be read (was KNOBS_SECRET changed?). Save it again in Settings."}
	case err != nil:
		return preparedRun{}, nil, err
	}
	if len(fields) > 0 {
		return preparedRun{}, fields, nil
	}
	var vars []byte
	if len(st.Variables) > 0 {
		vars, _ = json.Marshal(st.Variables)
	}
	return preparedRun{template: cr.template, spec: cr.spec, provider: p.ID, model: cr.model, client: client, vars: vars, presetID: st.PresetID}, nil, nil
}

// launchRun stores a prepared run of user, as pane `pane` of comparison
// group when group is not 0, and starts it in one of slots. The hold is
// the budget check the run passed (holdBudget): what it may cost stays
// held until it is stored.
func (h *Handler) launchRun(ctx context.Context, user int64, p preparedRun, group int64, pane int, slots *runner.Slots, hold *budgetHold) (*runner.Run, error) {
	specJSON, err := json.Marshal(p.template)
	if err != nil {
		return nil, err
	}
	presetID := p.presetID
	if presetID != 0 {
		// Only a preset the user can see is recorded; it counts as used,
		// a write the run does not wait for.
		if _, err := h.store.Preset(ctx, user, presetID); err != nil {
			presetID = 0
		} else {
			go h.touchPreset(context.WithoutCancel(ctx), user, presetID)
		}
	}
	row := db.Run{
		ID: h.store.NextRunID(), UserID: user, Provider: p.provider, Endpoint: string(p.spec.Endpoint), Model: p.spec.Model(),
		Spec: string(specJSON), Variables: string(p.vars), PresetID: presetID, GroupID: group, Pane: pane, CreatedAt: time.Now(),
		ExperimentID: p.experiment, ArenaID: p.arena,
	}
	// The runner writes the row, in parallel with the upstream request
	// it starts now: the first token does not wait for the database.
	run, err := slots.Create(row, p.client, p.spec, p.model)
	if err != nil {
		return nil, fiber.NewError(fiber.StatusServiceUnavailable, "Knobs is shutting down; try again in a moment.")
	}
	hold.start(pane, run)
	return run, nil
}

// touchPreset marks a preset used, for the list's order. ctx is the
// run's request's, which the write outlives: it carries the request id.
func (h *Handler) touchPreset(ctx context.Context, user, id int64) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := h.store.TouchPreset(ctx, user, id); err != nil {
		h.log.WarnContext(ctx, "marking a preset used", "preset", id, "err", err)
	}
}

// readSpec reads a RunSpec, with the preset and variable values that came
// with it, from a JSON body ({"provider","endpoint","body"} and optionally
// "variables", "preset_id", "preset_version", "preset_name") or from form
// fields with the body as JSON text.
func readSpec(c *fiber.Ctx) (playgroundState, error) {
	var st playgroundState
	if strings.HasPrefix(c.Get(fiber.HeaderContentType), fiber.MIMEApplicationJSON) {
		dec := json.NewDecoder(bytes.NewReader(c.Body()))
		dec.DisallowUnknownFields()
		err := dec.Decode(&st)
		if err == nil && dec.More() {
			err = errors.New("there is more after the JSON object")
		}
		if err != nil {
			return st, errors.New("The request is not a run spec: " + err.Error() + `. Send {"provider", "endpoint", "body"}.`)
		}
		return st, nil
	}
	st.Provider = c.FormValue("provider")
	st.Endpoint = llm.Endpoint(c.FormValue("endpoint"))
	body := strings.TrimSpace(c.FormValue("body"))
	if !json.Valid([]byte(body)) {
		return st, errors.New("The body field is not valid JSON.")
	}
	st.Body = json.RawMessage(body)
	return st, nil
}
