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
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"sigs.k8s.io/yaml"
)

const evalUsage = `knobs eval FILE [--baseline ID] [--report FILE] [--json]

Runs the experiment FILE describes (YAML or JSON) on the server, prints a
summary, and exits 1 when a threshold is missed, when a cell that passed
in the baseline experiment fails now, or when the experiment does not end
done: the gate for prompt changes in CI.

  name: summarize v7              # the experiment's name (default: the file's)
  dataset: support-tickets        # a dataset's name or id; or rows inline:
  rows:                           #   made into a dataset of yours
    - vars: {ticket: "My order is late"}
      expected: shipping
  variants:                       # presets at a label or version, or setups
    - {preset: summarize, label: staging}
    - {preset: summarize, label: production}
  repeats: 1
  concurrency: 4
  graders:                        # as POST /api/v1/experiments takes them
    - {type: contains, terms: ["{{expected}}"], ignore_case: true}
  thresholds:                     # each grader's pass rate, per variant
    - {grader: contains, min_pass_rate: 0.9}
    - {grader: 0, variant: 0, min_pass_rate: 0.95}
  baseline: 41                    # an experiment id: no pass may turn into a fail
  report: report.html             # write the HTML report here`

// evalFile is what an eval file holds.
type evalFile struct {
	Name           string            `json:"name"`
	Dataset        json.RawMessage   `json:"dataset"` // a name or an id
	DatasetVersion int               `json:"dataset_version"`
	Rows           []json.RawMessage `json:"rows"`
	Variants       []json.RawMessage `json:"variants"`
	Repeats        int               `json:"repeats"`
	Concurrency    int               `json:"concurrency"`
	Graders        []json.RawMessage `json:"graders"`
	Thresholds     []threshold       `json:"thresholds"`
	Baseline       int64             `json:"baseline"`
	Report         string            `json:"report"`
	Visibility     string            `json:"visibility"`
}

// threshold is a pass rate a grader must reach.
type threshold struct {
	Grader      json.RawMessage `json:"grader"` // a grader's name or type, or its index
	Variant     *int            `json:"variant"`
	MinPassRate float64         `json:"min_pass_rate"`
}

// maxEvalFile bounds an eval file, inline rows included.
const maxEvalFile = 16 << 20

func evalCommand(e *env, args []string) error {
	const name = "knobs eval"
	fs := flagSet(name, evalUsage)
	srv := addServerFlags(fs)
	baseline := fs.Int64("baseline", 0, "an experiment id to compare with: no cell that passed in it may fail now (overrides the file's)")
	report := fs.String("report", "", "write the experiment's HTML report to this file (overrides the file's)")
	asJSON := fs.Bool("json", false, "print the experiment as JSON instead of the summary table")
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef(name, "give one eval file")
	}
	f, err := readEvalFile(rest[0])
	if err != nil {
		return usagef(name, "%s", err)
	}
	if *baseline != 0 {
		f.Baseline = *baseline
	}
	if *report != "" {
		f.Report = *report
	}
	c, err := srv.client(e)
	if err != nil {
		return err
	}
	dataset, err := c.evalDataset(e, f)
	if err != nil {
		return err
	}
	body := map[string]any{"name": f.Name, "dataset": dataset, "variants": f.Variants}
	for k, v := range map[string]any{"dataset_version": f.DatasetVersion, "repeats": f.Repeats, "concurrency": f.Concurrency} {
		if v != 0 {
			body[k] = v
		}
	}
	if len(f.Graders) > 0 {
		body["graders"] = f.Graders
	}
	if f.Visibility != "" {
		body["visibility"] = f.Visibility
	}
	var started experimentDetail
	if err := c.callJSON(e.ctx, http.MethodPost, "/experiments", body, &started); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "experiment %d: %d cells\n", started.ID, started.Progress.Total)
	if err := c.followExperiment(e, started.ID); err != nil {
		if errors.Is(err, context.Canceled) || e.ctx.Err() != nil {
			cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c.callJSON(cctx, http.MethodPost, "/experiments/"+strconv.FormatInt(started.ID, 10)+"/cancel", nil, nil)
			fmt.Fprintf(e.stderr, "experiment %d cancelled\n", started.ID)
			return errInterrupted
		}
		return err
	}
	var d experimentDetail
	raw, _, err := c.call(e.ctx, http.MethodGet, "/experiments/"+strconv.FormatInt(started.ID, 10), nil)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return fmt.Errorf("Knobs answered the experiment with something that is not the JSON expected: %w", err)
	}
	if *asJSON {
		e.stdout.Write(append(bytes.TrimSpace(raw), '\n'))
	} else {
		d.summary(e.stdout)
	}
	if f.Report != "" {
		page, _, err := c.call(e.ctx, http.MethodGet, "/experiments/"+strconv.FormatInt(d.ID, 10)+"/report", nil)
		if err != nil {
			return err
		}
		if err := os.WriteFile(f.Report, page, 0o644); err != nil {
			return fmt.Errorf("unable to write the report: %w", err)
		}
		fmt.Fprintf(e.stderr, "report written to %s\n", f.Report)
	}
	var failures []string
	if d.Status != "done" {
		failures = append(failures, fmt.Sprintf("the experiment ended %s %s", d.Status, d.Error))
	}
	failures = append(failures, d.missed(f.Thresholds)...)
	if f.Baseline != 0 {
		regressions, err := c.regressions(e, f.Baseline, d)
		if err != nil {
			return err
		}
		failures = append(failures, regressions...)
	}
	if len(failures) > 0 {
		return &runFailed{msg: "the gate failed:\n  " + strings.Join(failures, "\n  ")}
	}
	fmt.Fprintln(e.stderr, "every threshold met")
	return nil
}

