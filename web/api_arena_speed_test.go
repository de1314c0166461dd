package web_test

// Issue 17's speed demo: an arena whose voters watch both live answers
// stream side by side. It is refused for answers made ahead, said to be
// not blind wherever the arena is shown, and its stream carries the
// answers' masked text and nothing else.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"knobs/db"
)

// streamEvent is one event of a speed demo's stream.
type streamEvent struct {
	event string
	data  string
}

// readPairStream asks for a voter's next pair as a stream and reads it
// to its end. It answers the response's Content-Type, the raw bytes and
// the events.
func (v voter) readPairStream(t testing.TB, link string) (status int, contentType, raw string, events []streamEvent) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, v.c.srv.url+link+"/pair", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream, application/json")
	r := v.c.do(req)
	raw = r.body
	var ev streamEvent
	sc := bufio.NewScanner(strings.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.event != "" {
				events = append(events, ev)
			}
			ev = streamEvent{}
		case strings.HasPrefix(line, "event: "):
			ev.event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.data = strings.TrimPrefix(line, "data: ")
		}
	}
	return r.status, r.header.Get("Content-Type"), raw, events
}

// applyText applies a text event to what a page shows of a side, as
// arena_vote.js does: from at (UTF-16 units) on, the text is replaced.
func applyText(shown []uint16, at int, text string) []uint16 {
	if at > len(shown) {
		at = len(shown)
	}
	return append(shown[:at:at], utf16.Encode([]rune(text))...)
}

func TestArenaSpeedDemoIsLiveOnlyAndSaysItIsNotBlind(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	two := []any{contestant("Aurora", "sim-fast", nil), contestant("Borealis", "sim-fast", map[string]any{"temperature": 1.2})}

	// Answers made ahead are complete before anyone votes: refused, and
	// nothing is made.
	r := srv.apiCall(t, "POST", "/api/v1/arenas", tok, map[string]any{"name": "Ahead", "audience": "public", "mode": "pregenerated",
		"show_streaming": true, "contestants": two, "prompts": map[string]any{"list": []string{"Hello"}}})
	wantAPIError(t, "a speed demo made ahead", r, http.StatusUnprocessableEntity, "show_streaming")
	if !strings.Contains(r.body, "needs live answers") {
		t.Errorf("the refusal does not say why: %s", r.body)
	}
	if as, _ := srv.store.Arenas(t.Context(), 0, 10); len(as) != 0 {
		t.Errorf("a refused speed demo made %d arenas", len(as))
	}

	type shown struct {
		ID            int64  `json:"id"`
		Link          string `json:"link"`
		ShowStreaming *bool  `json:"show_streaming"`
		Blind         *bool  `json:"blind"`
	}
	made := func(name string, speed bool) shown {
		t.Helper()
		body := map[string]any{"name": name, "audience": "public", "mode": "live", "budget_calls": 10, "contestants": two,
			"prompts": map[string]any{"list": []string{"Hello"}}}
		if speed {
			body["show_streaming"] = true
		}
		r := srv.apiCall(t, "POST", "/api/v1/arenas", tok, body)
		if r.status != http.StatusCreated {
			t.Fatalf("make %s: %d %s", name, r.status, r.body)
		}
		var s shown
		r.json(t, &s)
		return s
	}
	speed, blind := made("Speed", true), made("Blind", false)
	for _, c := range []struct {
		a    shown
		want bool // show_streaming
	}{{speed, true}, {blind, false}} {
		var got shown
		srv.apiCall(t, "GET", fmt.Sprintf("/api/v1/arenas/%d", c.a.ID), tok, nil).json(t, &got)
		if got.ShowStreaming == nil || *got.ShowStreaming != c.want || got.Blind == nil || *got.Blind != !c.want {
			t.Errorf("arena %d: show_streaming %v, blind %v; want %v, %v", c.a.ID, got.ShowStreaming, got.Blind, c.want, !c.want)
		}
		if *c.a.ShowStreaming != c.want {
			t.Errorf("arena %d as made: show_streaming %v", c.a.ID, *c.a.ShowStreaming)
		}
		var res struct {
			Blind *bool `json:"blind"`
		}
		srv.apiCall(t, "GET", fmt.Sprintf("/api/v1/arenas/%d/results", c.a.ID), tok, nil).json(t, &res)
		if res.Blind == nil || *res.Blind != !c.want {
			t.Errorf("arena %d's results: blind %v, want %v", c.a.ID, res.Blind, !c.want)
		}
		page := admin.get(fmt.Sprintf("/arenas/%d", c.a.ID))
		if has := page.has("Speed demo — not blind.") && page.has("Not a blind ranking"); has != c.want {
			t.Errorf("arena %d's page says not blind: %v, want %v", c.a.ID, has, c.want)
		}
		vote := srv.newClient(t).get(c.a.Link)
		if has := vote.has("Speed demo — not blind:</strong> the streaming speed can reveal which model is which."); has != c.want {
			t.Errorf("arena %d's voting page has the speed demo banner: %v, want %v", c.a.ID, has, c.want)
		}
	}

	// A blind arena asked for a stream answers as it always does: the
	// pair whole, as JSON, once both answers are made.
	status, ct, raw, _ := voter{srv.newClient(t)}.readPairStream(t, blind.Link)
	if status != http.StatusOK || !strings.HasPrefix(ct, "application/json") || strings.Contains(raw, "event:") {
		t.Errorf("a blind arena's pair asked as a stream: %d %s %s", status, ct, raw)
	}
}

