package handlers

import (
	"errors"
	"net/url"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/views"
)

// sharedRun loads the run behind a share token that the viewer may open:
// a team link needs a signed-in member. Unknown and revoked tokens are 404.
func (h *Handler) sharedRun(c *fiber.Ctx) (db.Run, db.Share, error) {
	token := c.Params("token")
	if len(token) > 64 {
		return db.Run{}, db.Share{}, fiber.NewError(fiber.StatusNotFound, "This link does not open anything: it is unknown or was revoked.")
	}
	run, share, err := h.store.SharedRun(ctx(c), token)
	if errors.Is(err, db.ErrNotFound) {
		return db.Run{}, db.Share{}, fiber.NewError(fiber.StatusNotFound, "This link does not open anything: it is unknown or was revoked.")
	}
	return run, share, err
}

// ShowSharedRun shows a shared run read-only: the prompt, the parameters,
// the output and the metrics, never a key.
func (h *Handler) ShowSharedRun(c *fiber.Ctx) error {
	run, share, err := h.sharedRun(c)
	if err != nil {
		return err
	}
	_, signedIn := CurrentUser(c)
	if share.Audience == db.ShareTeam && !signedIn {
		return c.Redirect("/login?next="+url.QueryEscape(c.OriginalURL()), fiber.StatusSeeOther)
	}
	v := h.runView(run)
	v.Page = h.page(c, "Shared run", "")
	v.Shared, v.ShareToken, v.CanOpen = true, share.Token, signedIn
	v.Note, v.Starred = "", false // the owner's own notes stay theirs
	if owner, err := h.store.User(ctx(c), share.OwnerID); err == nil {
		v.SharedBy = owner.Username
	}
	c.Set("Cache-Control", "private, no-store")
	return Render(c, fiber.StatusOK, views.RunPage(v))
}

// OpenSharedRun copies a shared run's spec into the viewer's playground.
func (h *Handler) OpenSharedRun(c *fiber.Ctx) error {
	u, ok := CurrentUser(c)
	if !ok {
		return fiber.NewError(fiber.StatusUnauthorized, "Sign in first.")
	}
	run, _, err := h.sharedRun(c)
	if err != nil {
		return err
	}
	st, err := runState(run) // the template and its values, without the owner's preset
	if err != nil {
		return err
	}
	asked, err := h.offerSetup(c, u.ID, playgroundOffer{State: st, Label: "the shared setup"})
	if err != nil {
		return err
	}
	return openedOrAsk(c, asked, "Loaded the shared setup into your playground.")
}

// sharedPreset loads the preset behind a share token the viewer may open.
func (h *Handler) sharedPreset(c *fiber.Ctx) (db.Preset, db.Share, error) {
	token := c.Params("token")
	if len(token) <= 64 {
		p, share, err := h.store.SharedPreset(ctx(c), token)
		if err == nil {
			return p, share, nil
		}
		if !errors.Is(err, db.ErrNotFound) {
			return db.Preset{}, db.Share{}, err
		}
	}
	return db.Preset{}, db.Share{}, fiber.NewError(fiber.StatusNotFound, "This link does not open anything: it is unknown or was revoked.")
}

// ShowSharedPreset shows a shared preset read-only.
func (h *Handler) ShowSharedPreset(c *fiber.Ctx) error {
	p, share, err := h.sharedPreset(c)
	if err != nil {
		return err
	}
	_, signedIn := CurrentUser(c)
	if share.Audience == db.ShareTeam && !signedIn {
		return c.Redirect("/login?next="+url.QueryEscape(c.OriginalURL()), fiber.StatusSeeOther)
	}
	v := presetView(p)
	v.Page = h.page(c, p.Name, "")
	v.Shared, v.ShareToken, v.CanCopy = true, share.Token, signedIn
	c.Set("Cache-Control", "private, no-store")
	return Render(c, fiber.StatusOK, views.PresetPage(v))
}

// CopySharedPreset gives the viewer their own private copy of a shared
// preset and opens it in their playground.
func (h *Handler) CopySharedPreset(c *fiber.Ctx) error {
	u, ok := CurrentUser(c)
	if !ok {
		return fiber.NewError(fiber.StatusUnauthorized, "Sign in first.")
	}
	p, _, err := h.sharedPreset(c)
	if err != nil {
		return err
	}
	copied, fe, err := h.createPreset(c, db.Preset{
		OwnerID: u.ID, Name: p.Name, Description: p.Description, Tags: p.Tags,
		Visibility: db.PresetPrivate, Spec: p.Spec, Variables: p.Variables,
	})
	if !fe.Empty() {
		return fiber.NewError(fiber.StatusUnprocessableEntity, "The copy was not saved: "+fe.Describe())
	}
	if err != nil {
		return err
	}
	asked, err := h.loadPreset(c, u.ID, copied)
	if err != nil {
		return err
	}
	return openedOrAsk(c, asked, "Opened your own copy of "+p.Name+".")
}
