package web_test

// Arenas over real HTTP: made through the API, answers made ahead on the
// simulator, voted on through the voting link by people without
// accounts, blinded, counted once, ranked; budgets, revocation, team
// links and bad input.

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"knobs/llm/sim"
)

type arenaAPI struct {
	ID      int64  `json:"id"`
	Link    string `json:"link"`
	Status  string `json:"status"`
	Votes   int    `json:"votes"`
	Calls   int    `json:"calls"`
	Answers struct {
		Done, Total int
	} `json:"answers"`
}

func contestant(name, model string, extra map[string]any) map[string]any {
	body := map[string]any{"model": model, "max_tokens": 24, "messages": []any{map[string]any{"role": "system", "content": "Be brief."}}}
	for k, v := range extra {
		body[k] = v
	}
	return map[string]any{"name": name, "provider": "sim", "endpoint": "chat", "body": body}
}

// waitArenaReady polls the arena until its answers are made.
func (s *server) waitArenaReady(t testing.TB, token string, id int64) arenaAPI {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var a arenaAPI
		s.apiCall(t, "GET", fmt.Sprintf("/api/v1/arenas/%d", id), token, nil).json(t, &a)
		if a.Status != "preparing" {
			return a
		}
	}
	t.Fatal("the arena never got ready")
	return arenaAPI{}
}

// voter is someone with only a voting link: a cookie jar, no account.
type voter struct{ c *client }

func (v voter) pair(t testing.TB, link string) (*response, map[string]any) {
	t.Helper()
	r := v.c.get(link + "/pair")
	var out map[string]any
	if r.status == http.StatusOK {
		if err := decodeJSON(r.body, &out); err != nil {
			t.Fatalf("pair: %v %s", err, r.body)
		}
	}
	return r, out
}

func (v voter) vote(t testing.TB, link string, body string) (*response, map[string]any) {
	t.Helper()
	r := v.c.post(link+"/vote", "application/json", strings.NewReader(body), nil)
	var out map[string]any
	_ = decodeJSON(r.body, &out)
	return r, out
}

