package handlers

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/runner"
)

// maxExportIDs bounds the ids one export names; more is a selection no
// page makes ("all" takes no ids).
const maxExportIDs = 1000

// exportTimeout bounds one export's reading of the database. The stream
// writer outlives the request's handler, so it cannot use its context.
const exportTimeout = 30 * time.Minute

// exportedRun is one line of an export.
type exportedRun struct {
	ID         int64           `json:"id"`
	CreatedAt  time.Time       `json:"created_at"`
	FinishedAt *time.Time      `json:"finished_at"` // null while running
	Provider   string          `json:"provider"`
	Endpoint   string          `json:"endpoint"`
	Model      string          `json:"model"`
	Status     string          `json:"status"`
	Request    json.RawMessage `json:"request"`     // the RunSpec, with any {{name}} placeholders
	Variables  json.RawMessage `json:"variables"`   // the values filled into them; null when none
	RawRequest json.RawMessage `json:"raw_request"` // as sent, key redacted; null before it was sent
	Response   json.RawMessage `json:"response"`    // the runner's Result; null before the first checkpoint
	Metrics    json.RawMessage `json:"metrics"`     // the Result's metrics
	Note       string          `json:"note"`
	Starred    bool            `json:"starred"`
}

// ExportRuns downloads the user's runs as JSON Lines, one exportedRun a
// line, oldest first: those named by ids (?ids=1,2,3, or ids repeated), or
// all of them when no id is given. Ids that are not the user's are
// skipped, so that a selection made before some runs were deleted still
// exports the rest; when none of the ids is the user's the answer is 404,
// as for one unknown run. Runs are read from the database a batch at a
// time as the download is written.
func (h *Handler) ExportRuns(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	var ids []int64
	for _, arg := range c.Context().QueryArgs().PeekMulti("ids") {
		for _, s := range strings.Split(string(arg), ",") {
			if s = strings.TrimSpace(s); s == "" {
				continue
			}
			id, err := strconv.ParseInt(s, 10, 64)
			if err != nil || id <= 0 {
				return fiber.NewError(fiber.StatusBadRequest, "Run ids are whole numbers, separated by commas.")
			}
			ids = append(ids, id)
		}
	}
	if len(ids) > maxExportIDs {
		return fiber.NewError(fiber.StatusBadRequest, "Export at most "+strconv.Itoa(maxExportIDs)+" runs at once, or all of them.")
	}
	if ids != nil {
		owned, err := h.ownsAny(ctx(c), u.ID, ids)
		if err != nil {
			return err
		}
		if !owned {
			return fiber.NewError(fiber.StatusNotFound, "There is no such run.")
		}
	}

	// A download holds a reader and a page of runs for as long as the
	// client takes: a few at a time per user.
	key := "export:" + strconv.FormatInt(u.ID, 10)
	if h.exports.take(slot{key, h.cfg.ExportsPerUser}) >= 0 {
		return fiber.NewError(fiber.StatusTooManyRequests, fmt.Sprintf(
			"You are already downloading %d exports, the most Knobs allows at once. Wait for one to finish, then try again.", h.cfg.ExportsPerUser))
	}
	exports := h.exports

	c.Set(fiber.HeaderContentType, "application/x-ndjson")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="knobs-runs-`+time.Now().Format("20060102")+`.jsonl"`)
	c.Set(fiber.HeaderCacheControl, "no-store")
	// The fiber ctx must not be touched inside the writer; its request's
	// context (the id the log lines carry) may.
	store, log, logCtx, user := h.store, h.log, ctx(c), u.ID
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		// fasthttp runs the writer whatever becomes of the client, so the
		// place is always given back.
		defer exports.give(key)
		readCtx, cancel := context.WithTimeout(context.Background(), exportTimeout)
		defer cancel()
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		err := store.ExportRuns(readCtx, user, ids, func(r db.Run) error { return enc.Encode(exportLine(r)) })
		if err == nil {
			err = w.Flush()
		}
		if err != nil {
			// Too late for an error status: the download ends short.
			log.ErrorContext(logCtx, "export of runs ended early", "user", user, "err", err)
		}
	})
	return nil
}

// ownsAny reports whether any of ids is one of user's runs.
func (h *Handler) ownsAny(c context.Context, user int64, ids []int64) (bool, error) {
	for _, id := range ids {
		_, err := h.store.Run(c, user, id)
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, db.ErrNotFound) {
			return false, err
		}
	}
	return false, nil
}

// exportLine is a stored run as one line of an export. The stored JSON is
// copied as it is; what does not parse (nothing the runner writes) is null.
func exportLine(r db.Run) exportedRun {
	line := exportedRun{
		ID: r.ID, CreatedAt: r.CreatedAt.UTC(), Provider: r.Provider, Endpoint: r.Endpoint, Model: r.Model, Status: r.Status,
		Request: jsonOrNull(r.Spec), RawRequest: jsonOrNull(r.RawRequest), Response: jsonOrNull(r.Result),
		Note: r.Note, Starred: r.Starred, Metrics: json.RawMessage("null"), Variables: jsonOrNull(r.Variables),
	}
	if !r.FinishedAt.IsZero() {
		t := r.FinishedAt.UTC()
		line.FinishedAt = &t
	}
	var res struct {
		Metrics *runner.Metrics `json:"metrics"`
	}
	if json.Unmarshal(line.Response, &res) == nil && res.Metrics != nil {
		line.Metrics, _ = json.Marshal(res.Metrics)
	}
	return line
}

func jsonOrNull(s string) json.RawMessage {
	if s == "" || !json.Valid([]byte(s)) {
		return json.RawMessage("null")
	}
	return json.RawMessage(s)
}
