package handlers

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
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

// sharedGroup loads the comparison behind a share token that the viewer
// may open; unknown and revoked tokens are 404. ok is false when the
// link is for the team and nobody is signed in.
func (h *Handler) sharedGroup(c *fiber.Ctx) (g db.Group, runs []db.Run, share db.Share, ok bool, err error) {
	notFound := fiber.NewError(fiber.StatusNotFound, "This link does not open anything: it is unknown or was revoked.")
	token := c.Params("token")
	if len(token) > 64 {
		return db.Group{}, nil, db.Share{}, false, notFound
	}
	g, runs, share, err = h.store.SharedGroup(ctx(c), token)
	if errors.Is(err, db.ErrNotFound) {
		return db.Group{}, nil, db.Share{}, false, notFound
	}
	if err != nil {
		return db.Group{}, nil, db.Share{}, false, err
	}
	_, signedIn := CurrentUser(c)
	return g, runs, share, share.Audience == db.SharePublic || signedIn, nil
}
