package handlers

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/grade"
	"knobs/views"
)

// Bounds of the experiment page.
const (
	experimentRowsPerPage = 50
	// experimentCellLines is how many lines of an output the grid shows
	// before "Show all".
	experimentCellLines = 6
	// experimentSimilar is the token overlap at which repeats' answers
	// are grouped as near-identical.
	experimentSimilar = 0.8
)

// ShowExperimentPage shows an experiment the user sees: its progress,
// per-variant summary, and a page of its grid (rows × variants), which
// the page script fills live from the experiment's events.
func (h *Handler) ShowExperimentPage(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "experiment")
	if err != nil {
		return err
	}
	e, err := h.store.Experiment(ctx(c), u.ID, id)
	if errors.Is(err, db.ErrNotFound) {
		return fiber.NewError(fiber.StatusNotFound, "There is no such experiment.")
	} else if err != nil {
		return err
	}
	d, err := h.experimentDetail(ctx(c), u.ID, e)
	if err != nil {
		return err
	}
	v := views.ExperimentView{Page: h.page(c, e.Name, "experiments"), ID: e.ID, Name: e.Name, Status: e.Status, Error: e.Error,
		Owner: e.OwnerName, Dataset: fmt.Sprintf("%s v%d", e.DatasetName, e.DatasetVersion), Repeats: e.Repeats,
		Live: e.Status == db.ExperimentRunning, CanCancel: e.Status == db.ExperimentRunning && (e.OwnerID == u.ID || u.IsAdmin()),
		Done: d.Progress.Done, Total: d.Progress.Total, Failed: d.Progress.Failed, Back: c.OriginalURL()}
	if v.Total > 0 {
		v.Percent = v.Done * 100 / v.Total
	}
	experimentTimes(&v, e, d)
	type graderName struct {
		Name string `json:"name"`
		Type string `json:"type"`
	}
	var gnames []graderName
	for _, g := range d.Graders {
		v.Graders = append(v.Graders, g.Name)
		gnames = append(gnames, graderName{g.Name, g.Type})
	}
	gj, _ := json.Marshal(gnames)
	v.GradersJSON = string(gj)
	for _, vr := range d.Variants {
		v.Variants = append(v.Variants, vr.Name)
	}
	for i, a := range d.Aggregates {
		v.Summary = append(v.Summary, variantSummary(d.Variants[i], a))
	}
	if e.OwnerID == u.ID {
		shares, err := h.store.Shares(ctx(c), u.ID, db.ShareExperiment, e.ID)
		if err != nil {
			return err
		}
		box := views.ShareBox{Action: "/experiments/" + strconv.FormatInt(e.ID, 10) + "/shares", What: "experiment's report", CSRF: v.Page.CSRF}
		for _, sh := range shares {
			box.Shares = append(box.Shares, shareRow(c, sh))
		}
		v.Share = &box
	}
	if e.DatasetID != 0 {
		peers, err := h.store.Experiments(ctx(c), u.ID, 0, 200)
		if err != nil {
			return err
		}
		for _, p := range peers {
			if p.ID != e.ID && p.DatasetID == e.DatasetID {
				v.Peers = append(v.Peers, views.KeyValue{Key: strconv.FormatInt(p.ID, 10), Value: fmt.Sprintf("%s (experiment %d)", p.Name, p.ID)})
			}
		}
	}

	v.Filter = views.ExperimentFilter{Failures: c.Query("failures") == "1", Disagree: c.Query("disagree") == "1",
		Tag: clip(strings.TrimSpace(c.Query("tag")), 100), Sort: c.Query("sort")}
	if v.Filter.Sort != "latency" && v.Filter.Sort != "score" {
		v.Filter.Sort = "row"
	}
	page, _ := strconv.Atoi(c.Query("page"))
	page = max(page, 1)
	rows, matching, err := h.experimentRows(c, u, e, len(d.Variants), v.Filter, page)
	if err != nil {
		return err
	}
	v.Matching = matching
	v.Pages = (matching + experimentRowsPerPage - 1) / experimentRowsPerPage
	v.PageNum = page
	for _, r := range rows {
		v.Rows = append(v.Rows, h.gridRow(u.ID, r, d.Graders, e.Repeats))
	}
	q := url.Values{}
	if v.Filter.Failures {
		q.Set("failures", "1")
	}
	if v.Filter.Disagree {
		q.Set("disagree", "1")
	}
	if v.Filter.Tag != "" {
		q.Set("tag", v.Filter.Tag)
	}
	if v.Filter.Sort != "row" {
		q.Set("sort", v.Filter.Sort)
	}
	pageURL := func(n int) string {
		q.Set("page", strconv.Itoa(n))
		return "/experiments/" + strconv.FormatInt(e.ID, 10) + "?" + q.Encode()
	}
	if page > 1 {
		v.PrevURL = pageURL(page - 1)
	}
	if page < v.Pages {
		v.NextURL = pageURL(page + 1)
	}
	return Render(c, fiber.StatusOK, views.ExperimentPage(v))
}

