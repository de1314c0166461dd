package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/llm"
	"knobs/views"
)

// ShowRunPage shows one of the user's runs: the request, the output, the
// metrics and the raw request, with the actions on it.
func (h *Handler) ShowRunPage(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	run, err := h.store.Run(ctx(c), u.ID, id)
	if err != nil {
		return err
	}
	v := h.runView(h.readRunLogged(ctx(c), u.ID, run))
	v.Page = h.page(c, fmt.Sprintf("Run %d", run.ID), "history")
	shares, err := h.store.Shares(ctx(c), u.ID, db.ShareRun, run.ID)
	if err != nil {
		return err
	}
	for _, s := range shares {
		v.Shares = append(v.Shares, shareRow(c, s))
	}
	providers, err := h.providerList(ctx(c))
	if err != nil {
		return err
	}
	for _, p := range providers {
		v.Providers = append(v.Providers, views.ProviderOption{ID: p.ID, Name: p.Name, Selected: p.ID == run.Provider})
	}
	// Only a run this process runs can be followed live; one left
	// running by a process that has gone shows as interrupted.
	v.Live = v.Status == db.RunRunning
	return Render(c, fiber.StatusOK, views.RunPage(v))
}

// readRunLogged reads a stored run for a page, which shows what can be
// read of a run with a broken column rather than nothing, and logs the
// rest.
func (h *Handler) readRunLogged(ctx context.Context, user int64, run db.Run) storedRun {
	sr, err := h.readRun(user, run)
	if err != nil {
		h.log.ErrorContext(ctx, "reading a stored run", "run", run.ID, "err", err)
	}
	return sr
}

// runView turns a stored run into what its page shows.
func (h *Handler) runView(sr storedRun) views.RunView {
	run := sr.Run
	v := views.RunView{
		ID: run.ID, Status: sr.Displayed, When: run.CreatedAt.Format("2 Jan 2006 15:04:05"),
		Provider: run.Provider, Model: run.Model, Endpoint: run.Endpoint,
		Starred: run.Starred, Note: run.Note, GroupID: run.GroupID,
	}
	prompts, n := 1, 1
	if len(sr.Spec.Body) > 0 {
		v.Params, v.Messages, v.Prompt, v.HasPrompt = requestView(sr.Spec.Body)
		prompts, n = promptCount(sr.Spec.Body)
	}
	for _, k := range slices.Sorted(maps.Keys(sr.Vars)) {
		v.Variables = append(v.Variables, views.KeyValue{Key: k, Value: sr.Vars[k]})
	}
	res := sr.Result
	for _, ch := range res.Choices {
		cv := views.ChoiceView{Index: ch.Index, Text: ch.Content, Reasoning: ch.Reasoning, FinishReason: ch.FinishReason, HTML: h.md.Render(ch.Content),
			CutOff: ch.FinishReason == "length" || ch.FinishReason == "content_filter", Label: choiceLabel(ch.Index, prompts, n)}
		for _, tc := range ch.ToolCalls {
			cv.ToolCalls = append(cv.ToolCalls, views.KeyValue{Key: tc.Name, Value: prettyJSON(tc.Arguments)})
		}
		cv.Logprobs = logprobViews(ch.Logprobs)
		if len(ch.Tokens) > 0 {
			cv.Tokens = strings.Trim(fmt.Sprint(ch.Tokens), "[]")
		}
		v.Choices = append(v.Choices, cv)
	}
	v.Answer = answerView(res.Response)
	if res.Error != nil {
		v.Error = &views.RunErrorView{Kind: strings.ReplaceAll(string(res.Error.Kind), "_", " "), Message: res.Error.Message, Advice: errorAdvice(res.Error)}
		if res.Error.Status != 0 {
			v.Error.Status = strconv.Itoa(res.Error.Status)
		}
	}
	m := res.Metrics
	if m.TTFTMs > 0 {
		v.Metrics = append(v.Metrics, views.KeyValue{Key: "First token", Value: fmt.Sprintf("%.1f ms", m.TTFTMs)})
	}
	if m.TokensPerSec > 0 {
		v.Metrics = append(v.Metrics, views.KeyValue{Key: "Tokens/s", Value: fmt.Sprintf("%.0f", m.TokensPerSec)})
	}
	if m.TotalMs > 0 {
		v.Metrics = append(v.Metrics, views.KeyValue{Key: "Total", Value: fmt.Sprintf("%.2f s", m.TotalMs/1000)})
	}
	if m.CostUSD > 0 {
		v.Metrics = append(v.Metrics, views.KeyValue{Key: "Cost", Value: fmt.Sprintf("$%.6f", m.CostUSD)})
	}
	if m.Tokens > 0 {
		v.Metrics = append(v.Metrics, views.KeyValue{Key: "Tokens", Value: strconv.Itoa(m.Tokens)})
	}
	v.Usage = usageView(res.Usage, res.TimeInfo)
	v.Request = prettyJSON(run.RawRequest)
	if sr.Raw != nil && len(sr.Raw.Added) > 0 {
		v.Added = strings.Join(sr.Raw.Added, ", ")
	}
	return v
}

