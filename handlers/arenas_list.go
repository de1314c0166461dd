package handlers

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"knobs/views"
)

// arenasListed bounds the arenas page: the newest this many.
const arenasListed = 200

// ShowArenasPage lists the team's arenas, newest first.
func (h *Handler) ShowArenasPage(c *fiber.Ctx) error {
	as, err := h.store.Arenas(ctx(c), 0, arenasListed)
	if err != nil {
		return err
	}
	v := views.ArenasView{Page: h.page(c, "Arenas", "arenas")}
	for _, a := range as {
		v.Rows = append(v.Rows, views.ArenaListRow{ID: a.ID, Name: a.Name, Status: a.Status, Revoked: !a.RevokedAt.IsZero(), Votes: a.Votes,
			Audience: a.Audience, Mode: a.Mode, NotBlind: a.ShowStreaming, Link: "/a/" + a.Token, Created: when(a.CreatedAt), Owner: a.OwnerName})
	}
	return Render(c, fiber.StatusOK, views.ArenasPage(v))
}

// arenaPath is an arena's page.
func arenaPath(id int64) string { return "/arenas/" + strconv.FormatInt(id, 10) }
