package handlers

import (
	"errors"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"knobs/config"
	"knobs/db"
	"knobs/field"
	"knobs/llm"
	"knobs/vault"
)

// reservedProviderIDs are taken by the built-in providers.
var reservedProviderIDs = map[string]bool{"cerebras": true, "xai": true, "sim": true}

// CreateProvider adds a custom OpenAI-compatible provider.
func (h *Handler) CreateProvider(c *fiber.Ctx) error {
	name := strings.TrimSpace(c.FormValue("name"))
	key := strings.TrimSpace(c.FormValue("key"))
	errs := field.Errors{}
	id := providerSlug(name)
	switch {
	case name == "":
		errs["name"] = "Give the provider a name."
	case len(name) > 40:
		errs["name"] = "A provider name has at most 40 characters."
	case id == "":
		errs["name"] = "The name needs at least one letter or digit."
	case reservedProviderIDs[id]:
		errs["name"] = "That name belongs to a built-in provider."
	}
	baseURL, err := config.BaseURL(c.FormValue("base_url"))
	if err != nil || len(baseURL) > 300 {
		errs["base_url"] = "Give an http or https URL, such as https://api.groq.com/openai."
	} else if msg := h.checkUpstream(c, baseURL); msg != "" {
		errs["base_url"] = msg
	}
	if key != "" {
		if msg := checkKey(key); msg != "" {
			errs["key"] = msg
		}
	}
	if len(errs) > 0 {
		return h.renderSettings(c, fiber.StatusUnprocessableEntity, errs, "")
	}
	var sealed []byte
	if key != "" {
		sealed = h.box.Seal(key, keyAssociation(db.Team, id))
	}
	err = h.store.CreateCustomProvider(ctx(c), db.CustomProvider{ID: id, Name: name, BaseURL: baseURL}, sealed, vault.Last4(key))
	if errors.Is(err, db.ErrProviderTaken) {
		return h.renderSettings(c, fiber.StatusConflict, field.Errors{"name": "A provider with that name exists."}, "")
	}
	if err != nil {
		return err
	}
	return redirectWith(c, "/settings", "Added the provider "+name+".")
}

// checkUpstream says why Knobs refuses to send requests to baseURL's
// host, or returns "". The same rule holds again at every connection
// (llm/egress.go); here the admin hears of it while the form is open.
func (h *Handler) checkUpstream(c *fiber.Ctx, baseURL string) string {
	if h.cfg.AllowLinkLocalUpstreams {
		return ""
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		return ""
	}
	var refused *llm.UpstreamAddressError
	if !errors.As(llm.CheckUpstream(ctx(c), u.Hostname()), &refused) {
		return ""
	}
	return "That address is link-local or a cloud metadata service (" + refused.Host + "): Knobs sends no requests or keys there. " +
		"If a model server really lives there, set " + llm.AllowLinkLocalVariable + "=true on the server."
}
