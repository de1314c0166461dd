package handlers

import "github.com/gofiber/fiber/v2"

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