// readEvalFile reads an eval file, YAML or JSON, strictly: a field Knobs
// does not know is an error rather than a check silently skipped.
func readEvalFile(path string) (evalFile, error) {
	fh, err := os.Open(path)
	if err != nil {
		return evalFile{}, fmt.Errorf("unable to read the eval file: %w", err)
	}
	defer fh.Close()
	raw, err := io.ReadAll(io.LimitReader(fh, maxEvalFile+1))
	if err != nil {
		return evalFile{}, fmt.Errorf("unable to read the eval file: %w", err)
	}
	if len(raw) > maxEvalFile {
		return evalFile{}, fmt.Errorf("the eval file is larger than %d MiB", maxEvalFile>>20)
	}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return evalFile{}, fmt.Errorf("%s is neither YAML nor JSON: %w", path, err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	var f evalFile
	if err := dec.Decode(&f); err != nil {
		return evalFile{}, fmt.Errorf("%s: %w", path, err)
	}
	if f.Name == "" {
		f.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	switch {
	case len(f.Variants) == 0:
		return evalFile{}, fmt.Errorf("%s has no variants", path)
	case len(f.Rows) > 0 && len(f.Dataset) > 0:
		return evalFile{}, fmt.Errorf("%s names a dataset and has rows: give one", path)
	case len(f.Rows) == 0 && len(f.Dataset) == 0:
		return evalFile{}, fmt.Errorf("%s names no dataset and has no rows", path)
	}
	for i, t := range f.Thresholds {
		if len(t.Grader) == 0 || t.MinPassRate < 0 || t.MinPassRate > 1 {
			return evalFile{}, fmt.Errorf("%s: threshold %d needs a grader and a min_pass_rate from 0 to 1", path, i+1)
		}
	}
	return f, nil
}

// evalDataset is the id of the dataset the file names, or of the one
// its rows are kept in (see evalRows).
func (c *client) evalDataset(e *env, f evalFile) (int64, error) {
	if len(f.Rows) > 0 {
		return c.evalRows(e, f)
	}
	var id int64
	if json.Unmarshal(f.Dataset, &id) == nil && id > 0 {
		return id, nil
	}
	var name string
	if err := json.Unmarshal(f.Dataset, &name); err != nil || name == "" {
		return 0, usagef("knobs eval", "dataset is a dataset's name or id")
	}
	found, err := c.findDatasets(e, name)
	if err != nil {
		return 0, err
	}
	switch len(found) {
	case 0:
		return 0, fmt.Errorf("there is no dataset named %q that you can see", name)
	case 1:
		return found[0], nil
	}
	return 0, fmt.Errorf("%q names %d datasets (ids %v): name it by id", name, len(found), found)
}

// findDatasets lists the ids of the datasets named name that the token
// sees.
func (c *client) findDatasets(e *env, name string) ([]int64, error) {
	var found []int64
	cursor := ""
	for range 1000 {
		var page struct {
			Items []struct {
				ID   int64  `json:"id"`
				Name string `json:"name"`
			} `json:"items"`
			NextCursor *string `json:"next_cursor"`
		}
		path := "/datasets?limit=100"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		if err := c.callJSON(e.ctx, http.MethodGet, path, nil, &page); err != nil {
			return nil, err
		}
		for _, d := range page.Items {
			if d.Name == name {
				found = append(found, d.ID)
			}
		}
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	return found, nil
}

// evalRow is a row as an eval file and the datasets API give it.
type evalRow struct {
	Key      int64          `json:"key,omitempty"`
	Vars     map[string]any `json:"vars"`
	Expected any            `json:"expected,omitempty"`
	Tags     any            `json:"tags,omitempty"`
}

// same reports whether two rows hold the same values, numbers and
// strings compared as the server keeps them (as text).
func (r evalRow) same(o evalRow) bool {
	text := func(v any) string {
		switch v := v.(type) {
		case nil:
			return ""
		case string:
			return v
		case []any:
			if len(v) == 0 {
				return ""
			}
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	if len(r.Vars) != len(o.Vars) || text(r.Expected) != text(o.Expected) || text(r.Tags) != text(o.Tags) {
		return false
	}
	for k, v := range r.Vars {
		w, ok := o.Vars[k]
		if !ok || text(v) != text(w) {
			return false
		}
	}
	return true
}

// evalRows keeps an eval file's inline rows in a dataset of the token's
// named after the file ("NAME (eval rows)"), so that every run of the
// file compares with the last on the same rows: made the first time, a
// new version when the rows changed (row by row, so that unchanged rows
// keep their keys and stay comparable), and reused as it is otherwise.
func (c *client) evalRows(e *env, f evalFile) (int64, error) {
	name := f.Name + " (eval rows)"
	rows := make([]evalRow, len(f.Rows))
	for i, raw := range f.Rows {
		if err := json.Unmarshal(raw, &rows[i]); err != nil || rows[i].Key != 0 {
			return 0, usagef("knobs eval", "row %d is not {vars, expected, tags}", i+1)
		}
	}
	found, err := c.findDatasets(e, name)
	if err != nil {
		return 0, err
	}
	if len(found) != 1 {
		var d struct {
			ID int64 `json:"id"`
		}
		err := c.callJSON(e.ctx, http.MethodPost, "/datasets", map[string]any{"name": name, "rows": f.Rows}, &d)
		return d.ID, err
	}
	id := found[0]
	var have []evalRow
	version := 0
	cursor := ""
	for range 1000 {
		var d struct {
			Version int `json:"version"`
			RowPage struct {
				Items      []evalRow `json:"items"`
				NextCursor *string   `json:"next_cursor"`
			} `json:"row_page"`
		}
		path := fmt.Sprintf("/datasets/%d?limit=1000", id)
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		if err := c.callJSON(e.ctx, http.MethodGet, path, nil, &d); err != nil {
			return 0, err
		}
		version = d.Version
		have = append(have, d.RowPage.Items...)
		if d.RowPage.NextCursor == nil {
			break
		}
		cursor = *d.RowPage.NextCursor
	}
	edit := map[string]any{"base_version": version, "note": "knobs eval " + f.Name}
	var change []evalRow
	var add []evalRow
	var remove []int64
	for i, r := range rows {
		switch {
		case i >= len(have):
			add = append(add, r)
		case !r.same(have[i]):
			r.Key = have[i].Key
			change = append(change, r)
		}
	}
	for _, h := range have[min(len(rows), len(have)):] {
		remove = append(remove, h.Key)
	}
	if len(change)+len(add)+len(remove) == 0 {
		return id, nil
	}
	for k, v := range map[string]any{"change": change, "add": add, "remove": remove} {
		if reflect.ValueOf(v).Len() > 0 {
			edit[k] = v
		}
	}
	if err := c.callJSON(e.ctx, http.MethodPut, fmt.Sprintf("/datasets/%d", id), edit, nil); err != nil {
		return 0, err
	}
	fmt.Fprintf(e.stderr, "the rows changed: dataset %d has a new version\n", id)
	return id, nil
}

// experimentDetail is the part of GET /api/v1/experiments/{id} eval reads.
type experimentDetail struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	Status   string `json:"status"`
	Error    string `json:"error"`
	Variants []struct {
		Name  string `json:"name"`
		Model string `json:"model"`
	} `json:"variants"`
	Graders []struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"graders"`
	Progress struct {
		Done   int `json:"done"`
		Total  int `json:"total"`
		Failed int `json:"failed"`
	} `json:"progress"`
	Aggregates []struct {
		Variant      int      `json:"variant"`
		Errors       int      `json:"errors"`
		P50LatencyMs *float64 `json:"p50_latency_ms"`
		Tokens       int      `json:"tokens"`
		CostUSD      float64  `json:"cost_usd"`
		Graders      []struct {
			Graded   int      `json:"graded"`
			Passed   int      `json:"passed"`
			Errors   int      `json:"errors"`
			PassRate *float64 `json:"pass_rate"`
		} `json:"graders"`
	} `json:"aggregates"`
}

// summary prints a line per variant: each grader's pass rate, latency,
// tokens and cost.
func (d experimentDetail) summary(w io.Writer) {
	fmt.Fprintf(w, "%s (experiment %d): %s, %d of %d cells, %d failed\n", d.Name, d.ID, d.Status, d.Progress.Done, d.Progress.Total, d.Progress.Failed)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := []string{"VARIANT", "MODEL"}
	for _, g := range d.Graders {
		head = append(head, strings.ToUpper(g.Name))
	}
	head = append(head, "P50", "TOKENS", "COST", "FAILED")
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for i, a := range d.Aggregates {
		row := []string{"?", ""}
		if i < len(d.Variants) {
			row = []string{d.Variants[i].Name, d.Variants[i].Model}
		}
		for _, g := range a.Graders {
			cell := "—"
			if g.PassRate != nil {
				cell = fmt.Sprintf("%.0f%% (%d/%d)", *g.PassRate*100, g.Passed, g.Graded)
			}
			row = append(row, cell)
		}
		p50 := "—"
		if a.P50LatencyMs != nil {
			p50 = fmt.Sprintf("%.0f ms", *a.P50LatencyMs)
		}
		row = append(row, p50, strconv.Itoa(a.Tokens), fmt.Sprintf("$%.4f", a.CostUSD), strconv.Itoa(a.Errors))
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
}

// grader finds the grader a threshold names: its index, name or type.
func (d experimentDetail) grader(ref json.RawMessage) (int, bool) {
	var i int
	if json.Unmarshal(ref, &i) == nil {
		return i, i >= 0 && i < len(d.Graders)
	}
	var name string
	_ = json.Unmarshal(ref, &name)
	for i, g := range d.Graders {
		if g.Name == name {
			return i, true
		}
	}
	for i, g := range d.Graders {
		if g.Type == name {
			return i, true
		}
	}
	return 0, false
}

// missed lists the thresholds a variant did not reach.
func (d experimentDetail) missed(ts []threshold) []string {
	var out []string
	for _, t := range ts {
		gi, ok := d.grader(t.Grader)
		if !ok {
			out = append(out, fmt.Sprintf("no grader %s in the experiment", t.Grader))
			continue
		}
		if t.Variant != nil && (*t.Variant < 0 || *t.Variant >= len(d.Aggregates)) {
			out = append(out, fmt.Sprintf("a threshold names variant %d; the experiment has %d, from 0", *t.Variant, len(d.Aggregates)))
			continue
		}
		for vi, a := range d.Aggregates {
			if t.Variant != nil && *t.Variant != vi {
				continue
			}
			name := strconv.Itoa(vi)
			if vi < len(d.Variants) {
				name = d.Variants[vi].Name
			}
			if gi >= len(a.Graders) || a.Graders[gi].Graded+a.Errors == 0 {
				out = append(out, fmt.Sprintf("%s: %s graded no cell", name, d.Graders[gi].Name))
				continue
			}
			// A cell whose run failed has no answer to pass: it counts as
			// a fail, so that errors cannot lift a pass rate.
			g := a.Graders[gi]
			rate := float64(g.Passed) / float64(g.Graded+a.Errors)
			if rate < t.MinPassRate {
				out = append(out, fmt.Sprintf("%s: %s passed %.1f%% (%d of %d cells, %d failed to run), below %.1f%%",
					name, d.Graders[gi].Name, rate*100, g.Passed, g.Graded+a.Errors, a.Errors, t.MinPassRate*100))
			}
		}
	}
	return out
}

// regressions compares each variant with the baseline's (the same index,
// else its first) and lists the cells that passed there and fail now.
func (c *client) regressions(e *env, baseline int64, d experimentDetail) ([]string, error) {
	var base experimentDetail
	if err := c.callJSON(e.ctx, http.MethodGet, "/experiments/"+strconv.FormatInt(baseline, 10), nil, &base); err != nil {
		return nil, err
	}
	var out []string
	for vi := range d.Variants {
		bv := vi
		if bv >= len(base.Variants) {
			bv = 0
		}
		var cmp struct {
			Changes []struct {
				Grader string            `json:"grader"`
				Change string            `json:"change"`
				Row    int               `json:"row"`
				Vars   map[string]string `json:"vars"`
			} `json:"changes"`
		}
		path := fmt.Sprintf("/experiments/%d/compare/%d?variant=%d&other_variant=%d", baseline, d.ID, bv, vi)
		if err := c.callJSON(e.ctx, http.MethodGet, path, nil, &cmp); err != nil {
			return nil, err
		}
		n := 0
		for _, ch := range cmp.Changes {
			if ch.Change != "regressed" {
				continue
			}
			if n++; n <= 10 {
				out = append(out, fmt.Sprintf("%s: row %d passed %s in experiment %d and fails now", d.Variants[vi].Name, ch.Row+1, ch.Grader, baseline))
			}
		}
		if n > 10 {
			out = append(out, fmt.Sprintf("%s: and %d more cells that passed in experiment %d fail now", d.Variants[vi].Name, n-10, baseline))
		}
	}
	return out, nil
}

// followExperiment reads the experiment's events until it ends,
// printing its progress to stderr at most once a second; a dropped
// stream is resumed a bounded number of times.
func (c *client) followExperiment(e *env, id int64) error {
	after, last := 0, time.Time{}
	for attempt := 0; attempt < 5; attempt++ {
		before := after
		ended, err := c.readExperimentEvents(e, id, &after, &last)
		if after > before {
			attempt = 0 // the stream moved on: only drops in a row count
		}
		if ended {
			return nil
		}
		if e.ctx.Err() != nil {
			return e.ctx.Err()
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "the event stream broke (%v); reconnecting\n", err)
		}
		time.Sleep(time.Second)
	}
	return fmt.Errorf("lost experiment %d's events five times; it goes on on the server (GET /api/v1/experiments/%d)", id, id)
}

func (c *client) readExperimentEvents(e *env, id int64, after *int, last *time.Time) (bool, error) {
	path := "/experiments/" + strconv.FormatInt(id, 10) + "/events"
	if *after > 0 {
		path += "?after=" + strconv.Itoa(*after)
	}
	resp, err := c.request(e.ctx, http.MethodGet, path, nil, http.Header{"Accept": {"text/event-stream"}})
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventLine)
	var event string
	var data []byte
	for sc.Scan() {
		line := sc.Bytes()
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch {
		case len(line) == 0 && event != "":
			var ev struct {
				Progress *struct {
					Done   int `json:"done"`
					Total  int `json:"total"`
					Failed int `json:"failed"`
				} `json:"progress"`
				Status string `json:"status"`
			}
			_ = json.Unmarshal(data, &ev)
			if p := ev.Progress; p != nil && (event == "end" || time.Since(*last) >= time.Second) {
				*last = time.Now()
				fmt.Fprintf(e.stderr, "%d/%d cells, %d failed\n", p.Done, p.Total, p.Failed)
			}
			if event == "end" {
				return true, nil
			}
			event, data = "", data[:0]
		case string(field) == "id":
			if n, err := strconv.Atoi(strings.TrimSpace(string(value))); err == nil {
				*after = n
			}
		case string(field) == "event":
			event = string(value)
		case string(field) == "data":
			data = append(data, value...)
		}
	}
	return false, sc.Err()
}
