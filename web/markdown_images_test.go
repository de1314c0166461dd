package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"knobs/db"
	"knobs/runner"
)

// storeRun keeps a finished run of user whose answer is content, as the
// runner would have stored it, and returns its id.
func storeRun(t testing.TB, s *server, user int64, content string, events []byte) int64 {
	t.Helper()
	ctx := context.Background()
	id, err := s.store.CreateRun(ctx, db.Run{UserID: user, Provider: "sim", Endpoint: "chat", Model: "sim-fast",
		Spec: `{"provider":"sim","endpoint":"chat","body":{"model":"sim-fast","messages":[{"role":"user","content":"hi"}]}}`, CreatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := json.Marshal(runner.Result{Choices: []runner.Choice{{Content: content, FinishReason: "stop"}}, Metrics: runner.Metrics{Tokens: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.store.FinishRun(ctx, id, db.RunDone, `{"model":"sim-fast"}`, string(res), events, time.Now()); err != nil {
		t.Fatal(err)
	}
	return id
}

// An answer with an image of one of Knobs' own endpoints must not make
// the viewer's browser request it: the run page shows a link instead.
func TestRunPageDoesNotLoadImagesFromAnswers(t *testing.T) {
	s, admin := newTeam(t)
	id := storeRun(t, s, s.userID(t, "admin"), "Look: ![x](/history/export) and ![cat](https://example.com/cat.png)", nil)
	page := admin.open(fmt.Sprintf("/runs/%d", id))
	wantPage(t, page, http.StatusOK, `href="/history/export"`, "image: x — /history/export", "image: cat — https://example.com/cat.png")
	for _, never := range []string{`src="/history/export"`, `src="https://example.com/cat.png"`} {
		if strings.Contains(page.body, never) {
			t.Errorf("the run page has %q: a viewer's browser would fetch it", never)
		}
	}
	// Knobs' own logo is the only image of the page.
	if n := strings.Count(page.body, "<img") - strings.Count(page.body, `<img src="/static/`); n != 0 {
		t.Errorf("the run page has %d images from the answer", n)
	}
}