// usageView lists every figure of the provider's usage and timing that it
// reported, each once.
func usageView(u *llm.Usage, t *llm.TimeInfo) []views.KeyValue {
	var out []views.KeyValue
	add := func(key string, n int, always bool) {
		if n != 0 || always {
			out = append(out, views.KeyValue{Key: key, Value: strconv.Itoa(n)})
		}
	}
	if u != nil {
		add("Prompt tokens", u.PromptTokens, true)
		completion := "Completion tokens"
		if u.ReasoningTokens > 0 {
			completion += " (reasoning included)"
			if u.ReasoningApart {
				completion = "Completion tokens (reasoning apart)"
			}
		}
		add(completion, u.CompletionTokens, true)
		add("Total tokens", u.TotalTokens, true)
		add("Reasoning tokens", u.ReasoningTokens, false)
		add("Cached tokens", u.CachedTokens, false)
		add("Prompt text tokens", u.PromptTextTokens, false)
		add("Prompt image tokens", u.PromptImageTokens, false)
		add("Prompt audio tokens", u.PromptAudioTokens, false)
		add("Image tokens", u.ImageTokens, false)
		add("Completion audio tokens", u.CompletionAudioTokens, false)
		if u.AcceptedPredictionTokens != 0 || u.RejectedPredictionTokens != 0 {
			// Whether prediction helped: accepted tokens were not generated.
			out = append(out, views.KeyValue{Key: "Prediction", Value: fmt.Sprintf("%d accepted · %d rejected tokens", u.AcceptedPredictionTokens, u.RejectedPredictionTokens)})
		}
		add("Live search sources used", u.NumSourcesUsed, false)
		if u.CostInUSDTicks != 0 {
			out = append(out, views.KeyValue{Key: "Provider cost", Value: fmt.Sprintf("$%.10f (%d ticks)", float64(u.CostInUSDTicks)/1e10, u.CostInUSDTicks)})
		}
	}
	if t != nil {
		out = append(out, views.KeyValue{Key: "Server time", Value: fmt.Sprintf("queue %.1f · prompt %.1f · completion %.1f · total %.1f ms", t.QueueTime*1000, t.PromptTime*1000, t.CompletionTime*1000, t.TotalTime*1000)})
		if t.Created > 0 {
			out = append(out, views.KeyValue{Key: "Server started", Value: time.UnixMicro(int64(t.Created * 1e6)).UTC().Format("2006-01-02 15:04:05.000 UTC")})
		}
	}
	return out
}

