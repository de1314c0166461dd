package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/llm"
	"knobs/ordered"
	"knobs/views"
)

// compareStart is what the compare page script fills the page from.
type compareStart struct {
	Title  string            `json:"title"`
	Panes  []json.RawMessage `json:"panes"`
	Notice string            `json:"notice,omitempty"`
}

// ShowComparePage renders a new comparison: two panes with the setup the
// user left in the playground, or, with ?run=ID, with that run's setup.
func (h *Handler) ShowComparePage(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	start := compareStart{}
	if q := c.Query("run"); q != "" {
		id, err := strconv.ParseInt(q, 10, 64)
		if err != nil || id <= 0 {
			return fiber.NewError(fiber.StatusNotFound, "There is no such run.")
		}
		run, err := h.store.Run(ctx(c), u.ID, id)
		if errors.Is(err, db.ErrNotFound) {
			return fiber.NewError(fiber.StatusNotFound, "There is no such run.")
		} else if err != nil {
			return err
		}
		st, err := runState(run)
		if err != nil {
			return err
		}
		b, err := json.Marshal(st)
		if err != nil {
			return err
		}
		start.Panes = []json.RawMessage{b, b}
		start.Notice = "Loaded the setup of run " + q + " into the panes."
	} else {
		st, err := h.currentSetup(ctx(c), u.ID)
		if err != nil {
			return err
		}
		b, err := json.Marshal(st)
		if err != nil {
			return err
		}
		// Two panes of one model compare little: the second starts on
		// another model when there is one.
		other, err := h.withOtherModel(ctx(c), u.ID, st)
		if err != nil {
			return err
		}
		b2, err := json.Marshal(other)
		if err != nil {
			return err
		}
		start.Panes = []json.RawMessage{b, b2}
	}
	v, err := h.compareView(c, "Compare", views.CompareEdit, start)
	if err != nil {
		return err
	}
	return Render(c, fiber.StatusOK, views.ComparePage(v))
}

// withOtherModel returns st on another model: the provider's next known
// model, else a known model of another provider the user can run; st as
// it is when there is none (a custom provider, no key anywhere else).
func (h *Handler) withOtherModel(ctx context.Context, user int64, st playgroundState) (playgroundState, error) {
	body := ordered.NewObject()
	if json.Unmarshal(st.Body, body) != nil {
		return st, nil
	}
	current, _ := body.Get("model")
	providers, err := h.providerList(ctx)
	if err != nil {
		return st, err
	}
	// The pane's own provider first, then the others in the picker's order.
	order := []Provider{}
	if p, ok := providerByID(providers, st.Provider); ok {
		order = append(order, p)
	}
	for _, p := range providers {
		if p.ID != st.Provider {
			order = append(order, p)
		}
	}
	for _, p := range order {
		models := llm.KnownModels(p.Dialect)
		if len(models) == 0 {
			continue
		}
		if p.ID != st.Provider {
			if _, err := h.resolveKey(ctx, user, p); err != nil {
				continue // no key (or an unreadable one): the pane could not run
			}
		}
		for _, m := range models {
			if m.ID == current {
				continue
			}
			body.Set("model", m.ID)
			b, err := json.Marshal(body)
			if err != nil {
				return st, err
			}
			out := st
			out.Provider, out.Body = p.ID, b
			return out, nil
		}
	}
	return st, nil
}

// ShowGroupPage renders one of the user's saved comparisons with its
// pane setups; the page loads the recorded outputs from the group's
// stream and can replay them, run them again or share them.
func (h *Handler) ShowGroupPage(c *fiber.Ctx) error {
	g, err := h.ownGroup(c)
	if err != nil {
		return err
	}
	var panes []json.RawMessage
	if json.Unmarshal([]byte(g.Panes), &panes) != nil {
		panes = nil // a broken record shows empty panes
	}
	title := g.Title
	if title == "" {
		title = "Comparison " + strconv.FormatInt(g.ID, 10)
	}
	v, err := h.compareView(c, title, views.CompareSaved, compareStart{Title: g.Title, Panes: panes})
	if err != nil {
		return err
	}
	v.Group, v.Title = g.ID, g.Title
	v.Events, v.Replay = groupPath(g.ID)+"/events", groupPath(g.ID)+"/replay"
	shares, err := h.store.Shares(ctx(c), g.OwnerID, db.ShareGroup, g.ID)
	if err != nil {
		return err
	}
	for _, s := range shares {
		v.Shares = append(v.Shares, shareRow(c, s))
	}
	return Render(c, fiber.StatusOK, views.ComparePage(v))
}

// compareView builds the compare page's view model for the signed-in user.
func (h *Handler) compareView(c *fiber.Ctx, title, mode string, start compareStart) (views.CompareView, error) {
	u, _ := CurrentUser(c)
	providers, err := h.providerList(ctx(c))
	if err != nil {
		return views.CompareView{}, err
	}
	// Names only: a preset's setup is fetched when it is loaded.
	presets, err := h.store.PresetNames(ctx(c), u.ID)
	if err != nil {
		return views.CompareView{}, err
	}
	startJSON, err := json.Marshal(start)
	if err != nil {
		return views.CompareView{}, err
	}
	v := views.CompareView{Page: h.page(c, title, "compare"), Mode: mode, Start: string(startJSON), Title: start.Title}
	if v.Budget, err = h.budgetNotice(ctx(c), u.ID); err != nil {
		return views.CompareView{}, err
	}
	for _, p := range providers {
		v.Providers = append(v.Providers, views.ProviderOption{ID: p.ID, Name: p.Name})
	}
	for _, p := range presets {
		v.Presets = append(v.Presets, views.PresetOption{ID: p.ID, Name: p.Name})
	}
	return v, nil
}

// wantsHTML says whether the request asks for a page rather than JSON.
func wantsHTML(c *fiber.Ctx) bool {
	return strings.Contains(c.Get(fiber.HeaderAccept), fiber.MIMETextHTML)
}

// showSharedGroupPage renders a shared comparison read-only: each pane's
// setup as it was sent (never a key) and a Replay of the recorded
// outputs, which needs no account for a public link.
func (h *Handler) showSharedGroupPage(c *fiber.Ctx, g db.Group, runs []db.Run) error {
	start := compareStart{Title: g.Title}
	for _, r := range runs {
		spec := json.RawMessage(r.Spec)
		if !json.Valid(spec) {
			spec = json.RawMessage(`{}`)
		}
		start.Panes = append(start.Panes, spec)
	}
	startJSON, err := json.Marshal(start)
	if err != nil {
		return err
	}
	title := g.Title
	if title == "" {
		title = "Shared comparison"
	}
	v := views.CompareView{Page: h.page(c, title, ""), Mode: views.CompareShared, Start: string(startJSON), Title: title,
		Replay: "/g/" + c.Params("token") + "/replay"}
	c.Set("Cache-Control", "private, no-store")
	return Render(c, fiber.StatusOK, views.ComparePage(v))
}
