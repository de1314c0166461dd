package handlers

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"knobs/field"
	"knobs/views"
)

// CreateArena makes an arena from the new arena form, through the same
// checks as POST /api/v1/arenas: nothing is stored when a field is
// wrong, and the form comes back with the message at that field.
func (h *Handler) CreateArena(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	f := arenaFormOf(c)
	if c.FormValue("action") == "add_contestant" {
		if len(f.Contestants) < arenaMaxContestants {
			f.Contestants = append(f.Contestants, views.ContestantForm{})
		}
		return h.renderNewArena(c, fiber.StatusOK, f, nil)
	}
	in, slots, fe := arenaRequest(f)
	if !fe.Empty() {
		return h.renderNewArena(c, fiber.StatusUnprocessableEntity, f, fe)
	}
	a, fe, err := h.createArena(apiContext(c, u), u, in)
	if err != nil {
		return err
	}
	if !fe.Empty() {
		return h.renderNewArena(c, fiber.StatusUnprocessableEntity, f, arenaFormErrors(fe, slots))
	}
	flash := "The arena is open for votes: send its link."
	if a.Mode == "pregenerated" {
		flash = "The arena is being prepared: its answers are made before voting starts."
	}
	return redirectWith(c, arenaPath(a.ID), flash)
}

// arenaFormOf reads the new arena form as posted.
func arenaFormOf(c *fiber.Ctx) views.ArenaForm {
	multi := func(name string) []string { return formValues(c, name) }
	f := views.ArenaForm{Name: c.FormValue("name"), Source: c.FormValue("source"), Dataset: c.FormValue("dataset"),
		DatasetVersion: c.FormValue("dataset_version"), List: c.FormValue("list"), Audience: c.FormValue("audience"),
		Mode: c.FormValue("mode"), BudgetUSD: c.FormValue("budget_usd"), BudgetCalls: c.FormValue("budget_calls"),
		MaxVotes: c.FormValue("max_votes_per_voter"), EndsOn: c.FormValue("ends_on"), MaskTerms: c.FormValue("mask_terms"),
		ShowStreaming: c.FormValue("show_streaming") != ""}
	names, presets, labels, versions := multi("c_name"), multi("c_preset"), multi("c_label"), multi("c_version")
	providers, endpoints, bodies := multi("c_provider"), multi("c_endpoint"), multi("c_body")
	at := func(xs []string, i int) string {
		if i < len(xs) {
			return xs[i]
		}
		return ""
	}
	n := min(max(len(names), len(presets), len(bodies)), arenaMaxContestants)
	for i := range n {
		f.Contestants = append(f.Contestants, views.ContestantForm{Name: at(names, i), Preset: at(presets, i), Label: at(labels, i),
			Version: at(versions, i), Provider: at(providers, i), Endpoint: at(endpoints, i), Body: at(bodies, i)})
	}
	return f
}

