package handlers

import (
	"fmt"

	"github.com/gofiber/fiber/v2"
)

// OpenRunInPlayground loads a run's exact spec into the playground.
func (h *Handler) OpenRunInPlayground(c *fiber.Ctx) error {
	run, err := h.ownRun(c)
	if err != nil {
		return err
	}
	st, err := runState(run)
	if err != nil {
		return err
	}
	// The run's answer comes with it: the output shows what this setup gave.
	asked, err := h.offerSetup(c, run.UserID, playgroundOffer{State: st, Label: fmt.Sprintf("run %d", run.ID), LastRun: run.ID})
	if err != nil {
		return err
	}
	return openedOrAsk(c, asked, fmt.Sprintf("Loaded the setup of run %d.", run.ID))
}
