package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/field"
	"knobs/llm"
	"knobs/views"
)

// maxDatasetRuns bounds the runs one dataset is made from: a History
// selection, at most a few pages of it.
const maxDatasetRuns = 1000

// runIDs reads a comma-separated list of run ids.
func runIDs(s string) ([]int64, error) {
	var ids []int64
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		id, err := strconv.ParseInt(part, 10, 64)
		if err != nil || id <= 0 {
			return nil, fiber.NewError(fiber.StatusBadRequest, "Run ids are whole numbers, separated by commas.")
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil, fiber.NewError(fiber.StatusBadRequest, "Select runs in History first.")
	}
	if len(ids) > maxDatasetRuns {
		return nil, fiber.NewError(fiber.StatusBadRequest, fmt.Sprintf("Make a dataset from at most %d runs at once.", maxDatasetRuns))
	}
	return ids, nil
}

func joinIDs(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(parts, ",")
}

// CreateDatasetFromRuns makes a dataset of the user's selected runs: a
// row per run, its variables' values (or its prompt as "input" for a
// run without variables) and its output as expected, in the order
// selected.
func (h *Handler) CreateDatasetFromRuns(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	ids, err := runIDs(c.FormValue("runs"))
	if err != nil {
		return err
	}
	v := views.NewDatasetView{Name: c.FormValue("name"), Runs: joinIDs(ids), NRuns: len(ids)}
	name, _, fe := datasetFields(v.Name, "", "")
	if !fe.Empty() {
		return h.renderNewDataset(c, v, fe)
	}
	lines := make([][]byte, 0, len(ids))
	for _, id := range ids {
		run, err := h.store.Run(ctx(c), u.ID, id)
		if errors.Is(err, db.ErrNotFound) {
			continue // deleted since it was selected
		} else if err != nil {
			return err
		}
		line, err := json.Marshal(runRow(h.readRunLogged(ctx(c), u.ID, run)))
		if err != nil {
			return err
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return fiber.NewError(fiber.StatusNotFound, "There is no such run.")
	}
	t, err := readRowLines(lines)
	if fe, ok := rowErrors(err, rowList("runs", len(lines))); ok {
		return h.renderNewDataset(c, v, field.Errors{"runs": "Nothing was made: " + fe.Describe()})
	} else if err != nil {
		return err
	}
	d, err := h.store.CreateDataset(ctx(c), db.Dataset{OwnerID: u.ID, Name: name, Columns: t.Columns}, tableRows(t))
	if err != nil {
		return err
	}
	return redirectWith(c, datasetPath(d.ID), fmt.Sprintf("Created the dataset %s with %s from History.", d.Name, rowsText(d.Rows)))
}

// runLine is a run as a dataset row, in the JSON Lines shape.
type runLine struct {
	Vars     map[string]string `json:"vars"`
	Expected *string           `json:"expected,omitempty"`
}

func runRow(sr storedRun) runLine {
	row := runLine{Vars: sr.Vars}
	if len(row.Vars) == 0 {
		row.Vars = map[string]string{"input": promptText(sr.Spec)}
	}
	if len(sr.Result.Choices) > 0 {
		out := sr.Result.Choices[0].Content
		row.Expected = &out
	}
	return row
}

// promptText is what a run asked: its prompt, else its last user
// message.
func promptText(spec llm.RunSpec) string {
	_, msgs, prompt, hasPrompt := requestView(spec.Body)
	if hasPrompt {
		return prompt
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return msgs[i].Content
		}
	}
	return ""
}