// experimentTimes fills the progress figures: live ones while the
// experiment runs here, else from when it was made and ended.
func experimentTimes(v *views.ExperimentView, e db.Experiment, d ExperimentDetail) {
	elapsed := time.Duration(d.Progress.ElapsedMs) * time.Millisecond
	if elapsed == 0 {
		end := e.FinishedAt
		if end.IsZero() {
			end = time.Now()
		}
		elapsed = end.Sub(e.CreatedAt)
	}
	rate := d.Progress.CellsPerSec
	if rate == 0 && elapsed > 0 {
		rate = float64(d.Progress.Done) / elapsed.Seconds()
	}
	v.Elapsed = elapsed.Round(time.Second).String()
	v.Rate = fmt.Sprintf("%.1f cells/s", rate)
	switch {
	case e.Status != db.ExperimentRunning:
		v.Remaining = "—"
	case d.Progress.RemainingMs > 0:
		v.Remaining = (time.Duration(d.Progress.RemainingMs) * time.Millisecond).Round(time.Second).String()
	default:
		v.Remaining = "…"
	}
	spent := 0.0
	for _, a := range d.Aggregates {
		spent += a.CostUSD
	}
	v.Spent = money(spent)
}

func money(usd float64) string {
	if usd == 0 {
		return "$0"
	}
	return dollars(usd)
}

func variantSummary(vr ExperimentVariant, a VariantAggregate) views.VariantSummary {
	s := views.VariantSummary{Name: vr.Name, Model: vr.Model, Cells: a.Cells, Done: a.Done, Errors: a.Errors,
		Tokens: grouped(int64(a.Tokens)), Cost: money(a.CostUSD), Thumbs: fmt.Sprintf("▲ %d · ▼ %d", a.RatedUp, a.RatedDown),
		MeanScore: "—", P50: "—", P95: "—"}
	var sum float64
	graded := 0
	for _, g := range a.Graders {
		text := "—"
		if g.PassRate != nil {
			text = fmt.Sprintf("%d/%d · %.0f%%", g.Passed, g.Graded, *g.PassRate*100)
			sum += *g.MeanScore * float64(g.Graded)
			graded += g.Graded
		}
		if g.Errors > 0 {
			text += fmt.Sprintf(" · %d errors", g.Errors)
		}
		s.Graders = append(s.Graders, text)
	}
	if graded > 0 {
		s.MeanScore = fmt.Sprintf("%.2f", sum/float64(graded))
	}
	if a.P50LatencyMs != nil {
		s.P50 = latencyText(*a.P50LatencyMs)
	}
	if a.P95LatencyMs != nil {
		s.P95 = latencyText(*a.P95LatencyMs)
	}
	return s
}

func latencyText(ms float64) string {
	if ms >= 1000 {
		return fmt.Sprintf("%.1f s", ms/1000)
	}
	return fmt.Sprintf("%.0f ms", ms)
}

// experimentRow is one dataset row's cells, by variant then repeat.
type experimentRow struct {
	row   int
	cells [][]db.Cell
}

