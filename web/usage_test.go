package web_test

// Prices and usage over real HTTP, a real SQLite file and the simulator
// upstream: an admin's price costs the runs made after it and leaves the
// runs before it as they were; price edits are an admin's, checked, and a
// refused one changes nothing; a member sees only their own usage; the
// page, its CSV and the API give the same figures.

import (
	"encoding/csv"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// priceItem is one entry of GET /api/v1/prices.
type priceItem struct {
	Provider    string     `json:"provider"`
	Model       string     `json:"model"`
	Input       *float64   `json:"input"`
	Output      *float64   `json:"output"`
	CachedInput *float64   `json:"cached_input"`
	Reasoning   *float64   `json:"reasoning"`
	Source      string     `json:"source"`
	SetAt       *time.Time `json:"set_at"`
	SetBy       string     `json:"set_by"`
}

// prices is GET /api/v1/prices with token, by provider/model.
func (s *server) prices(t testing.TB, token string) (map[string]priceItem, string) {
	t.Helper()
	a := s.apiCall(t, "GET", "/api/v1/prices", token, nil)
	if a.status != http.StatusOK {
		t.Fatalf("GET /api/v1/prices: %d %s", a.status, a.body)
	}
	var out struct {
		Prices []priceItem `json:"prices"`
	}
	a.json(t, &out)
	m := map[string]priceItem{}
	for _, p := range out.Prices {
		m[p.Provider+"/"+p.Model] = p
	}
	return m, a.body
}

// usageFigures is a row or the total of GET /api/v1/usage.
type usageFigures struct {
	Key             string  `json:"key"`
	Calls           int64   `json:"calls"`
	Errors          int64   `json:"errors"`
	InputTokens     int64   `json:"input_tokens"`
	OutputTokens    int64   `json:"output_tokens"`
	CachedTokens    int64   `json:"cached_tokens"`
	ReasoningTokens int64   `json:"reasoning_tokens"`
	CostUSD         float64 `json:"cost_usd"`
	UnpricedCalls   int64   `json:"unpriced_calls"`
	UnpricedTokens  int64   `json:"unpriced_tokens"`
}

type usageAnswer struct {
	Rows  []usageFigures `json:"rows"`
	Total usageFigures   `json:"total"`
}

// usage is GET /api/v1/usage?query with token, which must answer 200.
func (s *server) usage(t testing.TB, token, query string) usageAnswer {
	t.Helper()
	a := s.apiCall(t, "GET", "/api/v1/usage?"+query, token, nil)
	if a.status != http.StatusOK {
		t.Fatalf("GET /api/v1/usage?%s: %d %s", query, a.status, a.body)
	}
	var u usageAnswer
	a.json(t, &u)
	return u
}

// runUsage is what GET /api/v1/runs/{id} says a run used and cost.
type runUsage struct {
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		ReasoningTokens  int `json:"reasoning_tokens"`
		CachedTokens     int `json:"cached_tokens"`
	} `json:"usage"`
	Metrics struct {
		CostUSD float64 `json:"cost_usd"`
	} `json:"metrics"`
}

func (s *server) runUsage(t testing.TB, token string, id int64) runUsage {
	t.Helper()
	a := s.apiCall(t, "GET", "/api/v1/runs/"+strconv.FormatInt(id, 10), token, nil)
	if a.status != http.StatusOK {
		t.Fatalf("GET run %d: %d %s", id, a.status, a.body)
	}
	var r runUsage
	a.json(t, &r)
	return r
}

