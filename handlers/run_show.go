package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/llm"
	"knobs/runner"
	"knobs/views"
)

// ShowRunPage shows one of the user's runs: the request, the output, the
// metrics and the raw request, with the actions on it.
func (h *Handler) ShowRunPage(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := runID(c)
	if err != nil {
		return err
	}
	run, err := h.store.Run(ctx(c), u.ID, id)
	if err != nil {
		return err
	}
	v := h.runView(run)
	v.Page = h.page(c, fmt.Sprintf("Run %d", run.ID), "history")
	shares, err := h.store.Shares(ctx(c), u.ID, db.ShareRun, run.ID)
	if err != nil {
		return err
	}
	for _, s := range shares {
		v.Shares = append(v.Shares, views.ShareRow{ID: s.ID, URL: c.BaseURL() + "/s/" + s.Token, Audience: s.Audience, Created: day(s.CreatedAt), Active: s.Active()})
	}
	providers, err := h.providerList(ctx(c))
	if err != nil {
		return err
	}
	for _, p := range providers {
		v.Providers = append(v.Providers, views.ProviderOption{ID: p.ID, Name: p.Name, Selected: p.ID == run.Provider})
	}
	if run.Status == db.RunRunning {
		// Only a run this process runs can be followed live; one left
		// running by a process that has gone ends interrupted, as the
		// next start will mark it, and its page must not wait for it.
		_, v.Live = h.runner.Run(run.ID, u.ID)
		if !v.Live {
			v.Status = db.RunInterrupted
		}
	}
	return Render(c, fiber.StatusOK, views.RunPage(v))
}

// runView turns a stored run into what its page shows.
func (h *Handler) runView(run db.Run) views.RunView {
	v := views.RunView{
		ID: run.ID, Status: run.Status, When: run.CreatedAt.Format("2 Jan 2006 15:04:05"),
		Provider: run.Provider, Model: run.Model, Endpoint: run.Endpoint,
		Starred: run.Starred, Note: run.Note, GroupID: run.GroupID,
	}
	var spec llm.RunSpec
	if json.Unmarshal([]byte(run.Spec), &spec) == nil {
		v.Params, v.Messages, v.Prompt, v.HasPrompt = requestView(spec.Body)
	}
	if run.Variables != "" {
		var vars map[string]string
		if json.Unmarshal([]byte(run.Variables), &vars) == nil {
			keys := make([]string, 0, len(vars))
			for k := range vars {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				v.Variables = append(v.Variables, views.KeyValue{Key: k, Value: vars[k]})
			}
		}
	}
	var res runner.Result
	_ = json.Unmarshal([]byte(run.Result), &res) // a run cut short may hold an empty result
	for _, ch := range res.Choices {
		cv := views.ChoiceView{Index: ch.Index, Text: ch.Content, Reasoning: ch.Reasoning, FinishReason: ch.FinishReason, HTML: h.md.Render(ch.Content)}
		for _, tc := range ch.ToolCalls {
			cv.ToolCalls = append(cv.ToolCalls, views.KeyValue{Key: tc.Name, Value: prettyJSON(tc.Arguments)})
		}
		v.Choices = append(v.Choices, cv)
	}
	if res.Error != nil {
		v.Error = &views.RunErrorView{Kind: strings.ReplaceAll(string(res.Error.Kind), "_", " "), Message: res.Error.Message}
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
	if u := res.Usage; u != nil {
		v.Usage = append(v.Usage,
			views.KeyValue{Key: "Prompt tokens", Value: strconv.Itoa(u.PromptTokens)},
			views.KeyValue{Key: "Completion tokens", Value: strconv.Itoa(u.CompletionTokens)})
		if u.ReasoningTokens > 0 {
			v.Usage = append(v.Usage, views.KeyValue{Key: "Reasoning tokens", Value: strconv.Itoa(u.ReasoningTokens)})
		}
		if u.CachedTokens > 0 {
			v.Usage = append(v.Usage, views.KeyValue{Key: "Cached tokens", Value: strconv.Itoa(u.CachedTokens)})
		}
	}
	if t := res.TimeInfo; t != nil {
		v.Usage = append(v.Usage, views.KeyValue{Key: "Server time", Value: fmt.Sprintf("queue %.1f · prompt %.1f · completion %.1f ms", t.QueueTime*1000, t.PromptTime*1000, t.CompletionTime*1000)})
	}
	v.Request = prettyJSON(run.RawRequest)
	return v
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