// arenaLines are the text's lines that hold something, trimmed.
func arenaLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// arenaRequest turns the form into the API's request, and says which
// form slot each contestant sent came from (empty slots are left out).
// Field errors are those the form alone shows: numbers that are not
// numbers, a prompt source left empty.
func arenaRequest(f views.ArenaForm) (*CreateArenaInput, []int, field.Errors) {
	in := &CreateArenaInput{}
	b := &in.Body
	fe := field.Errors{}
	b.Name, b.Audience, b.Mode, b.ShowStreaming = f.Name, f.Audience, f.Mode, f.ShowStreaming
	whole := func(key, s string) *int {
		s = strings.TrimSpace(s)
		if s == "" {
			return nil
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			fe.Add(key, "Give a whole number.")
			return nil
		}
		return &n
	}
	var slots []int
	for i, cf := range f.Contestants {
		key := fmt.Sprintf("contestants[%d].", i)
		if strings.TrimSpace(cf.Name) == "" && cf.Preset == "" && strings.TrimSpace(cf.Body) == "" {
			continue
		}
		ci := ContestantInput{Name: cf.Name}
		if cf.Preset != "" {
			ci.Ref, ci.Label = cf.Preset, strings.TrimSpace(cf.Label)
			if v := whole(key+"version", cf.Version); v != nil {
				ci.Version = *v
			}
		}
		if body := strings.TrimSpace(cf.Body); body != "" {
			ci.Provider, ci.Endpoint, ci.Body = strings.TrimSpace(cf.Provider), cf.Endpoint, json.RawMessage(body)
		}
		slots = append(slots, i)
		b.Contestants = append(b.Contestants, ci)
	}
	switch f.Source {
	case "dataset":
		id, err := strconv.ParseInt(f.Dataset, 10, 64)
		if err != nil || id <= 0 {
			fe.Add("prompts.dataset", "Choose a dataset.")
		}
		b.Prompts.Dataset = id
		if v := whole("prompts.dataset_version", f.DatasetVersion); v != nil {
			b.Prompts.DatasetVersion = *v
		}
	case "list":
		b.Prompts.List = arenaLines(f.List)
		if len(b.Prompts.List) == 0 {
			fe.Add("prompts.list", "Write at least one prompt, one a line.")
		} else if len(b.Prompts.List) > ArenaMaxPrompts {
			fe.Add("prompts.list", fmt.Sprintf("An arena takes at most %d prompts.", ArenaMaxPrompts))
		}
	case "open":
		b.Prompts.Open = true
	default:
		fe.Add("prompts", "Choose where the prompts come from.")
	}
	if s := strings.TrimSpace(f.BudgetUSD); s != "" {
		usd, err := strconv.ParseFloat(strings.TrimPrefix(s, "$"), 64)
		if err != nil || usd < 0 {
			fe.Add("budget_usd", "Give an amount in dollars, such as 2.50.")
		} else {
			b.BudgetUSD = &usd
		}
	}
	b.BudgetCalls = whole("budget_calls", f.BudgetCalls)
	if v := whole("max_votes_per_voter", f.MaxVotes); v != nil && *v < 1 {
		fe.Add("max_votes_per_voter", "Give at least 1, or leave it empty for no limit.")
	} else {
		b.MaxVotesPerVoter = v
	}
	if s := strings.TrimSpace(f.EndsOn); s != "" {
		day, err := time.Parse("2006-01-02", s)
		if err != nil {
			fe.Add("ends_at", "Give a date as 2026-12-31.")
		} else {
			// Voting ends as the day ends, in UTC.
			end := day.Add(24*time.Hour - time.Second)
			b.EndsAt = &end
		}
	}
	b.MaskTerms = arenaLines(f.MaskTerms)
	if len(b.MaskTerms) > 200 {
		fe.Add("mask_terms", "Give at most 200 terms.")
	}
	return in, slots, fe
}

// arenaFieldIndex finds the index in an API field name: contestants[k]
// names the k-th contestant sent; a prompt's or a term's index names a
// line of one text box.
var arenaFieldIndex = regexp.MustCompile(`^(contestants|prompts\.list|mask_terms)\[(\d+)\]`)

// arenaFormErrors puts the API's field errors at the form's fields:
// a contestant's under its slot, a prompt's or a term's at its box with
// its number.
func arenaFormErrors(fe field.Errors, slots []int) field.Errors {
	out := field.Errors{}
	for k, msg := range fe {
		if m := arenaFieldIndex.FindStringSubmatch(k); m != nil {
			n, _ := strconv.Atoi(m[2])
			switch {
			case m[1] == "contestants" && n < len(slots):
				k = fmt.Sprintf("contestants[%d]%s", slots[n], k[len(m[0]):])
			case m[1] == "prompts.list":
				k, msg = m[1], fmt.Sprintf("Prompt %d: %s", n+1, msg)
			case m[1] == "mask_terms":
				k, msg = m[1], fmt.Sprintf("Term %d: %s", n+1, msg)
			}
		}
		out.Add(k, msg)
	}
	return out
}
