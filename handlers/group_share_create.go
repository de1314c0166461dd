package handlers

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
)

// CreateGroupShare makes a read-only link to one of the signed-in user's
// comparisons, as CreateRunShare does for a run; its JSON answer also
// names the replay ("replay"). POST /shares/:id/revoke stops it.
func (h *Handler) CreateGroupShare(c *fiber.Ctx) error {
	g, err := h.ownGroup(c)
	if err != nil {
		return err
	}
	back := "/groups/" + strconv.FormatInt(g.ID, 10)
	audience, ok := shareAudience(c)
	if !ok {
		return refuseShare(c, back)
	}
	sh, err := h.store.CreateShare(ctx(c), g.OwnerID, db.ShareGroup, g.ID, audience)
	if err != nil {
		return err
	}
	return answerShare(c, sh, back)
}
