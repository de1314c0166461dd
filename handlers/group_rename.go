package handlers

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
)

// RenameGroup sets the title of one of the user's saved comparisons, so
// that a title edited in presenter mode is the one the comparison keeps
// (in history and on its share links). It takes JSON {"title"} and
// answers {"title"}; an empty title is allowed (the page says "Untitled").
func (h *Handler) RenameGroup(c *fiber.Ctx) error {
	g, err := h.ownGroup(c)
	if err != nil {
		return err
	}
	var in struct {
		Title *string `json:"title"`
	}
	if err := c.BodyParser(&in); err != nil || in.Title == nil {
		return fiber.NewError(fiber.StatusBadRequest, `Send the new title: {"title": "..."}.`)
	}
	title := strings.TrimSpace(*in.Title)
	if utf8.RuneCountInString(title) > maxGroupTitle {
		return fiber.NewError(fiber.StatusUnprocessableEntity, "The title is longer than "+strconv.Itoa(maxGroupTitle)+" characters.")
	}
	if err := h.store.RenameGroup(ctx(c), g.OwnerID, g.ID, title); errors.Is(err, db.ErrNotFound) {
		return fiber.NewError(fiber.StatusNotFound, "There is no such comparison.")
	} else if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"title": title})
}