func TestArenaSpeedDemoStreamsOnlyMaskedText(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	r := srv.apiCall(t, "POST", "/api/v1/arenas", tok, map[string]any{
		"name": "Speed", "audience": "public", "mode": "live", "budget_calls": 2, "show_streaming": true,
		// Long answers: the simulator names itself at the start and the end.
		"contestants": []any{contestant("Aurora", "sim-fast", map[string]any{"max_tokens": 400, "min_tokens": 300}),
			contestant("Borealis", "sim-reasoning", map[string]any{"max_tokens": 400, "min_tokens": 300})},
		"prompts": map[string]any{"list": []string{"Tell me about glaciers", "Tell me about rivers"}},
	})
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	var ar arenaAPI
	r.json(t, &ar)

	anyone := voter{srv.newClient(t)}
	status, ct, raw, events := anyone.readPairStream(t, ar.Link)
	if status != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("the speed demo's pair: %d %s %s", status, ct, raw)
	}
	// Every byte searched: no name, model or provider, no run id or
	// timing; the simulator's own name masked.
	for _, leak := range append(arenaLeaks, "run_id", "ttft", "tokens_per_sec", "total_ms") {
		if strings.Contains(strings.ToLower(raw), leak) {
			t.Errorf("the stream gives away %q", leak)
		}
	}
	if !strings.Contains(raw, "[model]") {
		t.Error("the simulator's own name is not masked in the stream")
	}
	// Only the prompt, text and the pair, in that order; text events
	// hold a side, a place and text, nothing else.
	side := map[string][]uint16{}
	var pair map[string]any
	for i, ev := range events {
		switch ev.event {
		case "prompt":
			if i != 0 || ev.data != `{"text":"Tell me about glaciers"}` && ev.data != `{"text":"Tell me about rivers"}` {
				t.Errorf("prompt event %d: %s", i, ev.data)
			}
		case "text":
			var d map[string]any
			if err := json.Unmarshal([]byte(ev.data), &d); err != nil {
				t.Fatalf("text event %d: %v %s", i, err, ev.data)
			}
			keys := []string{}
			for k := range d {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			s, _ := d["side"].(string)
			at, _ := d["at"].(float64)
			text, _ := d["text"].(string)
			if !slices.Equal(keys, []string{"at", "side", "text"}) || (s != "a" && s != "b") {
				t.Errorf("text event %d: %s", i, ev.data)
			}
			side[s] = applyText(side[s], int(at), text)
		case "pair":
			if i != len(events)-1 {
				t.Errorf("the pair is event %d of %d", i+1, len(events))
			}
			if err := json.Unmarshal([]byte(ev.data), &pair); err != nil {
				t.Fatal(err)
			}
		default:
			t.Errorf("event %d is a %q: %s", i, ev.event, ev.data)
		}
	}
	if pair == nil {
		t.Fatalf("no pair at the end of the stream: %s", raw)
	}
	// What streamed is, word for word, the masked answer the pair holds.
	for _, s := range []string{"a", "b"} {
		want := pair[s].(map[string]any)["text"].(string)
		if got := string(utf16.Decode(side[s])); got != want || want == "" {
			t.Errorf("side %s streamed %q, the pair holds %q", s, got, want)
		}
	}
	// The pair is issued: a reload gets it as JSON, and a vote reveals it.
	if _, again := anyone.pair(t, ar.Link); again["pair_id"] != pair["pair_id"] {
		t.Errorf("a reload gave pair %v, the stream %v", again["pair_id"], pair["pair_id"])
	}
	vr, reveal := anyone.vote(t, ar.Link, fmt.Sprintf(`{"pair_id":%v,"choice":"a"}`, pair["pair_id"]))
	if names := fmt.Sprint(reveal["a"], reveal["b"]); vr.status != http.StatusOK || !strings.Contains(names, "Aurora") || !strings.Contains(names, "Borealis") {
		t.Fatalf("the reveal: %d %s", vr.status, vr.body)
	}
	// The budget (two calls) is spent: the next stream says so, and ends.
	_, _, raw, events = anyone.readPairStream(t, ar.Link)
	if len(events) != 1 || events[0].event != "problem" || !strings.Contains(events[0].data, `"status":402`) || !strings.Contains(events[0].data, "budget for new answers is spent") {
		t.Errorf("past the budget the stream is %s", raw)
	}
	var a db.Arena
	if a, _ = srv.store.Arena(t.Context(), ar.ID); a.Calls != 2 {
		t.Errorf("calls: %d, want the budget's 2", a.Calls)
	}
}

func TestArenaSpeedDemoFromTheForm(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	checked := regexp.MustCompile(`<input type="checkbox" id="ar-streaming"[^>]* checked[ >]`)
	if page := admin.get("/arenas/new"); !page.has(`id="ar-streaming"`) || checked.MatchString(page.body) {
		t.Errorf("the new arena form's speed demo box: %s", errorText(page))
	}
	f := arenaForm()
	f.Set("show_streaming", "on")
	f.Set("mode", "live")
	// Refused for another field: the box stays ticked.
	r := admin.postForm("/arenas", f)
	wantPage(t, r, http.StatusUnprocessableEntity, "A live arena needs a budget")
	if !checked.MatchString(r.body) {
		t.Error("a refused form lost its speed demo box")
	}
	f.Set("budget_calls", "10")
	r = admin.postForm("/arenas", f)
	if r.status != http.StatusSeeOther {
		t.Fatalf("a speed demo from the form: %d %s", r.status, errorText(r))
	}
	wantPage(t, admin.follow(r), http.StatusOK, "Speed demo — not blind.", "Not a blind ranking")
	wantPage(t, admin.get("/arenas"), http.StatusOK, "speed demo, not blind")
	as, _ := srv.store.Arenas(t.Context(), 0, 10)
	if len(as) != 1 || !as[0].ShowStreaming || as[0].Mode != "live" {
		t.Errorf("stored: %+v", as)
	}
}
