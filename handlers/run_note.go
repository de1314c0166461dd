package handlers

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
)

// maxNote bounds a run's note, in characters.
const maxNote = 2000

// SaveRunNote keeps a free-text note on a run.
func (h *Handler) SaveRunNote(c *fiber.Ctx) error {
	run, err := h.ownRun(c)
	if err != nil {
		return err
	}
	note := strings.TrimSpace(c.FormValue("note"))
	if utf8.RuneCountInString(note) > maxNote {
		return redirectWith(c, runPath(run.ID), fmt.Sprintf("The note was not saved: it has more than %d characters.", maxNote))
	}
	if err := h.store.SetRunNote(ctx(c), run.UserID, run.ID, note); err != nil {
		return err
	}
	return redirectWith(c, runPath(run.ID), "Note saved.")
}
