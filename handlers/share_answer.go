package handlers

import (
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/views"
)

// sharePrefix is where each kind of share link opens.
var sharePrefix = map[string]string{db.ShareRun: "/s/", db.SharePreset: "/p/", db.ShareGroup: "/g/", db.ShareExperiment: "/e/", db.ShareArena: "/r/"}

// wantsJSON reports whether a page script made the request: its answer is
// JSON, where a plain form post gets a redirect back.
func wantsJSON(c *fiber.Ctx) bool {
	return strings.HasPrefix(c.Get(fiber.HeaderContentType), fiber.MIMEApplicationJSON) ||
		strings.HasPrefix(c.Get(fiber.HeaderAccept), fiber.MIMEApplicationJSON)
}

// shareAudience reads who a new link is for, from a form or from JSON.
func shareAudience(c *fiber.Ctx) (string, bool) {
	var in struct {
		Audience string `json:"audience" form:"audience"`
	}
	if err := c.BodyParser(&in); err != nil {
		return "", false
	}
	return in.Audience, in.Audience == db.ShareTeam || in.Audience == db.SharePublic
}

// refuseShare answers a share request without a valid audience; nothing
// is made.
func refuseShare(c *fiber.Ctx, back string) error {
	const msg = "Choose who the link is for: team members or anyone with the link."
	if wantsJSON(c) {
		return fiber.NewError(fiber.StatusUnprocessableEntity, msg)
	}
	return redirectWith(c, back, msg)
}

// answerShare tells the page about a link just made: the script puts it
// in place, a plain form post goes back to the page it came from.
func answerShare(c *fiber.Ctx, sh db.Share, back string) error {
	if !wantsJSON(c) {
		return redirectWith(c, back, "Share link made.")
	}
	row := shareRow(c, sh)
	out := fiber.Map{
		"id": sh.ID, "token": sh.Token, "url": sharePrefix[sh.Kind] + sh.Token, "link": row.URL,
		"audience": sh.Audience, "created": row.Created, "revoke": "/shares/" + strconv.FormatInt(sh.ID, 10) + "/revoke",
	}
	if sh.Kind == db.ShareGroup {
		out["replay"] = sharePrefix[sh.Kind] + sh.Token + "/replay"
	}
	return c.Status(fiber.StatusCreated).JSON(out)
}

// shareRow is how a share link is listed.
func shareRow(c *fiber.Ctx, sh db.Share) views.ShareRow {
	return views.ShareRow{ID: sh.ID, URL: c.BaseURL() + sharePrefix[sh.Kind] + sh.Token, Audience: sh.Audience, Created: day(sh.CreatedAt), Active: sh.Active()}
}

// shareOwned makes a read-only link of kind to target for the signed-in
// user when they own it (ownerID), as the share box asks (audience), and
// answers as answerShare does; refusal is the message for anyone else.
func (h *Handler) shareOwned(c *fiber.Ctx, kind string, target, ownerID int64, back, refusal string) error {
	u, _ := CurrentUser(c)
	if ownerID != u.ID {
		return fiber.NewError(fiber.StatusForbidden, refusal)
	}
	audience, ok := shareAudience(c)
	if !ok {
		return refuseShare(c, back)
	}
	sh, err := h.store.CreateShare(ctx(c), u.ID, kind, target, audience)
	if err != nil {
		return err
	}
	return answerShare(c, sh, back)
}
