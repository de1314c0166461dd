package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"knobs/runner"
	"knobs/web/sse"
)

// A comparison has this many panes, at least and at most; six is also
// what a browser's six connections per origin would have allowed.
const (
	minPanes = 2
	maxPanes = 6
)

// maxGroupTitle bounds a comparison's title, in characters.
const maxGroupTitle = 200

// compareRequest is the body of POST /compare/runs.
type compareRequest struct {
	Title string            `json:"title"`
	Panes []playgroundState `json:"panes"`
}

// compareCreated is the answer to a comparison started.
type compareCreated struct {
	Group  int64   `json:"group"`
	Runs   []int64 `json:"runs"` // in pane order
	Events string  `json:"events"`
}

// CreateCompareRuns starts a comparison: it validates every pane, then
// stores a group and starts every pane's run at once. It takes JSON
// {"title", "panes": [{"provider","endpoint","body","variables"?}, ...]}
// and answers {"group","runs","events"}.
func (h *Handler) CreateCompareRuns(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	var req compareRequest
	dec := json.NewDecoder(bytes.NewReader(c.Body()))
	dec.DisallowUnknownFields()
	err := dec.Decode(&req)
	if err == nil && dec.More() {
		err = errors.New("there is more after the JSON object")
	}
	if err != nil {
		return fiber.NewError(fiber.StatusBadRequest, "The request is not a comparison: "+err.Error()+`. Send {"title", "panes": [{"provider", "endpoint", "body"}, ...]}.`)
	}
	if n := len(req.Panes); n < minPanes || n > maxPanes {
		return fiber.NewError(fiber.StatusUnprocessableEntity,
			"A comparison has "+strconv.Itoa(minPanes)+" to "+strconv.Itoa(maxPanes)+" panes; this one has "+strconv.Itoa(n)+".")
	}
	if utf8.RuneCountInString(req.Title) > maxGroupTitle {
		return fiber.NewError(fiber.StatusUnprocessableEntity, "The title is longer than "+strconv.Itoa(maxGroupTitle)+" characters.")
	}

	prepared := make([]preparedRun, len(req.Panes))
	var wrong []PaneFields
	for i, pane := range req.Panes {
		p, fields, err := h.prepareRun(ctx(c), u.ID, pane)
		if err != nil {
			return err
		}
		if len(fields) > 0 {
			wrong = append(wrong, PaneFields{Index: i, Fields: fields})
		}
		prepared[i] = p
	}
	if len(wrong) > 0 {
		return &Problem{Status: fiber.StatusUnprocessableEntity, Message: "Nothing was sent: fix the panes marked.", Panes: wrong}
	}

	// Within the budgets for every pane, or none: a comparison starts
	// whole.
	hold, warn, err := h.holdBudget(ctx(c), u.ID, prepared)
	if err != nil {
		return err
	}
	defer hold.release()
	if warn != "" {
		c.Set(budgetWarningHeader, warn)
	}
	// Room for every pane, or none.
	slots, err := h.reserveRuns(u.ID, len(prepared))
	if err != nil {
		return err
	}
	defer slots.Release()
	panes, err := json.Marshal(req.Panes)
	if err != nil {
		return err
	}
	group, err := h.store.CreateGroup(ctx(c), u.ID, req.Title, string(panes))
	if err != nil {
		return err
	}
	out := compareCreated{Group: group, Runs: make([]int64, len(prepared)), Events: groupPath(group) + "/events"}
	runs := make([]*runner.Run, len(prepared))
	for i, p := range prepared {
		run, err := h.launchRun(ctx(c), u.ID, p, group, i, slots, hold)
		if err != nil {
			return err // shutting down: the panes started go on and are stored
		}
		runs[i], out.Runs[i] = run, run.ID
	}
	if wantsEventStream(c) {
		// The panes' events in the answer itself, as GET /groups/{id}/events
		// gives them: one round trip less to the first token.
		c.Set("X-Knobs-Group", strconv.FormatInt(group, 10))
		ids := make([]string, len(out.Runs))
		for i, id := range out.Runs {
			ids[i] = strconv.FormatInt(id, 10)
		}
		c.Set("X-Knobs-Runs", strings.Join(ids, ","))
		c.Set(fiber.HeaderLocation, out.Events)
		srcs := make([]sse.Source, len(runs))
		leaves := make([]func(), len(runs))
		for i, run := range runs {
			srcs[i], leaves[i] = run, run.Subscribe()
		}
		src := sse.NewGroup(srcs, make([]int, len(runs)), scoreboard(out.Runs))
		return h.serveEvents(c, src, 0, func() {
			src.Close()
			for _, leave := range leaves {
				leave()
			}
		})
	}
	for _, run := range runs {
		if err := run.WaitStored(); err != nil {
			return err
		}
	}
	return c.Status(fiber.StatusCreated).JSON(out)
}

// groupPath is the URL path of comparison group id.
func groupPath(id int64) string { return "/groups/" + strconv.FormatInt(id, 10) }
