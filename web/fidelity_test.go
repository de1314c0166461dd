package web_test

import (
	"context"
	"encoding/json"
	"html"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"knobs/llm/llmtest"
	"knobs/runner"
)

// TestEverySeedFieldReachesEventsStoreAndPage runs Cerebras chat and
// completions against a fixture that populates every response field of
// the seeds, streamed and as one JSON answer, and follows each field to
// the events, the stored run and the run page (issue 12, items 7-9).
func TestEverySeedFieldReachesEventsStoreAndPage(t *testing.T) {
	up := httptest.NewServer(llmtest.Handler(llmtest.ShapeCerebras))
	t.Cleanup(up.Close)
	s, admin := newTeam(t, withEnv("CEREBRAS_API_KEY", "csk-fixture-key-123456"), withEnv("CEREBRAS_BASE_URL", up.URL))
	user := s.userID(t, "admin")
	for _, tt := range []struct {
		name, endpoint, body string
		text                 string
	}{
		{"chat streamed", "chat", `{"model":"fixture-model-1","messages":[{"role":"user","content":"hi"}]}`, llmtest.ChatContent},
		{"chat one JSON answer", "chat", `{"model":"fixture-model-1","messages":[{"role":"user","content":"hi"}],"stream":false}`, llmtest.ChatContent},
		{"completion streamed", "completion", `{"model":"fixture-model-1","prompt":"1, 2, 3, 4, "}`, llmtest.CompletionText},
		{"completion one JSON answer", "completion", `{"model":"fixture-model-1","prompt":"1, 2, 3, 4, ","stream":false}`, llmtest.CompletionText},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id, events := admin.runToEnd(`{"provider":"cerebras","endpoint":"` + tt.endpoint + `","body":` + tt.body + `}`)
			byKind := map[string][]string{}
			for _, e := range events {
				byKind[e.event] = append(byKind[e.event], e.data)
			}
			// The events.
			resp := strings.Join(byKind["response"], "\n")
			for _, want := range []string{llmtest.ID, llmtest.Fingerprint, llmtest.Model, strconv.Itoa(llmtest.Created)} {
				if !strings.Contains(resp, want) {
					t.Errorf("response events %q lack %q", resp, want)
				}
			}
			done := strings.Join(byKind["done"], "")
			for _, want := range []string{`"total_tokens":1060`, `"accepted_prediction_tokens":900`, `"rejected_prediction_tokens":100`, `"image_tokens":3`, `"total_time":0.461`, `"created":1721088719.5`, `"tokens":1020`} {
				if !strings.Contains(done, want) {
					t.Errorf("done event lacks %s: %s", want, done)
				}
			}
			lps := strings.Join(byKind["logprobs"], "")
			if tt.endpoint == "chat" {
				for _, want := range []string{`"part":"reasoning"`, `"part":"refusal"`, `"bytes":[72,105]`} {
					if !strings.Contains(lps, want) {
						t.Errorf("logprobs events lack %s: %s", want, lps)
					}
				}
			} else {
				if !strings.Contains(lps, `"no_logprob":true`) || !strings.Contains(lps, `"text_offset":1`) {
					t.Errorf("completion logprobs events: %s", lps)
				}
				if !strings.Contains(strings.Join(byKind["tokens"], ""), "9906") {
					t.Errorf("no raw tokens event: %v", byKind["tokens"])
				}
			}
			if strings.Contains(tt.body, `"stream":false`) && strings.Contains(strings.Join(byKind["request"], ""), `"added"`) {
				t.Errorf("a non-streamed request says Knobs added fields: %v", byKind["request"])
			}

			// The stored run.
			run, err := s.store.Run(context.Background(), user, id)
			if err != nil {
				t.Fatal(err)
			}
			var res runner.Result
			if err := json.Unmarshal([]byte(run.Result), &res); err != nil {
				t.Fatal(err)
			}
			if res.Response == nil || res.Response.ID != llmtest.ID || res.Response.SystemFingerprint != llmtest.Fingerprint || res.Response.Created != llmtest.Created {
				t.Errorf("stored response = %+v", res.Response)
			}
			if tt.endpoint == "chat" && res.Response.ServiceTier != llmtest.ServiceTier {
				t.Errorf("stored service tier = %q", res.Response.ServiceTier)
			}
			u := res.Usage
			if u == nil || u.TotalTokens != llmtest.TotalTokens || u.AcceptedPredictionTokens != llmtest.AcceptedTokens || u.ImageTokens != llmtest.ImageTokens {
				t.Errorf("stored usage = %+v", u)
			}
			if res.Metrics.Tokens != llmtest.CompletionTokens {
				t.Errorf("Tokens = %d, want the provider's completion tokens %d (reasoning counted once)", res.Metrics.Tokens, llmtest.CompletionTokens)
			}
			if res.TimeInfo == nil || res.TimeInfo.TotalTime != llmtest.TotalTime || res.TimeInfo.Created != llmtest.TimeCreated {
				t.Errorf("stored time_info = %+v", res.TimeInfo)
			}
			ch := res.Choices[0]
			if ch.Content != tt.text || ch.FinishReason != llmtest.FinishReason || len(ch.Logprobs) == 0 {
				t.Errorf("stored choice = %+v", ch)
			}

			// The run page.
			page := admin.get("/runs/" + strconv.FormatInt(id, 10))
			body := html.UnescapeString(page.body)
			want := []string{llmtest.ID, llmtest.Fingerprint, "Model that answered", llmtest.Model, "Total tokens", "1060",
				"900 accepted · 100 rejected", "Image tokens", "total 461.0 ms", "finish_reason: length", "cut off", "Logprobs", "2024-07-16 00:11:59 UTC"}
			if tt.endpoint == "chat" {
				want = append(want, "Service tier", llmtest.ServiceTier, "reasoning", "refusal", "(bytes 72 105)")
			} else {
				want = append(want, "no logprob", "Raw tokens", "9906 505")
			}
			if strings.Contains(tt.body, `"stream":false`) {
				want = append(want, "one JSON answer (not streamed)")
			} else {
				want = append(want, "Added by Knobs, not by you", "stream, stream_options")
			}
			for _, w := range want {
				if !strings.Contains(body, w) {
					t.Errorf("the run page does not show %q", w)
				}
			}
		})
	}
}
