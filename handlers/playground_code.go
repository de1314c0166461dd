package handlers

import (
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"

	"knobs/llm"
	"knobs/preset"
	"knobs/snippet"
)

// keyEnv names the environment variable a snippet reads p's key from. The
// simulator's snippets target Cerebras, whose wire format it speaks.
func keyEnv(p Provider) string {
	switch p.ID {
	case "cerebras", "sim":
		return "CEREBRAS_API_KEY"
	case "xai":
		return "XAI_API_KEY"
	}
	return strings.ToUpper(strings.ReplaceAll(p.ID, "-", "_")) + "_API_KEY"
}

// ShowCode answers the spec as curl, Python, JavaScript and Go code that
// sends exactly the request Knobs sends, reading the key from the
// environment.
func (h *Handler) ShowCode(c *fiber.Ctx) error {
	st, err := readSpec(c)
	if err != nil {
		return fiber.NewError(fiber.StatusBadRequest, err.Error())
	}
	// The code sends what a run would: the variables filled in.
	spec, _, err := preset.Fill(st.RunSpec, st.Variables, MaxBody)
	var tooLarge *preset.TooLargeError
	if errors.As(err, &tooLarge) {
		return fiber.NewError(fiber.StatusUnprocessableEntity, "The code cannot be shown: "+err.Error()+".")
	} else if err != nil {
		spec = st.RunSpec
	}
	p, err := h.findProvider(ctx(c), spec.Provider)
	if errors.Is(err, errNoProvider) {
		return fiber.NewError(fiber.StatusUnprocessableEntity, "There is no such provider.")
	} else if err != nil {
		return err
	}
	if !spec.Endpoint.Valid() {
		return fiber.NewError(fiber.StatusUnprocessableEntity, `The endpoint is "chat" or "completion".`)
	}
	body, err := llm.WireBody(p.Dialect, spec.Body)
	if err != nil {
		return fiber.NewError(fiber.StatusUnprocessableEntity, "The body is not a JSON object.")
	}
	base, note := p.BaseURL, ""
	if p.Dialect == llm.DialectSim {
		base = "https://api.cerebras.ai"
		note = "The simulator runs inside Knobs and has no address of its own; it speaks Cerebras' wire format, so this code targets Cerebras (set CEREBRAS_API_KEY and pick a Cerebras model)."
	}
	env := keyEnv(p)
	return c.JSON(fiber.Map{
		"snippets": snippet.Render(snippet.Request{BaseURL: base, Path: spec.Endpoint.Path(), KeyEnv: env, Body: body}),
		"note":     note,
	})
}
