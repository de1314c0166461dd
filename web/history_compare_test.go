package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"knobs/runner"
)

// runToEnd starts spec through POST /runs and reads its events to done;
// it returns the run's id and the events as streamed.
func (c *client) runToEnd(spec string) (int64, []sseEvent) {
	c.t.Helper()
	r, run := c.postRun(spec)
	if r.status != http.StatusCreated {
		c.t.Fatalf("POST /runs = %d %s", r.status, r.body)
	}
	_, events := c.readEvents(run.Events, 0, nil)
	if len(events) == 0 || events[len(events)-1].event != "done" {
		c.t.Fatalf("run %d did not stream to done: %+v", run.ID, events)
	}
	return run.ID, events
}

// simChat is a short sim-fast chat with extra body fields (",..." or "").
func simChat(prompt, extra string) string {
	return fmt.Sprintf(`{"provider":"sim","endpoint":"chat","body":{"model":"sim-fast","messages":[{"role":"user","content":%q}],"max_completion_tokens":40%s}}`, prompt, extra)
}

// storedOutput is choice 0's content of a stored run.
func (s *server) storedOutput(t *testing.T, user, id int64) string {
	t.Helper()
	run, err := s.store.Run(context.Background(), user, id)
	if err != nil {
		t.Fatal(err)
	}
	var res runner.Result
	if err := json.Unmarshal([]byte(run.Result), &res); err != nil || len(res.Choices) == 0 {
		t.Fatalf("run %d result %q: %v", id, run.Result, err)
	}
	return res.Choices[0].Content
}

var (
	diffPiece = regexp.MustCompile(`(?s)<del class="diff-del">(.*?)</del>|<ins class="diff-ins">(.*?)</ins>|<span>(.*?)</span>`)
	paramRow  = regexp.MustCompile(`(?s)<tr class="diff-([a-z-]+)" data-param="([^"]+)">.*?</tr>`)
	cellCode  = regexp.MustCompile(`<td><code>([^<]*)</code></td>`)
)

// diffSides reads a word diff on a page back into its two texts and
// counts the deleted and inserted pieces.
func diffSides(t *testing.T, body, id string) (a, b string, dels, ins int) {
	t.Helper()
	m := regexp.MustCompile(`(?s)id="` + id + `"><div class="diff-body">(.*?)</div>`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no %s on the page", id)
	}
	block := m[1]
	var sa, sb strings.Builder
	for _, m := range diffPiece.FindAllStringSubmatch(block, -1) {
		switch {
		case strings.HasPrefix(m[0], "<del"):
			sa.WriteString(html.UnescapeString(m[1]))
			dels++
		case strings.HasPrefix(m[0], "<ins"):
			sb.WriteString(html.UnescapeString(m[2]))
			ins++
		default:
			sa.WriteString(html.UnescapeString(m[3]))
			sb.WriteString(html.UnescapeString(m[3]))
		}
	}
	return sa.String(), sb.String(), dels, ins
}

// params reads the parameter table of a compare page: key -> state, A, B.
func params(body string) map[string][3]string {
	out := map[string][3]string{}
	for _, m := range paramRow.FindAllStringSubmatch(body, -1) {
		cells := cellCode.FindAllStringSubmatch(m[0], -1)
		if len(cells) != 2 {
			continue
		}
		out[html.UnescapeString(m[2])] = [3]string{m[1], html.UnescapeString(cells[0][1]), html.UnescapeString(cells[1][1])}
	}
	return out
}

