package web_test

// The playground and the compare panes share their page script (panel.js,
// run.js): the same setup gives the same message and the same request on
// both pages.

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"knobs/db"
)

// badSchema is a response_format schema cut off in the middle.
const badSchema = `{"type": "object", "properties": {`

// setPanel fills the parameter panel under scope (a CSS selector) by the
// inputs' names, in one script: the panel may not be rebuilt in between.
func setPanel(scope string, values map[string]string) chromedp.Action[chromedp.Void] {
	sc, _ := json.Marshal(scope)
	vs, _ := json.Marshal(values)
	return chromedp.Evaluate[chromedp.Void](`(() => {
		const values = ` + string(vs) + `;
		for (const box of document.querySelectorAll(` + string(sc) + `))
			for (const [name, v] of Object.entries(values)) box.querySelector('[name="' + name + '"]').value = v;
	})()`)
}

// shownError waits until the field message for field is shown under
// scope and returns its text.
func shownError(t *testing.T, ctx context.Context, scope, field string) string {
	t.Helper()
	sel, _ := json.Marshal(scope + ` [data-error-for="` + field + `"]`)
	text, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => { const el = document.querySelector(`+string(sel)+`); return el && !el.hidden && el.textContent; })()`, chromedp.WithPollingInterval(20*time.Millisecond)))
	if err != nil {
		t.Fatalf("waiting for the message beside %s in %s: %v", field, scope, err)
	}
	return text
}

// Panel mistakes are refused before anything is sent, with the same
// message beside the same field on both pages: a schema that is not
// JSON, and an extra body that would replace the conversation (the
// playground used to send it, the compare page to drop it).
func TestBrowserPanelMistakesAreReportedAlikeOnBothPages(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	for _, c := range []struct {
		name, field, want string
		panel             map[string]string
	}{
		{"a bad schema", "response_format", "response_format.json_schema.schema: This is not valid JSON: ",
			map[string]string{"response_format_type": "json_schema", "response_format_schema": badSchema}},
		{"messages in the extra body", "extra_body", "Set messages in its own box, not in the extra fields.",
			map[string]string{"extra_body": `{"messages": [{"role": "user", "content": "Something else."}]}`}},
	} {
		err := chromedp.Do(ctx,
			chromedp.Navigate(s.url+"/"),
			chromedp.Poll[chromedp.Void](`document.getElementById("playground").dataset.ready && !document.getElementById("playground").dataset.busy`, chromedp.WithPollingInterval(20*time.Millisecond)),
			choose("sim", "sim-fast"),
			setMessage("Name a city."),
			setPanel("#pg-panel", c.panel),
			chromedp.Click(chromedp.CSS("#pg-run")),
		)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		inPlayground := shownError(t, ctx, "#pg-panel", c.field)

		err = chromedp.Do(ctx,
			chromedp.Navigate(s.url+"/compare"),
			comparePanesReady(2),
			chromedp.Evaluate[chromedp.Void](`document.querySelector("#cmp-messages [data-content]").value = "Name a city."`),
			setPanel(".cmp-pane:first-of-type [data-panel]", c.panel),
			chromedp.Click(chromedp.CSS("#cmp-run")),
		)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		inPane := shownError(t, ctx, ".cmp-pane:first-of-type", c.field)

		if !strings.HasPrefix(inPlayground, c.want) {
			t.Errorf("%s: the playground says %q beside %s, want it to start %q", c.name, inPlayground, c.field, c.want)
		}
		if inPane != inPlayground {
			t.Errorf("%s: the compare pane says %q beside %s, the playground %q: want the same", c.name, inPane, c.field, inPlayground)
		}
	}
	if list, _, err := s.store.Runs(context.Background(), db.RunFilter{UserID: s.userID(t, "ada"), Limit: 5}); err != nil || len(list) != 0 {
		t.Errorf("%d runs were stored (err %v), want none: nothing is sent while the panel has a mistake", len(list), err)
	}
}

// storedBodies is the body of each of user's stored runs, newest first.
func storedBodies(t *testing.T, s *server, user int64) []map[string]any {
	t.Helper()
	list, _, err := s.store.Runs(context.Background(), db.RunFilter{UserID: user, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, r := range list {
		run, err := s.store.Run(context.Background(), user, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		var spec struct {
			Body map[string]any `json:"body"`
		}
		if err := json.Unmarshal([]byte(run.Spec), &spec); err != nil {
			t.Fatal(err)
		}
		out = append(out, spec.Body)
	}
	return out
}

func TestBrowserExtraBodyGoesOverThePanelOnBothPages(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	// The panel says 0.9; the extra body, which goes over it, 0.2.
	panel := map[string]string{"temperature": "0.9", "max_completion_tokens": "8", "extra_body": `{"temperature": 0.2}`}
	err := chromedp.Do(ctx,
		choose("sim", "sim-fast"),
		setMessage("Say hello."),
		setPanel("#pg-panel", panel),
		chromedp.Click(chromedp.CSS("#pg-run")),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitRunDone(t, ctx)

	err = chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/compare"),
		comparePanesReady(2),
		chromedp.Evaluate[chromedp.Void](`document.querySelector("#cmp-messages [data-content]").value = "Say hello."`),
		chromedp.Evaluate[chromedp.Void](`document.querySelectorAll(".cmp-pane [data-model]").forEach((m) => (m.value = "sim-fast"))`),
		setPanel(".cmp-pane [data-panel]", panel),
		chromedp.Click(chromedp.CSS("#cmp-run")),
		chromedp.Poll[chromedp.Void](`!document.getElementById("cmp-summary").hidden && !document.getElementById("compare").classList.contains("running")`,
			chromedp.WithPollingInterval(50*time.Millisecond)),
	)
	if err != nil {
		t.Fatal(err)
	}

	bodies := storedBodies(t, s, s.userID(t, "ada"))
	if len(bodies) != 3 {
		t.Fatalf("%d runs stored, want the playground's and two panes'", len(bodies))
	}
	playground := bodies[2]
	if playground["temperature"] != 0.2 {
		t.Errorf("the playground sent temperature %v, want the extra body's 0.2 over the panel's 0.9", playground["temperature"])
	}
	for i, pane := range bodies[:2] {
		if !reflect.DeepEqual(pane, playground) {
			t.Errorf("compare pane %d sent %v, the playground %v: want the same request", 2-i, pane, playground)
		}
	}
}

func TestBrowserBothPagesOfferTheSameRoles(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	playground, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#pg-messages .message [data-role] option")).map(o => o.value)`))
	if err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx, chromedp.Navigate(s.url+"/compare"), comparePanesReady(2))
	if err != nil {
		t.Fatal(err)
	}
	compare, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#cmp-messages .message [data-role] option")).map(o => o.value)`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"system", "developer", "user", "assistant", "tool"}
	if !reflect.DeepEqual(playground, want) {
		t.Errorf("the playground offers the roles %v, want %v", playground, want)
	}
	if !reflect.DeepEqual(compare, want) {
		t.Errorf("the compare page offers the roles %v, want %v", compare, want)
	}

	// A tool message answers a call: in compare too, it asks for the call's id.
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => {
		const li = document.querySelector("#cmp-messages .message");
		const sel = li.querySelector("[data-role]");
		sel.value = "tool";
		sel.dispatchEvent(new Event("change", { bubbles: true }));
		const box = li.querySelector("[data-tool-call-id]");
		return !!box && box.offsetParent !== null;
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if !shown {
		t.Error("a compare message set to tool shows no tool_call_id box")
	}
}