// runAndWait makes a run of the simulator's model and waits for its end.
func (s *server) runAndWait(t testing.TB, token, model, prompt string) int64 {
	t.Helper()
	a := s.apiCall(t, "POST", "/api/v1/runs", token, simSpec(model, prompt, true))
	if a.status != http.StatusCreated {
		t.Fatalf("POST /api/v1/runs: %d %s", a.status, a.body)
	}
	var r apiRun
	a.json(t, &r)
	if r.Status != "done" {
		t.Fatalf("run %d ended %s: %s", r.ID, r.Status, a.body)
	}
	return r.ID
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestPriceChangeKeepsOldCosts(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", 30).Token

	// sim-fast has no listed price: an admin's price costs its runs.
	if p, _ := srv.prices(t, tok); p["sim/sim-fast"].Source != "none" || p["sim/sim-reasoning"].Source != "provider" {
		t.Fatalf("prices before any is set: %+v %+v", p["sim/sim-fast"], p["sim/sim-reasoning"])
	}
	set := srv.apiCall(t, "PUT", "/api/v1/prices/sim/sim-fast", tok, map[string]any{"input": 1000, "output": 2000})
	if set.status != http.StatusOK {
		t.Fatalf("PUT price: %d %s", set.status, set.body)
	}
	p, _ := srv.prices(t, tok)
	if got := p["sim/sim-fast"]; got.Source != "admin" || *got.Input != 1000 || *got.Output != 2000 || *got.CachedInput != 1000 ||
		*got.Reasoning != 2000 || got.SetBy != "admin" || got.SetAt == nil {
		t.Fatalf("sim-fast after the admin set it: %+v", got)
	}

	first := srv.runAndWait(t, tok, "sim-fast", "Tell me about the sea.")
	r1 := srv.runUsage(t, tok, first)
	want1 := (float64(r1.Usage.PromptTokens)*1000 + float64(r1.Usage.CompletionTokens)*2000) / 1e6
	if r1.Usage.CompletionTokens == 0 || !near(r1.Metrics.CostUSD, want1) {
		t.Fatalf("first run: cost %v, want %v from its usage %+v", r1.Metrics.CostUSD, want1, r1.Usage)
	}

	if a := srv.apiCall(t, "PUT", "/api/v1/prices/sim/sim-fast", tok, map[string]any{"input": 1, "output": 1}); a.status != http.StatusOK {
		t.Fatalf("PUT the second price: %d %s", a.status, a.body)
	}
	second := srv.runAndWait(t, tok, "sim-fast", "Tell me about the hills.")
	r2 := srv.runUsage(t, tok, second)
	want2 := float64(r2.Usage.PromptTokens+r2.Usage.CompletionTokens) / 1e6
	if !near(r2.Metrics.CostUSD, want2) {
		t.Fatalf("second run: cost %v, want %v", r2.Metrics.CostUSD, want2)
	}
	if again := srv.runUsage(t, tok, first); !near(again.Metrics.CostUSD, want1) {
		t.Fatalf("the first run's cost became %v after the price changed; it was %v", again.Metrics.CostUSD, want1)
	}
	u := srv.usage(t, tok, "group_by=model")
	if len(u.Rows) != 1 || u.Rows[0].Key != "sim/sim-fast" || u.Rows[0].Calls != 2 || !near(u.Rows[0].CostUSD, want1+want2) {
		t.Fatalf("usage by model: %+v, want 2 calls costing %v", u.Rows, want1+want2)
	}

	// Back to the listing: sim-fast has none, so the next run is unpriced.
	if a := srv.apiCall(t, "DELETE", "/api/v1/prices/sim/sim-fast", tok, nil); a.status != http.StatusNoContent {
		t.Fatalf("DELETE price: %d %s", a.status, a.body)
	}
	if a := srv.apiCall(t, "DELETE", "/api/v1/prices/sim/sim-fast", tok, nil); a.status != http.StatusNotFound {
		t.Fatalf("DELETE a price not set: %d %s", a.status, a.body)
	}
	third := srv.runAndWait(t, tok, "sim-fast", "Tell me about the sky.")
	r3 := srv.runUsage(t, tok, third)
	u = srv.usage(t, tok, "group_by=model")
	if r3.Metrics.CostUSD != 0 || u.Total.Calls != 3 || u.Total.UnpricedCalls != 1 ||
		u.Total.UnpricedTokens != int64(r3.Usage.PromptTokens+r3.Usage.CompletionTokens) || !near(u.Total.CostUSD, want1+want2) {
		t.Fatalf("after the price was removed: run cost %v, usage %+v", r3.Metrics.CostUSD, u.Total)
	}
	if p, _ := srv.prices(t, tok); p["sim/sim-fast"].Source != "none" {
		t.Fatalf("sim-fast after DELETE: %+v", p["sim/sim-fast"])
	}

	// Deleting a run does not take its spend back.
	if a := srv.apiCall(t, "DELETE", "/api/v1/runs/"+strconv.FormatInt(first, 10), tok, nil); a.status != http.StatusNoContent {
		t.Fatalf("delete run: %d %s", a.status, a.body)
	}
	if after := srv.usage(t, tok, "group_by=model"); after.Total != u.Total {
		t.Fatalf("usage after a run was deleted: %+v, before %+v", after.Total, u.Total)
	}
}

func TestPriceEditIsAnAdminsAndChecked(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	member := admin.addMember("mia")
	adminTok := admin.makeToken("a", "write", 30).Token
	memberTok := member.makeToken("m", "write", 30).Token
	if a := srv.apiCall(t, "PUT", "/api/v1/prices/sim/sim-reasoning", adminTok, map[string]any{"input": 3, "output": 4, "reasoning": 5}); a.status != http.StatusOK {
		t.Fatalf("PUT price: %d %s", a.status, a.body)
	}
	_, before := srv.prices(t, adminTok)

	wantAPIError(t, "a member's PUT", srv.apiCall(t, "PUT", "/api/v1/prices/sim/sim-fast", memberTok, map[string]any{"input": 1, "output": 1}), http.StatusForbidden)
	wantAPIError(t, "a member's DELETE", srv.apiCall(t, "DELETE", "/api/v1/prices/sim/sim-reasoning", memberTok, nil), http.StatusForbidden)
	for _, tt := range []struct {
		what, path string
		body       any
		field      string
	}{
		{"a negative price", "/api/v1/prices/sim/sim-fast", map[string]any{"input": -1, "output": 1}, "input"},
		{"a price per token typed as one per million", "/api/v1/prices/sim/sim-fast", map[string]any{"input": 1, "output": 2e6}, "output"},
		{"a price that is not a number", "/api/v1/prices/sim/sim-fast", `{"input":"cheap","output":1}`, "input"},
		{"no output price", "/api/v1/prices/sim/sim-fast", map[string]any{"input": 1}, "output"},
		{"a negative cached price", "/api/v1/prices/sim/sim-fast", map[string]any{"input": 1, "output": 1, "cached_input": -0.5}, "cached_input"},
		{"an unknown provider", "/api/v1/prices/nowhere/sim-fast", map[string]any{"input": 1, "output": 1}, "provider"},
		{"a price over the admin's price with a bad field", "/api/v1/prices/sim/sim-reasoning", map[string]any{"input": 1, "output": 1, "reasoning": -2}, "reasoning"},
	} {
		wantAPIError(t, tt.what, srv.apiCall(t, "PUT", tt.path, adminTok, tt.body), http.StatusUnprocessableEntity, tt.field)
	}
	if _, after := srv.prices(t, adminTok); after != before {
		t.Fatalf("refused edits changed the prices:\nbefore %s\nafter  %s", before, after)
	}

	// The page's form takes the same path: a member is refused, an
	// admin's bad input is shown against its field and stores nothing.
	if r := member.submit("/usage/prices", form("provider", "sim", "model", "sim-fast", "input", "1", "output", "1")); r.status != http.StatusForbidden {
		t.Fatalf("a member's price form: %d", r.status)
	}
	r := admin.submit("/usage/prices", form("provider", "sim", "model", "sim-fast", "input", "NaN", "output", "1"))
	wantPage(t, r, http.StatusUnprocessableEntity, "Give a price from 0 to 100,000 dollars per million tokens.")
	if _, after := srv.prices(t, adminTok); after != before {
		t.Fatalf("a refused form changed the prices:\nbefore %s\nafter  %s", before, after)
	}
	r = admin.submit("/usage/prices", form("provider", "sim", "model", "sim-fast", "input", "0", "output", "0"))
	wantPage(t, r, http.StatusOK, "The price of sim/sim-fast is set")
	if p, _ := srv.prices(t, adminTok); p["sim/sim-fast"].Source != "admin" || *p["sim/sim-fast"].Output != 0 {
		t.Fatalf("sim-fast set free by the form: %+v", p["sim/sim-fast"])
	}
	// A free model is priced: its runs count at $0, not as unpriced.
	srv.runAndWait(t, memberTok, "sim-fast", "Free words.")
	if u := srv.usage(t, memberTok, "group_by=model"); u.Total.Calls != 1 || u.Total.UnpricedCalls != 0 || u.Total.CostUSD != 0 {
		t.Fatalf("a run of a free model: %+v", u.Total)
	}
}

func TestMemberSeesOnlyTheirOwnUsage(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	member := admin.addMember("mo")
	adminTok := admin.makeToken("a", "write", 30).Token
	memberTok := member.makeToken("m", "read", 30).Token
	writeTok := member.makeToken("w", "write", 30).Token
	srv.runAndWait(t, adminTok, "sim-reasoning", "The admin's secret question about zebras.")
	srv.runAndWait(t, adminTok, "sim-reasoning", "And another.")
	srv.runAndWait(t, writeTok, "sim-reasoning", "The member's question.")
	adminID := srv.userID(t, "admin")

	all := srv.usage(t, adminTok, "group_by=user")
	if len(all.Rows) != 2 || all.Total.Calls != 3 {
		t.Fatalf("the admin's view: %+v", all)
	}
	mine := srv.usage(t, memberTok, "group_by=user")
	if len(mine.Rows) != 1 || mine.Rows[0].Key != "mo" || mine.Total.Calls != 1 {
		t.Fatalf("the member's view: %+v", mine)
	}
	for _, q := range []string{"group_by=model", "group_by=day", "group_by=provider", "group_by=month"} {
		if u := srv.usage(t, memberTok, q); u.Total.Calls != 1 {
			t.Errorf("the member's usage by %s counts %d calls", q, u.Total.Calls)
		}
	}
	wantAPIError(t, "a member asking for the admin's usage", srv.apiCall(t, "GET", "/api/v1/usage?user="+strconv.FormatInt(adminID, 10), memberTok, nil), http.StatusForbidden)
	if u := srv.usage(t, adminTok, "group_by=user&user="+strconv.FormatInt(adminID, 10)); u.Total.Calls != 2 {
		t.Fatalf("the admin asking for their own: %+v", u)
	}

	page := member.get("/usage?group_by=user")
	wantPage(t, page, http.StatusOK, "mo")
	if page.has("admin</td>") || page.has("zebras") {
		t.Fatalf("the member's usage page shows the admin's usage:\n%s", page.body)
	}
	if r := member.get("/usage?user=" + strconv.FormatInt(adminID, 10)); r.status != http.StatusForbidden {
		t.Fatalf("a member's page for the admin's usage: %d", r.status)
	}
	if r := member.get("/usage.csv?group_by=user&user=" + strconv.FormatInt(adminID, 10)); r.status != http.StatusForbidden {
		t.Fatalf("a member's CSV of the admin's usage: %d", r.status)
	}
	csvRows := readCSV(t, member.get("/usage.csv?group_by=user"))
	if len(csvRows) != 3 || csvRows[1][0] != "mo" {
		t.Fatalf("the member's CSV: %v", csvRows)
	}
}

func readCSV(t testing.TB, r *response) [][]string {
	t.Helper()
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/csv") {
		t.Fatalf("CSV: %d %s: %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	rows, err := csv.NewReader(strings.NewReader(r.body)).ReadAll()
	if err != nil {
		t.Fatalf("the CSV does not read back: %v", err)
	}
	return rows
}

// usageCell finds the page table's cells: one <tr data-key> per row.
var usageRowRE = regexp.MustCompile(`(?s)<tr data-key="([^"]*)">(.*?)</tr>`)
var usageCellRE = regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`)

func TestUsageCSVEqualsThePageAndTheAPI(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	member := admin.addMember("@calc")
	adminTok := admin.makeToken("a", "write", 30).Token
	memberTok := member.makeToken("m", "write", 30).Token
	srv.runAndWait(t, adminTok, "sim-reasoning", "One.")
	srv.runAndWait(t, adminTok, "sim-fast", "Two.")
	srv.runAndWait(t, memberTok, "sim-reasoning", "Three.")

	for _, by := range []string{"user", "model", "day"} {
		q := "group_by=" + by
		api := srv.usage(t, adminTok, q)
		page := admin.get("/usage?" + q)
		wantPage(t, page, http.StatusOK)
		var pageRows [][]string
		for _, m := range usageRowRE.FindAllStringSubmatch(page.body, -1) {
			row := []string{unescape(m[1])}
			for _, c := range usageCellRE.FindAllStringSubmatch(m[2], -1) {
				row = append(row, unescape(strings.TrimSpace(stripTags(c[1]))))
			}
			pageRows = append(pageRows, row)
		}
		rows := readCSV(t, admin.get("/usage.csv?"+q))
		if len(rows) != len(api.Rows)+2 || len(pageRows) != len(api.Rows) {
			t.Fatalf("by %s: the CSV has %d lines, the page %d rows, the API %d rows", by, len(rows), len(pageRows), len(api.Rows))
		}
		header := rows[0]
		if strings.Join(header, ",") != "key,calls,errors,input_tokens,output_tokens,cached_tokens,reasoning_tokens,cost_usd,unpriced_calls,unpriced_tokens" {
			t.Fatalf("CSV header %v", header)
		}
		for i, a := range append(api.Rows, api.Total) {
			want := []string{a.Key, fmt.Sprint(a.Calls), fmt.Sprint(a.Errors), fmt.Sprint(a.InputTokens), fmt.Sprint(a.OutputTokens),
				fmt.Sprint(a.CachedTokens), fmt.Sprint(a.ReasoningTokens), fmt.Sprintf("%.6f", a.CostUSD), fmt.Sprint(a.UnpricedCalls), fmt.Sprint(a.UnpricedTokens)}
			if i == len(api.Rows) {
				want[0] = "total"
			} else if strings.HasPrefix(want[0], "@") {
				want[0] = "'" + want[0] // a spreadsheet would run it
			}
			if got := rows[i+1]; strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("by %s, CSV line %d: %v, want %v", by, i+1, got, want)
			}
			if i == len(api.Rows) {
				break
			}
			// The page shows the same figures, the cost rounded to cents
			// or, under a cent, to four places.
			pr := pageRows[i]
			wantPageRow := []string{a.Key, a.Key, fmt.Sprint(a.Calls), fmt.Sprint(a.Errors), fmt.Sprint(a.InputTokens), fmt.Sprint(a.OutputTokens),
				fmt.Sprint(a.CachedTokens), fmt.Sprint(a.ReasoningTokens), money(a.CostUSD)}
			if strings.Join(pr, "|") != strings.Join(wantPageRow, "|") {
				t.Errorf("by %s, page row %d: %v, want %v", by, i, pr, wantPageRow)
			}
		}
	}
}

// money is a cost as the usage page writes it.
func money(usd float64) string {
	if usd != 0 && usd < 0.01 {
		return fmt.Sprintf("$%.4f", usd)
	}
	return fmt.Sprintf("$%.2f", usd)
}

var tagRE = regexp.MustCompile(`<[^>]*>`)

func stripTags(s string) string { return tagRE.ReplaceAllString(s, "") }

func unescape(s string) string {
	return strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&#34;", `"`, "&#39;", "'", "&quot;", `"`).Replace(s)
}

// An arena's answers are runs of its owner, counted in usage against the
// arena (and, with no preset, under "none" by preset).
func TestArenaAnswersCountAgainstTheArena(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	a := srv.apiCall(t, "POST", "/api/v1/arenas", tok, map[string]any{
		"name": "Tone test", "audience": "team", "mode": "pregenerated",
		"contestants": []any{contestant("Aurora", "sim-fast", nil), contestant("Borealis", "sim-reasoning", nil)},
		"prompts":     map[string]any{"list": []string{"Tell me about glaciers", "Tell me about rivers"}},
	})
	if a.status != http.StatusCreated {
		t.Fatalf("create: %d %s", a.status, a.body)
	}
	var ar arenaAPI
	a.json(t, &ar)
	if ar = srv.waitArenaReady(t, tok, ar.ID); ar.Answers.Done != 4 {
		t.Fatalf("ready: %+v", ar)
	}
	srv.runAndWait(t, tok, "sim-fast", "Not for the arena.")
	u := srv.usage(t, tok, "group_by=arena")
	want := fmt.Sprintf("#%d Tone test", ar.ID)
	rows := map[string]int64{}
	for _, r := range u.Rows {
		rows[r.Key] = r.Calls
	}
	if len(u.Rows) != 2 || rows[want] != 4 || rows["none"] != 1 || u.Total.Calls != 5 {
		t.Fatalf("usage by arena: %+v, want %q with 4 calls and none with 1", u.Rows, want)
	}
}

// The experiment's estimate prices a model as its runs are priced: at an
// admin's price once one is set, and not at all before.
func TestExperimentEstimateUsesThePriceInForce(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	ds := srv.makeDataset(t, "admin", 3)
	body := map[string]any{"name": "priced", "dataset": ds.ID, "repeats": 1,
		"variants": []any{map[string]any{"provider": "sim", "endpoint": "chat", "body": map[string]any{
			"model": "sim-fast", "max_tokens": 10, "messages": []any{map[string]any{"role": "user", "content": "Tell me about {{topic}}"}}}}},
		"graders": []any{map[string]any{"type": "length", "min": 1}}}
	type preview struct {
		InputTokens  int      `json:"input_tokens"`
		OutputTokens int      `json:"output_tokens"`
		CostUSD      *float64 `json:"cost_usd"`
	}
	var before preview
	srv.apiCall(t, "POST", "/api/v1/experiments/preview", tok, body).json(t, &before)
	if before.CostUSD != nil || before.OutputTokens != 30 {
		t.Fatalf("sim-fast has no price, yet the estimate is %+v", before)
	}
	if a := srv.apiCall(t, "PUT", "/api/v1/prices/sim/sim-fast", tok, map[string]any{"input": 100, "output": 1000}); a.status != http.StatusOK {
		t.Fatalf("PUT price: %d %s", a.status, a.body)
	}
	var after preview
	srv.apiCall(t, "POST", "/api/v1/experiments/preview", tok, body).json(t, &after)
	want := (float64(after.InputTokens)*100 + float64(after.OutputTokens)*1000) / 1e6
	if after.CostUSD == nil || !near(*after.CostUSD, want) {
		t.Fatalf("the estimate at the admin's price: %+v, want $%g", after, want)
	}
}