func TestCompareShowsWhatChanged(t *testing.T) {
	s, admin := newTeam(t)
	user := s.userID(t, "admin")
	a, _ := admin.runToEnd(simChat("Tell me about glaciers <b>now</b>", `,"temperature":0.2,"seed":1,"response_format":{"type":"json_schema","json_schema":{"name":"first","schema":{"type":"object","properties":{"summary":{"type":"string"}},"required":["summary"]}}}`))
	b, _ := admin.runToEnd(simChat("Tell me about rivers <b>now</b>", `,"temperature":0.9,"seed":2,"top_p":0.5,"response_format":{"type":"json_schema","json_schema":{"name":"second","schema":{"type":"object","properties":{"summary":{"type":"string"}},"required":["summary"]}}}`))

	r := admin.get(fmt.Sprintf("/history/compare?a=%d&b=%d", a, b))
	wantPage(t, r, http.StatusOK, fmt.Sprintf("Compare run %d and run %d", a, b))
	if r.has("<b>now</b>") {
		t.Error("a message's markup reached the page unescaped")
	}

	got := params(r.body)
	for key, want := range map[string][3]string{
		"provider":                         {"same", `"sim"`, `"sim"`},
		"endpoint":                         {"same", `"chat"`, `"chat"`},
		"model":                            {"same", `"sim-fast"`, `"sim-fast"`},
		"temperature":                      {"changed", "0.2", "0.9"},
		"seed":                             {"changed", "1", "2"},
		"top_p":                            {"only-b", "—", "0.5"},
		"response_format.json_schema.name": {"changed", `"first"`, `"second"`},
		"response_format.type":             {"same", `"json_schema"`, `"json_schema"`},
	} {
		if got[key] != want {
			t.Errorf("parameter %s: %q, want %q", key, got[key], want)
		}
	}
	var order []string
	for _, m := range paramRow.FindAllStringSubmatch(r.body, 3) {
		order = append(order, m[2])
	}
	if fmt.Sprint(order) != "[provider endpoint model]" {
		t.Errorf("the parameters start with %v, want provider, endpoint, model", order)
	}
	if _, ok := got["messages"]; ok {
		t.Error("the messages are listed as a parameter")
	}
	if !strings.Contains(r.body, fmt.Sprintf("only in run %d", b)) {
		t.Error("top_p is not said to be only in run B")
	}

	// The message: the replaced word is struck out and the new one marked.
	if !r.has(`<del class="diff-del">glaciers </del><ins class="diff-ins">rivers </ins>`) {
		t.Errorf("the message diff does not mark glaciers -> rivers: %s", regexpFind(`(?s)(<ol class="messages.*?</ol>)`, r.body))
	}

	// The output diff reads back as both outputs, with words marked on
	// each side when they differ.
	outA, outB := s.storedOutput(t, user, a), s.storedOutput(t, user, b)
	gotA, gotB, dels, ins := diffSides(t, r.body, "output-diff")
	if gotA != outA || gotB != outB {
		t.Errorf("the output diff reads back as\n%q\n%q\nwant\n%q\n%q", gotA, gotB, outA, outB)
	}
	if outA == outB {
		t.Fatalf("the simulator gave both seeds the same answer %q: nothing to diff", outA)
	}
	if dels == 0 || ins == 0 {
		t.Errorf("different outputs, yet %d deletions and %d insertions marked", dels, ins)
	}

	// The metrics sit side by side.
	wantPage(t, r, http.StatusOK, "First token", "Tokens/s", "Finish reason", "Cost", "<td>done</td>")

	// The same run twice: nothing changed (the one <del> is the legend's).
	same := admin.get(fmt.Sprintf("/history/compare?a=%d&b=%d", a, a))
	wantPage(t, same, http.StatusOK, "Both runs have the same text.")
	if strings.Count(same.body, `<del class="diff-del">`) != 1 || same.has(`<ins class="diff-ins">rivers`) || same.has(`class="diff-changed" data-param`) {
		t.Error("a run compared with itself shows differences")
	}
}

func TestCompareOnlyTheUsersOwnRuns(t *testing.T) {
	_, admin := newTeam(t)
	mine, _ := admin.runToEnd(simChat("mine", ""))
	bob := admin.addMember("bob")
	his, _ := bob.runToEnd(simChat("his", ""))

	if r := bob.get(fmt.Sprintf("/history/compare?a=%d&b=%d", his, his)); r.status != http.StatusOK {
		t.Fatalf("bob comparing his run with itself: %d", r.status)
	}
	for _, q := range []string{
		fmt.Sprintf("a=%d&b=%d", his, mine),
		fmt.Sprintf("a=%d&b=%d", mine, his),
		fmt.Sprintf("a=%d&b=%d", mine, mine),
		fmt.Sprintf("a=%d&b=99999", his),
		fmt.Sprintf("a=%d", his),
		fmt.Sprintf("a=%d&b=abc", his),
		"",
	} {
		r := bob.get("/history/compare?" + q)
		wantPage(t, r, http.StatusNotFound)
		if r.has("Tell me") || r.has(">mine<") {
			t.Errorf("?%s: the 404 shows something of the admin's run", q)
		}
	}
}
