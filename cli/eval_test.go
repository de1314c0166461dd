package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// evalYAML is an eval file: rows inline, a short and a long variant on
// the simulator, a grader that only short answers pass, and then what
// the test adds.
func evalYAML(variants, extra string) string {
	return `name: brevity
rows:
  - vars: {topic: glaciers}
    expected: ice
  - vars: {topic: rivers}
graders:
  - {type: length, max: 12, unit: words, name: brief}
  - {type: length, min: 1}
variants:
` + variants + extra
}

const (
	shortVariant = `  - {name: short, provider: sim, endpoint: chat, body: {model: sim-fast, max_tokens: 4, min_tokens: 4, messages: [{role: user, content: "About {{topic}}"}]}}
`
	longVariant = `  - {name: long, provider: sim, endpoint: chat, body: {model: sim-fast, max_tokens: 80, min_tokens: 80, messages: [{role: user, content: "About {{topic}}"}]}}
`
)

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestEvalPassesAndFailsOnThresholds(t *testing.T) {
	s := newTestServer(t)
	report := filepath.Join(t.TempDir(), "report.html")
	ok := writeFile(t, "ok.yaml", evalYAML(shortVariant, "thresholds:\n  - {grader: brief, min_pass_rate: 1}\n"))
	r := s.knobs(t, "eval", ok, "--report", report)
	if r.code != 0 || !strings.Contains(r.stdout, "short") || !regexp.MustCompile(`short\s+sim-fast\s+100% \(2/2\)`).MatchString(r.stdout) ||
		!strings.Contains(r.stderr, "every threshold met") {
		t.Fatalf("a met threshold: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	page, err := os.ReadFile(report)
	if err != nil || !strings.HasPrefix(strings.ToLower(string(page)), "<!doctype html>") || !strings.Contains(string(page), "brevity") {
		t.Errorf("the report: %v %.100s", err, page)
	}

	missed := writeFile(t, "missed.yaml", evalYAML(shortVariant+longVariant, "thresholds:\n  - {grader: brief, min_pass_rate: 0.5}\n"))
	r = s.knobs(t, "eval", missed)
	if r.code != 1 || !strings.Contains(r.stderr, "long: brief passed 0.0% (0 of 2 cells, 0 failed to run), below 50.0%") || strings.Contains(r.stderr, "short: brief") {
		t.Errorf("a missed threshold: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

func TestEvalFailsOnARegressionAgainstItsBaseline(t *testing.T) {
	s := newTestServer(t)
	base := s.knobs(t, "eval", writeFile(t, "base.json", `{"name":"base","rows":[{"vars":{"topic":"glaciers"}},{"vars":{"topic":"rivers"}}],
"graders":[{"type":"length","max":12,"unit":"words","name":"brief"}],
"variants":[{"provider":"sim","endpoint":"chat","body":{"model":"sim-fast","max_tokens":4,"min_tokens":4,"messages":[{"role":"user","content":"{{topic}}"}]}}],"concurrency":2}`), "--json")
	if base.code != 0 {
		t.Fatalf("baseline: %d %s", base.code, base.stderr)
	}
	id := regexp.MustCompile(`"id":(\d+)`).FindStringSubmatch(base.stdout)
	if id == nil {
		t.Fatalf("no id in %s", base.stdout)
	}
	var datasets struct {
		Items []struct {
			ID int64 `json:"id"`
		} `json:"items"`
	}
	s.api(t, "GET", "/datasets", nil, &datasets)
	// The same rows (the dataset eval made), a long answer now.
	changed := writeFile(t, "changed.yaml", "name: changed\ndataset: "+strconv.FormatInt(datasets.Items[0].ID, 10)+
		"\ngraders:\n  - {type: length, max: 12, unit: words, name: brief}\nvariants:\n"+
		`  - {provider: sim, endpoint: chat, body: {model: sim-fast, max_tokens: 80, min_tokens: 80, messages: [{role: user, content: "{{topic}}"}]}}`+"\n")
	r := s.knobs(t, "eval", changed, "--baseline", id[1])
	if r.code != 1 || strings.Count(r.stderr, "fails now") != 2 || !strings.Contains(r.stderr, "row 1 passed brief in experiment "+id[1]) {
		t.Errorf("a regression: %d\n%s", r.code, r.stderr)
	}
}

func TestEvalRefusesABadFileBeforeSendingAnything(t *testing.T) {
	s := newTestServer(t)
	for name, text := range map[string]string{
		"unknown field":   evalYAML(shortVariant, "gate: strict\n"),
		"no variants":     "name: x\nrows: [{vars: {a: b}}]\n",
		"rows and a name": evalYAML(shortVariant, "dataset: 3\n"),
		"bad threshold":   evalYAML(shortVariant, "thresholds:\n  - {grader: brief, min_pass_rate: 90}\n"),
		"not yaml":        "name: [unclosed\n",
	} {
		r := s.knobs(t, "eval", writeFile(t, "bad.yaml", text))
		if r.code != 2 {
			t.Errorf("%s: exit %d, want 2\n%s", name, r.code, r.stderr)
		}
	}
	var list struct {
		Items []any `json:"items"`
	}
	s.api(t, "GET", "/experiments", nil, &list)
	if len(list.Items) != 0 {
		t.Errorf("bad files started %d experiments", len(list.Items))
	}
}

func TestEvalKeepsInlineRowsInOneDatasetSoBaselinesCompare(t *testing.T) {
	s := newTestServer(t)
	file := func(rows, variant string) string {
		return writeFile(t, "gate.yaml", "name: gate\nrows:\n"+rows+"graders:\n  - {type: length, max: 12, unit: words, name: brief}\nvariants:\n"+variant)
	}
	two := "  - vars: {topic: glaciers}\n  - vars: {topic: rivers}\n"
	first := s.knobs(t, "eval", file(two, shortVariant), "--json")
	id := regexp.MustCompile(`"id":(\d+)`).FindStringSubmatch(first.stdout)
	if first.code != 0 || id == nil {
		t.Fatalf("first: %d %s", first.code, first.stderr)
	}
	// The same rows again, with long answers: the baseline compares.
	r := s.knobs(t, "eval", file(two, longVariant), "--baseline", id[1])
	if r.code != 1 || strings.Count(r.stderr, "fails now") != 2 || strings.Contains(r.stderr, "new version") {
		t.Errorf("the same rows against the baseline: %d\n%s", r.code, r.stderr)
	}
	// One row changed and one added: a new version; the unchanged row is
	// still the baseline's, so it alone is compared... and passes.
	three := "  - vars: {topic: glaciers}\n  - vars: {topic: deltas}\n  - vars: {topic: lakes}\n"
	r = s.knobs(t, "eval", file(three, shortVariant), "--baseline", id[1])
	if r.code != 0 || !strings.Contains(r.stderr, "has a new version") {
		t.Errorf("changed rows: %d\n%s", r.code, r.stderr)
	}
	var list struct {
		Items []struct {
			Name    string `json:"name"`
			Version int    `json:"version"`
			Rows    int    `json:"rows"`
		} `json:"items"`
	}
	s.api(t, "GET", "/datasets", nil, &list)
	if len(list.Items) != 1 || list.Items[0].Name != "gate (eval rows)" || list.Items[0].Version != 2 || list.Items[0].Rows != 3 {
		t.Errorf("datasets: %+v", list.Items)
	}
}

func TestEvalCountsCellsThatFailedToRunAsFails(t *testing.T) {
	var d experimentDetail
	if err := json.Unmarshal([]byte(`{"variants":[{"name":"v"}],"graders":[{"name":"brief","type":"length"}],
		"aggregates":[{"variant":0,"errors":95,"graders":[{"graded":5,"passed":5,"pass_rate":1}]}]}`), &d); err != nil {
		t.Fatal(err)
	}
	missed := d.missed([]threshold{{Grader: json.RawMessage(`"brief"`), MinPassRate: 0.9}})
	if len(missed) != 1 || !strings.Contains(missed[0], "5.0% (5 of 100 cells, 95 failed to run)") {
		t.Errorf("95 of 100 cells rate-limited and 5 passing: %q", missed)
	}
	two := 2
	if m := d.missed([]threshold{{Grader: json.RawMessage(`0`), Variant: &two, MinPassRate: 0.1}}); len(m) != 1 || !strings.Contains(m[0], "variant 2") {
		t.Errorf("a threshold on a variant that does not exist: %q", m)
	}
}
