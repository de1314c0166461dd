package handlers

import (
	"context"
	"encoding/json"

	"github.com/gofiber/fiber/v2"
)

// savedPlayground reads what is stored for the user's playground; ok is
// false when nothing (readable) is.
func (h *Handler) savedPlayground(ctx context.Context, user int64) (s playgroundSaved, ok bool, err error) {
	raw, err := h.store.PlaygroundState(ctx, user)
	if err != nil || raw == "" {
		return s, false, err
	}
	if json.Unmarshal([]byte(raw), &s) != nil || !s.Endpoint.Valid() {
		return playgroundSaved{}, false, nil
	}
	return s, true, nil
}

func (h *Handler) storePlayground(ctx context.Context, user int64, s playgroundSaved) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return h.store.SetPlaygroundState(ctx, user, string(b))
}

// offerSetup opens offer in the user's playground. When the editor there
// has unsaved changes the offer waits instead, and the playground asks
// the user (asked is true): their work is replaced only if they say so.
func (h *Handler) offerSetup(c *fiber.Ctx, user int64, offer playgroundOffer) (asked bool, err error) {
	cur, ok, err := h.savedPlayground(ctx(c), user)
	if err != nil {
		return false, err
	}
	if ok && cur.Unsaved {
		cur.Pending = &offer
		return true, h.storePlayground(ctx(c), user, cur)
	}
	return false, h.storePlayground(ctx(c), user, playgroundSaved{playgroundState: offer.State, LastRun: offer.LastRun})
}

// openedOrAsk redirects to the playground after offerSetup: with done as
// the flash when the setup was opened, and none when the playground is
// to ask first.
func openedOrAsk(c *fiber.Ctx, asked bool, done string) error {
	if asked {
		return redirectWith(c, "/", "")
	}
	return redirectWith(c, "/", done)
}

// ResolvePendingSetup answers the playground's question about a setup
// opened over unsaved changes: "replace" opens it, "keep" drops it and
// leaves the editor as it was.
func (h *Handler) ResolvePendingSetup(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	cur, ok, err := h.savedPlayground(ctx(c), u.ID)
	if err != nil {
		return err
	}
	if !ok || cur.Pending == nil {
		return redirectWith(c, "/", "There was nothing waiting to be opened.")
	}
	offer := *cur.Pending
	switch c.FormValue("choice") {
	case "replace":
		if err := h.storePlayground(ctx(c), u.ID, playgroundSaved{playgroundState: offer.State, LastRun: offer.LastRun}); err != nil {
			return err
		}
		return redirectWith(c, "/", "Opened "+offer.Label+".")
	case "keep":
		cur.Pending = nil
		if err := h.storePlayground(ctx(c), u.ID, cur); err != nil {
			return err
		}
		return redirectWith(c, "/", "Kept your playground as it was; "+offer.Label+" was not opened.")
	}
	return fiber.NewError(fiber.StatusBadRequest, `Choose "replace" or "keep".`)
}