// answerView lists how the provider labelled its answer.
func answerView(r *llm.Response) []views.KeyValue {
	if r == nil {
		return nil
	}
	var out []views.KeyValue
	add := func(k, v string) {
		if v != "" {
			out = append(out, views.KeyValue{Key: k, Value: v})
		}
	}
	add("Response id", r.ID)
	add("Model that answered", r.Model)
	add("Object", r.Object)
	add("System fingerprint", r.SystemFingerprint)
	add("Service tier", r.ServiceTier)
	if r.Created != 0 {
		add("Created", time.Unix(r.Created, 0).UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	if r.Streamed {
		add("Delivery", "streamed")
	} else {
		add("Delivery", "one JSON answer (not streamed)")
	}
	for _, n := range r.Notes {
		add("Not read", n)
	}
	return out
}

// logprobViews turns a choice's logprobs into rows; a token without a
// logprob says so rather than showing 0 (certainty).
func logprobViews(lps []llm.TokenLogprob) []views.LogprobView {
	out := make([]views.LogprobView, 0, len(lps))
	for _, lp := range lps {
		row := views.LogprobView{Token: lp.Token, Part: lp.Part, Prob: "no logprob", Logprob: "—"}
		if !lp.NoLogprob {
			row.Prob = fmt.Sprintf("%.1f%%", 100*math.Exp(lp.Logprob))
			row.Logprob = strconv.FormatFloat(lp.Logprob, 'f', -1, 64)
		}
		if lp.TextOffset != nil {
			row.Offset = strconv.Itoa(*lp.TextOffset)
		}
		if len(lp.Bytes) > 0 {
			row.Bytes = strings.Trim(fmt.Sprint(lp.Bytes), "[]")
		}
		var alts []string
		for _, t := range lp.Top {
			a := fmt.Sprintf("%q %.1f%%", t.Token, 100*math.Exp(t.Logprob))
			if len(t.Bytes) > 0 {
				a += " (bytes " + strings.Trim(fmt.Sprint(t.Bytes), "[]") + ")"
			}
			alts = append(alts, a)
		}
		row.Top = strings.Join(alts, " · ")
		out = append(out, row)
	}
	return out
}

// promptCount reads how many prompts a completion request has and its n:
// a completion answers n choices per prompt, indexed prompt by prompt.
func promptCount(body json.RawMessage) (prompts, n int) {
	var b struct {
		Prompt json.RawMessage `json:"prompt"`
		N      *int            `json:"n"`
	}
	prompts, n = 1, 1
	if json.Unmarshal(body, &b) != nil {
		return
	}
	if b.N != nil && *b.N > 0 {
		n = *b.N
	}
	var list []json.RawMessage
	if json.Unmarshal(b.Prompt, &list) == nil && len(list) > 1 {
		if first := bytes.TrimSpace(list[0]); len(first) > 0 && (first[0] == '"' || first[0] == '[') {
			prompts = len(list) // strings or token-id arrays: one prompt each
		}
	}
	return
}

// choiceLabel names choice i of a run with prompts prompts and n choices each.
func choiceLabel(i, prompts, n int) string {
	if prompts <= 1 {
		return "Choice " + strconv.Itoa(i)
	}
	return fmt.Sprintf("Prompt %d · choice %d", i/n+1, i%n)
}

// errorAdvice says what a user can do about a provider error.
func errorAdvice(e *llm.Error) string {
	switch e.Kind {
	case llm.ErrBadKey:
		return "Check the API key: yours in Settings, or ask an admin about the team key."
	case llm.ErrRateLimit:
		if e.RetryAfter > 0 {
			return fmt.Sprintf("The provider's rate limit was reached: try again in %s.", e.RetryAfter.Round(time.Second))
		}
		return "The provider's rate limit was reached: wait a little and try again."
	case llm.ErrNoCredits:
		return "The account is out of credits: add some with the provider."
	case llm.ErrUnknownModel:
		return "Pick a model from the list, or check the id."
	case llm.ErrNoEndpoint:
		return "The provider has no such endpoint: check its base URL, or try the other mode (chat or completion)."
	}
	return ""
}

// requestView splits a request body into its parameters and its
// conversation (or prompt).
func requestView(body json.RawMessage) (params []views.KeyValue, msgs []views.MessageView, prompt string, hasPrompt bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		return nil, nil, "", false
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		switch k {
		case "messages":
			var ms []struct {
				Role       string          `json:"role"`
				Content    json.RawMessage `json:"content"`
				Name       string          `json:"name"`
				ToolCallID string          `json:"tool_call_id"`
				ToolCalls  json.RawMessage `json:"tool_calls"`
				Reasoning  string          `json:"reasoning"`
			}
			_ = json.Unmarshal(fields[k], &ms) // shown as far as it reads
			for _, m := range ms {
				mv := views.MessageView{Role: m.Role, Content: contentText(m.Content)}
				var extra []string
				if m.Name != "" {
					extra = append(extra, "name: "+m.Name)
				}
				if m.ToolCallID != "" {
					extra = append(extra, "tool_call_id: "+m.ToolCallID)
				}
				if m.Reasoning != "" {
					extra = append(extra, "reasoning: "+m.Reasoning)
				}
				if len(m.ToolCalls) > 0 && string(m.ToolCalls) != "null" {
					extra = append(extra, "tool_calls: "+prettyJSON(string(m.ToolCalls)))
				}
				mv.Extra = strings.Join(extra, "\n")
				msgs = append(msgs, mv)
			}
		case "prompt":
			hasPrompt = true
			var s string
			if json.Unmarshal(fields[k], &s) == nil {
				prompt = s
			} else {
				prompt = prettyJSON(string(fields[k]))
			}
		default:
			params = append(params, views.KeyValue{Key: k, Value: prettyJSON(string(fields[k]))})
		}
	}
	return params, msgs, prompt, hasPrompt
}

// contentText is a message's content as text: the string, or its text parts.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "text" {
				b.WriteString(p.Text)
			}
		}
		return b.String()
	}
	return string(raw)
}

// prettyJSON indents s when it is JSON and leaves it as it is otherwise.
func prettyJSON(s string) string {
	var out bytes.Buffer
	if json.Indent(&out, []byte(s), "", "  ") != nil {
		return s
	}
	return out.String()
}