func TestArenaBlindVotesCountedOnceAndRanked(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	a := srv.apiCall(t, "POST", "/api/v1/arenas", tok, map[string]any{
		"name": "Which tone", "audience": "public", "mode": "pregenerated",
		// Long answers: the simulator names itself at the start and the end.
		"contestants": []any{contestant("Aurora", "sim-fast", map[string]any{"max_tokens": 400, "min_tokens": 300}),
			contestant("Borealis", "sim-reasoning", map[string]any{"max_tokens": 400, "min_tokens": 300}),
			contestant("Cirrus", "sim-fast", map[string]any{"temperature": 1.5, "max_tokens": 400, "min_tokens": 300})},
		"prompts":    map[string]any{"list": []string{"Tell me about glaciers", "Tell me about rivers"}},
		"mask_terms": []string{"Nimbus"},
	})
	if a.status != http.StatusCreated {
		t.Fatalf("create: %d %s", a.status, a.body)
	}
	var ar arenaAPI
	a.json(t, &ar)
	if !strings.HasPrefix(ar.Link, "/a/") || ar.Answers.Total != 6 {
		t.Fatalf("created: %s", a.body)
	}
	ar = srv.waitArenaReady(t, tok, ar.ID)
	if ar.Status != "ready" || ar.Answers.Done != 6 {
		t.Fatalf("ready: %+v", ar)
	}

	anyone := voter{srv.newClient(t)}
	r, p := anyone.pair(t, ar.Link)
	if r.status != http.StatusOK || p["pair_id"] == nil || !strings.HasPrefix(fmt.Sprint(p["prompt"]), "Tell me about") {
		t.Fatalf("a pair: %d %s", r.status, r.body)
	}
	// Nothing before the vote gives a contestant away: every byte of the
	// answer searched for names, models, providers and ids.
	for _, leak := range []string{"aurora", "borealis", "cirrus", "sim-fast", "sim-reasoning", "simulator", `"provider"`, `"model"`, "run_id", "ms"} {
		if strings.Contains(strings.ToLower(r.body), leak) {
			t.Errorf("the pair gives away %q: %s", leak, r.body)
		}
	}
	// The simulator writes its own name ("I am the Knobs simulator"):
	// masked.
	if !strings.Contains(r.body, "[model]") {
		t.Errorf("the simulator's own name is not masked: %s", r.body)
	}
	// A reload gives the same pair.
	if _, again := anyone.pair(t, ar.Link); again["pair_id"] != p["pair_id"] {
		t.Errorf("a reload gave pair %v, want %v", again["pair_id"], p["pair_id"])
	}
	// A vote reveals the names; a second vote on it is refused.
	vr, reveal := anyone.vote(t, ar.Link, fmt.Sprintf(`{"pair_id":%v,"choice":"a","reason":"warmer"}`, p["pair_id"]))
	names := fmt.Sprint(reveal["a"], reveal["b"])
	if vr.status != http.StatusOK || !strings.Contains(names, "name:") || !(strings.Contains(names, "Aurora") || strings.Contains(names, "Borealis") || strings.Contains(names, "Cirrus")) {
		t.Fatalf("the reveal: %d %s", vr.status, vr.body)
	}
	if vr, _ := anyone.vote(t, ar.Link, fmt.Sprintf(`{"pair_id":%v,"choice":"b"}`, p["pair_id"])); vr.status != http.StatusConflict {
		t.Errorf("a second vote: %d %s", vr.status, vr.body)
	}
	if vr, _ := anyone.vote(t, ar.Link, fmt.Sprintf(`{"pair_id":%v,"choice":"maybe"}`, p["pair_id"])); vr.status != http.StatusUnprocessableEntity {
		t.Errorf("a bad choice: %d %s", vr.status, vr.body)
	}
	// Someone who never opened the link cannot vote; nor on another's pair.
	stranger := voter{srv.newClient(t)}
	if vr, _ := stranger.vote(t, ar.Link, fmt.Sprintf(`{"pair_id":%v,"choice":"a"}`, p["pair_id"])); vr.status != http.StatusForbidden {
		t.Errorf("a vote without the voter cookie: %d", vr.status)
	}
	stranger.pair(t, ar.Link)
	if vr, _ := stranger.vote(t, ar.Link, fmt.Sprintf(`{"pair_id":%v,"choice":"a"}`, p["pair_id"])); vr.status != http.StatusNotFound {
		t.Errorf("a vote on someone else's pair: %d", vr.status)
	}
	// Two more votes, and then the ranking counts three.
	for range 2 {
		_, p := anyone.pair(t, ar.Link)
		if vr, _ := anyone.vote(t, ar.Link, fmt.Sprintf(`{"pair_id":%v,"choice":"tie"}`, p["pair_id"])); vr.status != http.StatusOK {
			t.Fatalf("vote: %d %s", vr.status, vr.body)
		}
	}
	var res struct {
		Votes       int `json:"votes"`
		Contestants []struct {
			Name  string
			Score float64
			Low   float64 `json:"ci_low"`
			High  float64 `json:"ci_high"`
			Votes int
		} `json:"contestants"`
		PositionBias struct {
			Decisive int `json:"decisive"`
			AWins    int `json:"a_wins"`
		} `json:"position_bias"`
		PerVoter []struct{ Votes int } `json:"per_voter"`
	}
	rr := srv.apiCall(t, "GET", fmt.Sprintf("/api/v1/arenas/%d/results", ar.ID), tok, nil)
	rr.json(t, &res)
	if res.Votes != 3 || len(res.Contestants) != 3 || res.PositionBias.Decisive != 1 || res.PositionBias.AWins != 1 || len(res.PerVoter) != 1 || res.PerVoter[0].Votes != 3 {
		t.Errorf("results: %s", rr.body)
	}
	for _, c := range res.Contestants {
		if c.Low > c.Score || c.High < c.Score {
			t.Errorf("%s: score %v outside its interval [%v, %v]", c.Name, c.Score, c.Low, c.High)
		}
	}
	cr := srv.apiCall(t, "GET", fmt.Sprintf("/api/v1/arenas/%d/votes.csv", ar.ID), tok, nil)
	recs, err := csv.NewReader(strings.NewReader(cr.body)).ReadAll()
	if err != nil || len(recs) != 4 || recs[1][6] != "a" || recs[1][8] != "warmer" || recs[1][7] == "" {
		t.Errorf("votes.csv: %v %q", err, recs)
	}
	// Revoked, the link stops at once.
	if rv := srv.apiCall(t, "POST", fmt.Sprintf("/api/v1/arenas/%d/revoke", ar.ID), tok, nil); rv.status != http.StatusOK {
		t.Fatalf("revoke: %d %s", rv.status, rv.body)
	}
	if r, _ := anyone.pair(t, ar.Link); r.status != http.StatusNotFound {
		t.Errorf("a pair after the revoke: %d", r.status)
	}
}

