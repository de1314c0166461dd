package handlers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/views"
)

// reportMaxCells bounds the cells a report holds; past it the report
// says so and points at the CSV download.
const reportMaxCells = 5000

// experimentReport renders an experiment's results as one
// self-contained HTML file (views.ExperimentReport).
func (h *Handler) experimentReport(ctx context.Context, viewer int64, e db.Experiment, sharedBy string) ([]byte, error) {
	d, err := h.experimentDetail(ctx, viewer, e)
	if err != nil {
		return nil, err
	}
	cells, err := h.store.ExperimentCells(ctx, viewer, e.ID, 0, reportMaxCells+1)
	if err != nil {
		return nil, err
	}
	r := views.ReportView{Name: e.Name, Owner: e.OwnerName, Dataset: fmt.Sprintf("%s v%d", e.DatasetName, e.DatasetVersion),
		Status: e.Status, Created: e.CreatedAt.Format("2 Jan 2006 15:04"), Made: time.Now().Format("2 Jan 2006 15:04"),
		Progress: fmt.Sprintf("%d of %d cells, %d failed", d.Progress.Done, d.Progress.Total, d.Progress.Failed), SharedBy: sharedBy}
	for _, g := range d.Graders {
		r.Graders = append(r.Graders, g.Name)
	}
	for i, v := range d.Variants {
		rv := views.ReportVariant{Name: v.Name, Model: v.Model, P50: "—", P95: "—"}
		if i < len(d.Aggregates) {
			a := d.Aggregates[i]
			for _, g := range a.Graders {
				p := "—"
				if g.PassRate != nil {
					p = fmt.Sprintf("%.0f%% (%d/%d)", *g.PassRate*100, g.Passed, g.Graded)
				}
				if g.Errors > 0 {
					p += fmt.Sprintf(", %d not graded", g.Errors)
				}
				rv.Passes = append(rv.Passes, p)
			}
			if a.P50LatencyMs != nil {
				rv.P50 = fmt.Sprintf("%.0f ms", *a.P50LatencyMs)
			}
			if a.P95LatencyMs != nil {
				rv.P95 = fmt.Sprintf("%.0f ms", *a.P95LatencyMs)
			}
			rv.Tokens, rv.Cost, rv.Errors = strconv.Itoa(a.Tokens), fmt.Sprintf("$%.4f", a.CostUSD), strconv.Itoa(a.Errors)
			rv.Ratings = fmt.Sprintf("👍 %d · 👎 %d", a.RatedUp, a.RatedDown)
		}
		r.Variants = append(r.Variants, rv)
	}
	if len(cells) > reportMaxCells {
		cells = cells[:reportMaxCells]
		r.Cut = fmt.Sprintf("This report holds the first %d cells; download the CSV for all %d.", reportMaxCells, d.Progress.Total)
	}
	for _, c := range cells {
		if len(r.Rows) == 0 || r.Rows[len(r.Rows)-1].Number != c.Row+1 {
			row := views.ReportRow{Number: c.Row + 1}
			for _, k := range slices.Sorted(maps.Keys(c.Vars)) {
				row.Vars = append(row.Vars, views.KeyValue{Key: k, Value: c.Vars[k]})
			}
			if c.Expected != nil {
				row.Expected, row.HasExp = *c.Expected, true
			}
			r.Rows = append(r.Rows, row)
		}
		rc := views.ReportCell{Repeat: c.Repeat, Status: c.Status, Output: c.Output, Error: c.Error,
			Figures: fmt.Sprintf("%.0f ms · %d tokens", c.LatencyMs, c.Tokens)}
		if c.Variant < len(d.Variants) {
			rc.Variant = d.Variants[c.Variant].Name
		}
		if c.CostKnown {
			rc.Figures += fmt.Sprintf(" · $%.5f", c.CostUSD)
		}
		for _, g := range c.Grades {
			name := "grader " + strconv.Itoa(g.Grader)
			if g.Grader < len(r.Graders) {
				name = r.Graders[g.Grader]
			}
			rg := views.ReportGrade{Name: name, Class: "fail", Label: "fail", Reason: g.Reason}
			switch {
			case g.Error != "":
				rg.Class, rg.Label, rg.Reason = "error", "not graded", g.Error
			case g.Pass:
				rg.Class, rg.Label = "pass", "pass"
			}
			rc.Grades = append(rc.Grades, rg)
		}
		last := &r.Rows[len(r.Rows)-1]
		last.Cells = append(last.Cells, rc)
	}
	var b bytes.Buffer
	if err := views.ExperimentReport(r).Render(ctx, &b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// reportPolicy is the Content-Security-Policy a report is served with:
// nothing may load or run, and the one inline style sheet is allowed by
// its hash.
func reportPolicy(page []byte) string {
	policy := "default-src 'none'; img-src data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
	_, rest, ok := bytes.Cut(page, []byte("<style>"))
	css, _, ok2 := bytes.Cut(rest, []byte("</style>"))
	if ok && ok2 {
		sum := sha256.Sum256(css)
		policy += "; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	return policy
}

// sendReport answers a report page, as a download when asked.
func sendReport(c *fiber.Ctx, e db.Experiment, page []byte) error {
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	c.Set("Content-Security-Policy", reportPolicy(page))
	c.Set(fiber.HeaderCacheControl, "private, no-store")
	if c.Query("download") != "" {
		c.Set(fiber.HeaderContentDisposition, `attachment; filename="knobs-experiment-`+strconv.FormatInt(e.ID, 10)+`.html"`)
	}
	return c.Send(page)
}

// ShowExperimentReport answers the report of an experiment the user
// sees; ?download=1 makes it a file to save and send.
func (h *Handler) ShowExperimentReport(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "experiment")
	if err != nil {
		return err
	}
	e, err := h.store.Experiment(ctx(c), u.ID, id)
	if err != nil {
		return err
	}
	page, err := h.experimentReport(ctx(c), u.ID, e, "")
	if err != nil {
		return err
	}
	return sendReport(c, e, page)
}

// ShowSharedExperiment answers the report behind an experiment's share
// link: anyone for a public link, members for a team link.
func (h *Handler) ShowSharedExperiment(c *fiber.Ctx) error {
	notFound := fiber.NewError(fiber.StatusNotFound, "This link does not open anything: it is unknown or was revoked.")
	token := c.Params("token")
	if len(token) > 64 {
		return notFound
	}
	e, share, err := h.store.SharedExperiment(ctx(c), token)
	if errors.Is(err, db.ErrNotFound) {
		return notFound
	} else if err != nil {
		return err
	}
	if _, signedIn := CurrentUser(c); share.Audience == db.ShareTeam && !signedIn {
		return c.Redirect("/login?next="+c.OriginalURL(), fiber.StatusSeeOther)
	}
	page, err := h.experimentReport(ctx(c), share.OwnerID, e, e.OwnerName)
	if err != nil {
		return err
	}
	return sendReport(c, e, page)
}

// CreateExperimentShare makes a read-only link to an experiment's
// report, as CreateRunShare does for a run: its owner's to make.
func (h *Handler) CreateExperimentShare(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "experiment")
	if err != nil {
		return err
	}
	e, err := h.store.Experiment(ctx(c), u.ID, id)
	if err != nil {
		return err
	}
	return h.shareOwned(c, db.ShareExperiment, e.ID, e.OwnerID, "/experiments/"+strconv.FormatInt(e.ID, 10), "Only its owner can share this experiment.")
}

// ReportExperimentInput is GET /api/v1/experiments/{id}/report.
type ReportExperimentInput struct {
	ID int64 `path:"id" minimum:"1" doc:"The experiment's id."`
}

// ReportExperimentOutput is the report file.
type ReportExperimentOutput struct {
	ContentType        string `header:"Content-Type"`
	ContentDisposition string `header:"Content-Disposition"`
	Policy             string `header:"Content-Security-Policy"`
	Body               []byte
}

// ReportAPIExperiment answers an experiment's report: one HTML file that
// opens offline, for people who will never sign in.
func (h *Handler) ReportAPIExperiment(ctx context.Context, in *ReportExperimentInput) (*ReportExperimentOutput, error) {
	e, err := h.apiExperiment(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	page, err := h.experimentReport(ctx, apiUser(ctx).ID, e, "")
	if err != nil {
		return nil, err
	}
	return &ReportExperimentOutput{ContentType: fiber.MIMETextHTMLCharsetUTF8, Policy: reportPolicy(page),
		ContentDisposition: `attachment; filename="knobs-experiment-` + strconv.FormatInt(e.ID, 10) + `.html"`, Body: page}, nil
}
