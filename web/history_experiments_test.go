package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestHistoryHidesExperimentRunsWhenTheUserPrefers(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	ds := srv.makeDataset(t, "admin", 2)
	a := srv.apiCall(t, "POST", "/api/v1/experiments", tok, map[string]any{"name": "h", "dataset": ds.ID,
		"variants": []any{map[string]any{"provider": "sim", "endpoint": "chat", "body": map[string]any{
			"model": "sim-fast", "messages": []any{map[string]any{"role": "user", "content": "Cell about {{topic}}"}}, "max_tokens": 5}}}})
	var e apiExperiment
	a.json(t, &e)
	srv.followExperiment(t, tok, e.Events)
	srv.startRun(t, tok, simSpec("sim-fast", "By hand", false))

	rows := func(r *response) int { return strings.Count(r.body, `<td class="when nowrap"><a href="/runs/`) }
	page := admin.get("/history")
	if page.status != http.StatusOK || !page.has("Cell about") || !page.has("By hand") {
		t.Fatalf("history by default shows every run: %d", page.status)
	}
	all := rows(page)
	hidden := admin.get("/history?experiments=show&experiments=hide")
	if hidden.has("Cell about") || !hidden.has("By hand") || !hidden.has(`name="experiments" value="hide" checked`) {
		t.Errorf("hiding experiments' runs: %d rows", rows(hidden))
	}
	// The choice stays until changed.
	if again := admin.get("/history"); again.has("Cell about") || rows(again) != all-2 {
		t.Errorf("the next visit forgot the choice: %d rows of %d", rows(again), all)
	}
	if shown := admin.get("/history?experiments=show"); !shown.has("Cell about") || rows(shown) != all {
		t.Errorf("showing them again: %d rows", rows(shown))
	}
	only := admin.get(fmt.Sprintf("/history?experiment=%d", e.ID))
	if rows(only) != 2 || only.has("By hand") || !only.has(fmt.Sprintf(`href="/experiments/%d"`, e.ID)) {
		t.Errorf("one experiment's runs: %d rows", rows(only))
	}
}