func TestArenaLiveBudgetAndVoteLimit(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	a := srv.apiCall(t, "POST", "/api/v1/arenas", tok, map[string]any{
		"name": "Live", "audience": "public", "mode": "live", "budget_calls": 2, "max_votes_per_voter": 5,
		"contestants": []any{contestant("Aurora", "sim-fast", nil), contestant("Borealis", "sim-fast", map[string]any{"temperature": 1.2})},
		"prompts":     map[string]any{"list": []string{"Tell me about glaciers", "Tell me about rivers", "Tell me about lakes"}},
	})
	if a.status != http.StatusCreated {
		t.Fatalf("create: %d %s", a.status, a.body)
	}
	var ar arenaAPI
	a.json(t, &ar)
	first := voter{srv.newClient(t)}
	r, p := first.pair(t, ar.Link)
	if r.status != http.StatusOK {
		t.Fatalf("the first live pair: %d %s", r.status, r.body)
	}
	first.vote(t, ar.Link, fmt.Sprintf(`{"pair_id":%v,"choice":"b"}`, p["pair_id"]))
	// The budget (two calls) is spent: a new pair for the same voter would
	// need new answers.
	if r, _ := first.pair(t, ar.Link); r.status != http.StatusPaymentRequired || !strings.Contains(r.body, "budget") {
		t.Errorf("past the budget: %d %s", r.status, r.body)
	}
	// Another voter still gets the answers already made.
	second := voter{srv.newClient(t)}
	if r, p2 := second.pair(t, ar.Link); r.status != http.StatusOK || p2["prompt"] != p["prompt"] {
		t.Errorf("answers made before the budget ran out: %d %s", r.status, r.body)
	}
	srv.apiCall(t, "GET", fmt.Sprintf("/api/v1/arenas/%d", ar.ID), tok, nil).json(t, &ar)
	if ar.Calls != 2 {
		t.Errorf("calls: %d, want the budget's 2", ar.Calls)
	}
}

func TestArenaTeamLinkAndBadInput(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	two := []any{contestant("Aurora", "sim-fast", nil), contestant("Borealis", "sim-fast", nil)}
	a := srv.apiCall(t, "POST", "/api/v1/arenas", tok, map[string]any{"name": "Team", "audience": "team", "mode": "pregenerated",
		"contestants": two, "prompts": map[string]any{"list": []string{"Hello"}}})
	var ar arenaAPI
	a.json(t, &ar)
	srv.waitArenaReady(t, tok, ar.ID)
	if r, _ := (voter{srv.newClient(t)}).pair(t, ar.Link); r.status != http.StatusUnauthorized {
		t.Errorf("a team link signed out: %d", r.status)
	}
	bob := admin.addMember("bob")
	if r, _ := (voter{bob}).pair(t, ar.Link); r.status != http.StatusOK {
		t.Errorf("a team link for a member: %d %s", r.status, r.body)
	}

	bad := func(what string, body map[string]any, fields ...string) {
		t.Helper()
		for k, v := range map[string]any{"name": "x", "audience": "public", "mode": "pregenerated", "contestants": two,
			"prompts": map[string]any{"list": []string{"Hi"}}} {
			if _, ok := body[k]; !ok {
				body[k] = v
			}
		}
		wantAPIError(t, what, srv.apiCall(t, "POST", "/api/v1/arenas", tok, body), http.StatusUnprocessableEntity, fields...)
	}
	bad("one contestant", map[string]any{"contestants": two[:1]}, "contestants")
	bad("two of the same name", map[string]any{"contestants": []any{contestant("Aurora", "sim-fast", nil), contestant("aurora", "sim-fast", nil)}}, "contestants[1].name")
	bad("live without a budget", map[string]any{"mode": "live"}, "budget_usd")
	bad("live with dollars on a model without a price", map[string]any{"mode": "live", "budget_usd": 1}, "budget_calls")
	bad("open prompts made ahead", map[string]any{"prompts": map[string]any{"open": true}}, "mode")
	bad("no prompts", map[string]any{"prompts": map[string]any{}}, "prompts")
	bad("an unknown preset", map[string]any{"contestants": []any{map[string]any{"name": "P", "preset": "Nothing"}, two[1]}}, "contestants[0].preset")
	bad("an unknown audience", map[string]any{"audience": "everyone"}, "audience")
	read := admin.makeToken("reader", "read", nil).Token
	wantAPIError(t, "a read token", srv.apiCall(t, "POST", "/api/v1/arenas", read, map[string]any{"name": "x", "audience": "public",
		"mode": "pregenerated", "contestants": two, "prompts": map[string]any{"list": []string{"Hi"}}}), http.StatusForbidden)
	as, _ := srv.store.Arenas(context.Background(), 0, 10)
	if len(as) != 1 {
		t.Errorf("bad input made arenas: %d", len(as))
	}
}

