package handlers

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"knobs/dataset"
	"knobs/db"
	"knobs/experiment"
	"knobs/grade"
)

// exportPage is how many cells an export reads at a time.
const exportPage = 500

// ExportExperiment downloads an experiment's results, every cell with
// its row, output, measurements, grades and ratings: as JSON Lines
// (?format=jsonl, one cell a line, as the results API gives it) or as CSV
// (?format=csv, a column per variable and three per grader, values a
// spreadsheet could run as formulas quoted). Cells are read a page at a
// time as the download is written.
func (h *Handler) ExportExperiment(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "experiment")
	if err != nil {
		return err
	}
	format := c.Query("format", "csv")
	if format != "csv" && format != "jsonl" {
		return &Problem{Status: fiber.StatusUnprocessableEntity, Message: `The format is "csv" or "jsonl".`}
	}
	e, err := h.store.Experiment(ctx(c), u.ID, id)
	if errors.Is(err, db.ErrNotFound) {
		return &Problem{Status: fiber.StatusNotFound, Message: "There is no such experiment."}
	} else if err != nil {
		return err
	}
	variants, err := h.store.ExperimentVariants(ctx(c), id)
	if err != nil {
		return err
	}
	cols, err := h.store.ExperimentColumns(ctx(c), id)
	if err != nil {
		return err
	}
	var graders []experiment.Grader
	_ = json.Unmarshal([]byte(e.Graders), &graders)

	key := "export:" + strconv.FormatInt(u.ID, 10)
	if h.exports.take(slot{key, h.cfg.ExportsPerUser}) >= 0 {
		return &Problem{Status: fiber.StatusTooManyRequests, Message: fmt.Sprintf(
			"You are already downloading %d exports, the most Knobs allows at once. Wait for one to finish, then try again.", h.cfg.ExportsPerUser)}
	}
	exports := h.exports
	name := "knobs-experiment-" + strconv.FormatInt(id, 10)
	if format == "csv" {
		c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
		c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+name+`.csv"`)
	} else {
		c.Set(fiber.HeaderContentType, "application/x-ndjson")
		c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+name+`.jsonl"`)
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	// The fiber ctx must not be touched inside the writer; its request's
	// context (the id the log lines carry) may.
	store, log, logCtx, user := h.store, h.log, ctx(c), u.ID
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer exports.give(key)
		readCtx, cancel := context.WithTimeout(context.Background(), exportTimeout)
		defer cancel()
		err := func() error {
			write := exportJSONL(w)
			if format == "csv" {
				var err error
				if write, err = exportCSV(w, cols, variants, graders); err != nil {
					return err
				}
			}
			for off := 0; ; off += exportPage {
				cells, err := store.ExperimentCells(readCtx, user, id, off, exportPage)
				if err != nil {
					return err
				}
				for _, cell := range cells {
					if err := write(cell); err != nil {
						return err
					}
				}
				if len(cells) < exportPage {
					return w.Flush()
				}
			}
		}()
		if err != nil {
			log.ErrorContext(logCtx, "export of an experiment ended early", "experiment", id, "err", err)
		}
	})
	return nil
}

// exportJSONL writes each cell as the results API gives it, a line each.
func exportJSONL(w *bufio.Writer) func(db.Cell) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return func(c db.Cell) error { return enc.Encode(cellResult(c)) }
}

// exportCSV writes the header at once, and then a line per cell.
func exportCSV(w *bufio.Writer, cols []string, variants []db.ExperimentVariant, graders []experiment.Grader) (func(db.Cell) error, error) {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	head := []string{"row", "repeat", "variant", "variant_name"}
	head = append(head, cols...)
	head = append(head, "expected", "status", "output", "finish_reason", "error", "latency_ms", "tokens", "cost_usd", "attempts", "run_id")
	for _, g := range graders {
		n := grade.NameOf(g.Spec)
		head = append(head, n+" pass", n+" score", n+" reason")
	}
	head = append(head, "thumbs_up", "thumbs_down", "notes")
	for i := range head {
		head[i] = dataset.SpreadsheetSafe(head[i])
	}
	if err := cw.Write(head); err != nil {
		return nil, err
	}
	return func(c db.Cell) error {
		vname := ""
		if c.Variant >= 0 && c.Variant < len(variants) {
			vname = variants[c.Variant].Name
		}
		rec := []string{strconv.Itoa(c.Row + 1), strconv.Itoa(c.Repeat + 1), strconv.Itoa(c.Variant), vname}
		for _, k := range cols {
			rec = append(rec, c.Vars[k])
		}
		expected := ""
		if c.Expected != nil {
			expected = *c.Expected
		}
		run := ""
		if c.RunID != 0 {
			run = strconv.FormatInt(c.RunID, 10)
		}
		rec = append(rec, expected, c.Status, c.Output, c.FinishReason, c.Error, strconv.FormatFloat(c.LatencyMs, 'f', 1, 64),
			strconv.Itoa(c.Tokens), strconv.FormatFloat(c.CostUSD, 'f', -1, 64), strconv.Itoa(c.Attempts), run)
		for i := range graders {
			g, ok := gradeOf(c, i)
			switch {
			case !ok:
				rec = append(rec, "", "", "")
			case g.Error != "":
				rec = append(rec, "error", "", g.Error)
			default:
				rec = append(rec, strconv.FormatBool(g.Pass), strconv.FormatFloat(g.Score, 'f', -1, 64), g.Reason)
			}
		}
		up, down, notes := 0, 0, ""
		for _, r := range c.Ratings {
			if r.Thumbs != nil && *r.Thumbs {
				up++
			} else if r.Thumbs != nil {
				down++
			}
			if r.Note != "" {
				if notes != "" {
					notes += "\n"
				}
				notes += r.Username + ": " + r.Note
			}
		}
		rec = append(rec, strconv.Itoa(up), strconv.Itoa(down), notes)
		for i := range rec {
			rec[i] = dataset.SpreadsheetSafe(rec[i])
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
		cw.Flush()
		return cw.Error()
	}, nil
}
