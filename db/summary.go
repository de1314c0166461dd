package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// lineMax caps, in runes, the first lines kept for the history list.
const lineMax = 200

// runText is what the history list and search keep of a run's spec and
// result, denormalised so that the list never parses JSON.
type runText struct {
	PromptLine string // first line of the last user message or of the prompt
	Prompt     string // every message's text, or the prompt, for search
}

// outputText is the part of runText that comes from the result.
type outputText struct {
	OutputLine   string
	Output       string // every choice's content, reasoning and tool calls, for search
	Tokens       int
	TTFTMs       float64
	TokensPerSec float64
	CostUSD      float64
}

// specText reads the prompt out of a RunSpec's JSON. A spec that does not
// parse has no text: the run is still listed, just not searchable.
func specText(spec string) runText {
	var s struct {
		Body struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
			Prompt json.RawMessage `json:"prompt"`
		} `json:"body"`
	}
	if json.Unmarshal([]byte(spec), &s) != nil {
		return runText{}
	}
	var t runText
	if len(s.Body.Messages) == 0 {
		t.Prompt = contentText(s.Body.Prompt)
		t.PromptLine = firstLine(t.Prompt)
		return t
	}
	texts := make([]string, 0, len(s.Body.Messages))
	last, lastAny := "", ""
	for _, m := range s.Body.Messages {
		text := contentText(m.Content)
		if strings.TrimSpace(text) == "" {
			continue
		}
		texts = append(texts, text)
		lastAny = text
		if m.Role == "user" {
			last = text
		}
	}
	if last == "" {
		last = lastAny
	}
	t.Prompt = strings.Join(texts, "\n")
	t.PromptLine = firstLine(last)
	return t
}

// contentText is the text of a message content or completion prompt: a
// string, a list of text parts, or a list of strings.
func contentText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return clean(s)
	}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	texts := make([]string, 0, len(parts))
	for _, p := range parts {
		var part struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(p, &s) == nil {
			texts = append(texts, clean(s))
		} else if json.Unmarshal(p, &part) == nil && part.Text != "" {
			texts = append(texts, clean(part.Text))
		}
	}
	return strings.Join(texts, "\n")
}

// resultText reads the output and metrics out of a run's result JSON.
func resultText(result string) outputText {
	var r struct {
		Choices []struct {
			Index     int    `json:"index"`
			Content   string `json:"content"`
			Reasoning string `json:"reasoning"`
			ToolCalls []struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"tool_calls"`
		} `json:"choices"`
		Metrics struct {
			TTFTMs       float64 `json:"ttft_ms"`
			Tokens       int     `json:"tokens"`
			TokensPerSec float64 `json:"tokens_per_sec"`
			CostUSD      float64 `json:"cost_usd"`
		} `json:"metrics"`
	}
	if json.Unmarshal([]byte(result), &r) != nil {
		return outputText{}
	}
	o := outputText{Tokens: r.Metrics.Tokens, TTFTMs: r.Metrics.TTFTMs, TokensPerSec: r.Metrics.TokensPerSec, CostUSD: r.Metrics.CostUSD}
	first := 0
	for i, c := range r.Choices {
		if c.Index == 0 {
			first = i
			break
		}
	}
	var texts []string
	for i, c := range r.Choices {
		texts = append(texts, clean(c.Content), clean(c.Reasoning))
		for _, tc := range c.ToolCalls {
			texts = append(texts, clean(tc.Name), clean(tc.Arguments))
		}
		if i != first {
			continue
		}
		o.OutputLine = firstLine(clean(c.Content))
		if o.OutputLine == "" {
			o.OutputLine = firstLine(clean(c.Reasoning))
		}
		if o.OutputLine == "" && len(c.ToolCalls) > 0 {
			o.OutputLine = firstLine(clean(c.ToolCalls[0].Name))
		}
	}
	nonEmpty := texts[:0]
	for _, t := range texts {
		if strings.TrimSpace(t) != "" {
			nonEmpty = append(nonEmpty, t)
		}
	}
	o.Output = strings.Join(nonEmpty, "\n")
	return o
}

// firstLine is the first non-blank line of s, trimmed and capped.
func firstLine(s string) string {
	for line := range strings.Lines(s) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if utf8.RuneCountInString(line) > lineMax {
			r := []rune(line)
			line = strings.TrimSpace(string(r[:lineMax])) + "…"
		}
		return line
	}
	return ""
}

// clean drops control characters other than line breaks and tabs, so that
// the markers search puts around matches cannot appear in the text.
func clean(s string) string {
	if !strings.ContainsFunc(s, isDropped) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isDropped(r) {
			return ' '
		}
		return r
	}, s)
}

func isDropped(r rune) bool {
	return unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r'
}

// indexRun stores a run's summary columns and its search text whole.
func indexRun(ctx context.Context, tx *sql.Tx, id int64, p runText, o outputText) error {
	_, err := tx.ExecContext(ctx, `
UPDATE runs SET prompt_line = ?, output_line = ?, tokens = ?, ttft_ms = ?, tokens_per_sec = ?, cost_usd = ? WHERE id = ?`,
		p.PromptLine, o.OutputLine, o.Tokens, o.TTFTMs, o.TokensPerSec, o.CostUSD, id)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `
INSERT OR REPLACE INTO runs_fts (rowid, prompt_line, prompt, output_line, output) VALUES (`+ftsRowid+`, ?, ?, ?, ?)`,
		id, p.PromptLine, p.Prompt, o.OutputLine, o.Output)
	return err
}

// indexOutput stores the output half of a run's summary and search text.
func indexOutput(ctx context.Context, tx *sql.Tx, id int64, o outputText) error {
	_, err := tx.ExecContext(ctx, `
UPDATE runs SET output_line = ?, tokens = ?, ttft_ms = ?, tokens_per_sec = ?, cost_usd = ? WHERE id = ?`,
		o.OutputLine, o.Tokens, o.TTFTMs, o.TokensPerSec, o.CostUSD, id)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE runs_fts SET output_line = ?, output = ? WHERE rowid = `+ftsRowid, o.OutputLine, o.Output, id)
	return err
}

// summariseRuns fills the summary columns and the search index of every
// run stored before they existed. It runs once, inside the migration that
// adds them.
func summariseRuns(ctx context.Context, tx *sql.Tx) error {
	type row struct {
		id           int64
		spec, result string
	}
	var after int64
	for {
		rows, err := tx.QueryContext(ctx, `SELECT id, spec, result FROM runs WHERE id > ? ORDER BY id LIMIT 500`, after)
		if err != nil {
			return fmt.Errorf("db: unable to read runs to summarise: %w", err)
		}
		var batch []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.spec, &r.result); err != nil {
				rows.Close()
				return fmt.Errorf("db: unable to read runs to summarise: %w", err)
			}
			batch = append(batch, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("db: unable to read runs to summarise: %w", err)
		}
		if len(batch) == 0 {
			return nil
		}
		for _, r := range batch {
			if err := indexRun(ctx, tx, r.id, specText(r.spec), resultText(r.result)); err != nil {
				return fmt.Errorf("db: unable to summarise run %d: %w", r.id, err)
			}
		}
		after = batch[len(batch)-1].id
	}
}