func decodeJSON(s string, v any) error { return json.Unmarshal([]byte(s), v) }

func TestArenaOpenPromptsAreTheVotersOwn(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	a := srv.apiCall(t, "POST", "/api/v1/arenas", tok, map[string]any{
		"name": "Ask anything", "audience": "public", "mode": "live", "budget_calls": 10,
		"contestants": []any{contestant("Aurora", "sim-fast", nil), contestant("Borealis", "sim-fast", map[string]any{"temperature": 1.3})},
		"prompts":     map[string]any{"open": true},
	})
	if a.status != http.StatusCreated {
		t.Fatalf("create: %d %s", a.status, a.body)
	}
	var ar arenaAPI
	a.json(t, &ar)
	sam, kim := voter{srv.newClient(t)}, voter{srv.newClient(t)}
	if r, _ := sam.pair(t, ar.Link); r.status != http.StatusConflict || !strings.Contains(r.body, "Write a prompt") {
		t.Errorf("a pair before any prompt: %d %s", r.status, r.body)
	}
	r := sam.c.post(ar.Link+"/prompt", "application/json", strings.NewReader(`{"text":"Describe a fjord"}`), nil)
	if r.status != http.StatusCreated {
		t.Fatalf("sam's prompt: %d %s", r.status, r.body)
	}
	if r := sam.c.post(ar.Link+"/prompt", "application/json", strings.NewReader(`{"text":"   "}`), nil); r.status != http.StatusUnprocessableEntity {
		t.Errorf("an empty prompt: %d", r.status)
	}
	rp, p := sam.pair(t, ar.Link)
	if rp.status != http.StatusOK || p["prompt"] != "Describe a fjord" {
		t.Fatalf("sam's pair: %d %s", rp.status, rp.body)
	}
	// Kim has written nothing: sam's prompt is not hers.
	kim.pair(t, ar.Link)
	if r, _ := kim.pair(t, ar.Link); r.status != http.StatusConflict {
		t.Errorf("kim's pair without a prompt of hers: %d %s", r.status, r.body)
	}
	if vr, _ := sam.vote(t, ar.Link, fmt.Sprintf(`{"pair_id":%v,"choice":"both_bad","reason":"too short"}`, p["pair_id"])); vr.status != http.StatusOK {
		t.Errorf("sam's vote: %d %s", vr.status, vr.body)
	}
}

func TestArenaLiveAnswerIsMadeOnceForVotersAtOnce(t *testing.T) {
	t.Parallel()
	up := &promptCounter{sim: sim.NewHandler(sim.Options{TokensPerSecond: 300}), seen: map[string]int{}}
	upstream := httptest.NewServer(up)
	t.Cleanup(upstream.Close)
	srv, admin := newTeam(t, withSim(upstreamConfig(upstream)))
	tok := admin.makeToken("ci", "write", nil).Token
	a := srv.apiCall(t, "POST", "/api/v1/arenas", tok, map[string]any{
		"name": "Crowd", "audience": "public", "mode": "live", "budget_calls": 10,
		"contestants": []any{contestant("Aurora", "sim-fast", nil), contestant("Borealis", "sim-fast", map[string]any{"temperature": 1.1})},
		"prompts":     map[string]any{"list": []string{"Describe a glacier"}},
	})
	var ar arenaAPI
	a.json(t, &ar)
	var wg sync.WaitGroup
	texts := make([]string, 4)
	for i := range texts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := voter{srv.newClient(t)}
			if r, p := v.pair(t, ar.Link); r.status == http.StatusOK {
				texts[i] = fmt.Sprint(p["a"], p["b"])
			}
		}()
	}
	wg.Wait()
	// Four voters at once, one prompt, two contestants: two calls.
	if n := up.count("Be brief."); n != 2 { // every contestant's first message
		t.Errorf("the upstream answered %d times for two answers", n)
	}
	for i, tx := range texts {
		if tx == "" {
			t.Errorf("voter %d got no pair", i)
		}
	}
	srv.apiCall(t, "GET", fmt.Sprintf("/api/v1/arenas/%d", ar.ID), tok, nil).json(t, &ar)
	if ar.Calls != 2 {
		t.Errorf("the budget counted %d calls", ar.Calls)
	}
}