// experimentRows loads one page of the grid's rows: straight from the
// store by offset when neither filtered nor sorted, else every cell,
// filtered and sorted here (an experiment has at most ExperimentMaxCells).
func (h *Handler) experimentRows(c *fiber.Ctx, u db.User, e db.Experiment, variants int, f views.ExperimentFilter, page int) ([]experimentRow, int, error) {
	perRow := max(variants*e.Repeats, 1)
	totalRows := e.Total / perRow
	plain := !f.Failures && !f.Disagree && f.Tag == "" && f.Sort == "row"
	var cells []db.Cell
	var err error
	if plain {
		cells, err = h.store.ExperimentCells(ctx(c), u.ID, e.ID, (page-1)*experimentRowsPerPage*perRow, experimentRowsPerPage*perRow)
	} else {
		cells, err = h.store.ExperimentCells(ctx(c), u.ID, e.ID, 0, ExperimentMaxCells)
	}
	if err != nil {
		return nil, 0, err
	}
	var rows []experimentRow
	for _, cell := range cells {
		if len(rows) == 0 || rows[len(rows)-1].row != cell.Row {
			rows = append(rows, experimentRow{row: cell.Row, cells: make([][]db.Cell, variants)})
		}
		r := &rows[len(rows)-1]
		if cell.Variant >= 0 && cell.Variant < variants {
			r.cells[cell.Variant] = append(r.cells[cell.Variant], cell)
		}
	}
	if plain {
		return rows, totalRows, nil
	}
	rows = slices.DeleteFunc(rows, func(r experimentRow) bool { return !rowMatches(r, u.ID, f) })
	switch f.Sort {
	case "latency":
		slices.SortStableFunc(rows, func(a, b experimentRow) int { return cmp.Compare(rowLatency(b), rowLatency(a)) })
	case "score":
		slices.SortStableFunc(rows, func(a, b experimentRow) int { return cmp.Compare(rowScore(a), rowScore(b)) })
	}
	matching := len(rows)
	from := min((page-1)*experimentRowsPerPage, len(rows))
	return rows[from:min(from+experimentRowsPerPage, len(rows))], matching, nil
}

func rowMatches(r experimentRow, viewer int64, f views.ExperimentFilter) bool {
	var hit, tagged bool
	for _, vc := range r.cells {
		for _, c := range vc {
			if f.Tag != "" && slices.Contains(c.Tags, f.Tag) {
				tagged = true
			}
			if (!f.Failures || cellFailed(c)) && (!f.Disagree || cellDisagrees(c)) {
				hit = true
			}
		}
	}
	return hit && (f.Tag == "" || tagged)
}

// cellFailed says whether a cell errored or a grader did not pass it.
func cellFailed(c db.Cell) bool {
	if c.Status == db.CellError {
		return true
	}
	for _, g := range c.Grades {
		if !g.Pass {
			return true
		}
	}
	return false
}

// cellDisagrees says whether people's thumbs and the graders' verdict on
// a cell differ: a thumbs up on a cell a grader failed, or down on one
// every grader passed.
func cellDisagrees(c db.Cell) bool {
	graded, passed := false, true
	for _, g := range c.Grades {
		if g.Error != "" {
			continue
		}
		graded = true
		passed = passed && g.Pass
	}
	if !graded {
		return false
	}
	for _, r := range c.Ratings {
		if r.Thumbs != nil && *r.Thumbs != passed {
			return true
		}
	}
	return false
}

func rowLatency(r experimentRow) float64 {
	m := 0.0
	for _, vc := range r.cells {
		for _, c := range vc {
			m = max(m, c.LatencyMs)
		}
	}
	return m
}

// rowScore is the mean score of a row's grades; a row without grades
// sorts last.
func rowScore(r experimentRow) float64 {
	sum, n := 0.0, 0
	for _, vc := range r.cells {
		for _, c := range vc {
			for _, g := range c.Grades {
				if g.Error == "" {
					sum += g.Score
					n++
				}
			}
		}
	}
	if n == 0 {
		return 2
	}
	return sum / float64(n)
}

