package handlers

import (
	"errors"
	"net/url"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/views"
)

// ShowVotePage is an arena's voting page: its name, and a page script
// that asks for pairs and sends votes through the voting calls. The page
// itself says nothing of the contestants; a team link signed out goes to
// the sign-in page and comes back.
func (h *Handler) ShowVotePage(c *fiber.Ctx) error {
	a, err := h.arenaOf(c)
	var p *Problem
	if errors.As(err, &p) {
		heading := "Not found"
		if p.Status == fiber.StatusGone {
			heading = "Voting has ended"
		}
		return h.ErrorPage(c, p.Status, heading, p.Message)
	} else if err != nil {
		return err
	}
	u, signedIn := CurrentUser(c)
	if a.Audience == db.ShareTeam && !signedIn {
		return c.Redirect("/login?next="+url.QueryEscape(c.OriginalURL()), fiber.StatusSeeOther)
	}
	v := views.ArenaVoteView{
		Page:        h.page(c, a.Name, ""),
		Name:        a.Name,
		Base:        "/a/" + a.Token,
		OpenPrompts: a.PromptsKind == "open",
		AskName:     a.Audience != db.ShareTeam,
		Streaming:   a.ShowStreaming && a.Mode == "live",
	}
	if signedIn {
		v.VoterName = u.Username
	}
	c.Set(fiber.HeaderCacheControl, "private, no-store")
	return Render(c, fiber.StatusOK, views.ArenaVotePage(v))
}