func TestArenaResultsSharedReadOnlyWithoutTheVotingLink(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	a := srv.apiCall(t, "POST", "/api/v1/arenas", tok, map[string]any{"name": "Shared results", "audience": "public", "mode": "pregenerated",
		"contestants": []any{contestant("Aurora", "sim-fast", nil), contestant("Borealis", "sim-fast", map[string]any{"temperature": 1.2})},
		"prompts":     map[string]any{"list": []string{"Hello"}}})
	var ar arenaAPI
	a.json(t, &ar)
	srv.waitArenaReady(t, tok, ar.ID)
	v := voter{srv.newClient(t)}
	_, p := v.pair(t, ar.Link)
	v.vote(t, ar.Link, fmt.Sprintf(`{"pair_id":%v,"choice":"a"}`, p["pair_id"]))

	r, out := admin.jsonPost(fmt.Sprintf("/arenas/%d/shares", ar.ID), `{"audience":"public"}`)
	link := fmt.Sprint(out["url"])
	if r.status != http.StatusCreated || !strings.HasPrefix(link, "/r/") {
		t.Fatalf("share: %d %s", r.status, r.body)
	}
	page := srv.newClient(t).get(link)
	token := strings.TrimPrefix(ar.Link, "/a/")
	if page.status != http.StatusOK || !page.has("Shared by admin") || !page.has("Aurora") || !page.has("Borealis") ||
		page.has(token) || page.has("votes.csv") || page.has("arena-revoke") {
		t.Errorf("the shared results: %d (voting link shown: %v)", page.status, page.has(token))
	}
	bob := admin.addMember("bob")
	if r, _ := bob.jsonPost(fmt.Sprintf("/arenas/%d/shares", ar.ID), `{"audience":"public"}`); r.status != http.StatusForbidden {
		t.Errorf("bob shares the admin's arena: %d", r.status)
	}
	admin.jsonPost(fmt.Sprint(out["revoke"]), `{}`)
	if got := srv.newClient(t).get(link); got.status != http.StatusNotFound {
		t.Errorf("a revoked results link: %d", got.status)
	}
	_, out = admin.jsonPost(fmt.Sprintf("/arenas/%d/shares", ar.ID), `{"audience":"team"}`)
	if got := srv.newClient(t).get(fmt.Sprint(out["url"])); got.status != http.StatusSeeOther {
		t.Errorf("a team results link signed out: %d", got.status)
	}
	if got := bob.get(fmt.Sprint(out["url"])); got.status != http.StatusOK {
		t.Errorf("a team results link for bob: %d", got.status)
	}
}

// An answer that cannot be made leaves its prompt out of the pairs; the
// arena says how many failed.
func TestArenaFailedAnswersLeaveTheirPromptOut(t *testing.T) {
	t.Parallel()
	handler := sim.NewHandler(sim.Options{TokensPerSecond: sim.NoPacing})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), "rivers") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"message":"Bad prompt","type":"invalid_request_error","code":"wrong_api_format"}`)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(upstream.Close)
	srv, admin := newTeam(t, withSim(upstreamConfig(upstream)))
	tok := admin.makeToken("ci", "write", nil).Token
	a := srv.apiCall(t, "POST", "/api/v1/arenas", tok, map[string]any{"name": "Half", "audience": "public", "mode": "pregenerated",
		"contestants": []any{contestant("Aurora", "sim-fast", nil), contestant("Borealis", "sim-fast", map[string]any{"temperature": 1.2})},
		"prompts":     map[string]any{"list": []string{"Tell me about glaciers", "Tell me about rivers"}}})
	var ar arenaAPI
	a.json(t, &ar)
	ar = srv.waitArenaReady(t, tok, ar.ID)
	var d struct {
		Status  string `json:"status"`
		Error   string `json:"error"`
		Answers struct{ Done, Failed int }
	}
	srv.apiCall(t, "GET", fmt.Sprintf("/api/v1/arenas/%d", ar.ID), tok, nil).json(t, &d)
	if d.Status != "ready" || d.Answers.Done != 2 || d.Answers.Failed != 2 || !strings.Contains(d.Error, "2 answers could not be made") {
		t.Fatalf("arena: %+v", d)
	}
	v := voter{srv.newClient(t)}
	_, p := v.pair(t, ar.Link)
	if p["prompt"] != "Tell me about glaciers" {
		t.Errorf("the pair's prompt: %v", p["prompt"])
	}
	v.vote(t, ar.Link, fmt.Sprintf(`{"pair_id":%v,"choice":"a"}`, p["pair_id"]))
	if r, _ := v.pair(t, ar.Link); r.status != http.StatusConflict {
		t.Errorf("a pair on the prompt without answers: %d %s", r.status, r.body)
	}
}