func (h *Handler) gridRow(viewer int64, r experimentRow, graders []ExperimentGrader, repeats int) views.GridRow {
	g := views.GridRow{Row: r.row}
	for _, vc := range r.cells {
		if len(vc) > 0 && g.Vars == nil {
			first := vc[0]
			keys := make([]string, 0, len(first.Vars))
			for k := range first.Vars {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				g.Vars = append(g.Vars, views.KeyValue{Key: k, Value: clipRunes(first.Vars[k], 300)})
			}
			if first.Expected != nil {
				g.Expected, g.HasExp = clipRunes(*first.Expected, 300), true
			}
			g.Tags = first.Tags
		}
		g.Cells = append(g.Cells, h.gridCell(viewer, vc, graders, repeats))
	}
	return g
}

func (h *Handler) gridCell(viewer int64, cells []db.Cell, graders []ExperimentGrader, repeats int) views.GridCell {
	var gc views.GridCell
	var outputs []string
	passed, graded := 0, 0
	for _, c := range cells {
		gc.Repeats = append(gc.Repeats, h.cellView(viewer, c, graders))
		if c.Status == db.CellDone {
			outputs = append(outputs, c.Output)
		}
		if c.Status == db.CellDone || c.Status == db.CellError {
			graded++
			if !cellFailed(c) {
				passed++
			}
		}
	}
	if repeats > 1 && len(outputs) > 0 && len(outputs) <= grade.MaxRepeats {
		groups, err := grade.Cluster(outputs, experimentSimilar)
		if err == nil {
			for _, g := range groups {
				ag := views.AnswerGroup{Text: g.Text, Count: g.Count}
				if g.Distinct > 1 {
					ag.Similarity = fmt.Sprintf("%.2f", g.Similarity)
				}
				gc.Groups = append(gc.Groups, ag)
			}
		}
		if graded > 0 {
			gc.PassRate = fmt.Sprintf("%d/%d repeats pass", passed, graded)
			gc.Flaky = passed > 0 && passed < graded
			if gc.Flaky {
				gc.PassRate += " · flaky"
			}
		}
	}
	return gc
}

func (h *Handler) cellView(viewer int64, c db.Cell, graders []ExperimentGrader) views.CellView {
	cv := views.CellView{ID: c.ID, Repeat: c.Repeat, Status: c.Status, Output: c.Output, Error: c.Error, RunID: c.RunID,
		Latency: "—", Tokens: "—", Cost: "—"}
	if c.Status == db.CellDone || c.Status == db.CellError {
		cv.Latency = latencyText(c.LatencyMs)
		cv.Tokens = grouped(int64(c.Tokens)) + " tokens"
		cv.Cost = "no price known"
		if c.CostKnown {
			cv.Cost = money(c.CostUSD)
		}
	}
	if c.Output != "" {
		cv.HTML = h.md.Render(c.Output)
		cv.Long = strings.Count(c.Output, "\n") >= experimentCellLines || utf8.RuneCountInString(c.Output) > 400
	}
	for _, g := range c.Grades {
		b := views.GradeBadge{Name: "grader " + strconv.Itoa(g.Grader+1), Kind: "fail", Reason: g.Reason}
		if g.Grader >= 0 && g.Grader < len(graders) {
			b.Name = graders[g.Grader].Name
		}
		switch {
		case g.Error != "":
			b.Kind, b.Reason = "error", g.Error
		case g.Pass:
			b.Kind = "pass"
		}
		if b.Reason == "" {
			b.Reason = fmt.Sprintf("score %.2f", g.Score)
		} else {
			b.Reason = fmt.Sprintf("%s (score %.2f)", b.Reason, g.Score)
		}
		cv.Grades = append(cv.Grades, b)
	}
	for _, r := range c.Ratings {
		text := r.Username
		if r.Thumbs != nil {
			text += map[bool]string{true: " ▲ good", false: " ▼ bad"}[*r.Thumbs]
		}
		if r.Stars > 0 {
			text += " " + strings.Repeat("★", r.Stars)
		}
		if r.Note != "" {
			text += " — " + r.Note
		}
		cv.Ratings = append(cv.Ratings, text)
		if r.UserID == viewer {
			cv.MyNote = r.Note
			if r.Thumbs != nil {
				cv.MyThumbs = map[bool]string{true: "up", false: "down"}[*r.Thumbs]
			}
		}
	}
	return cv
}

func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
