package handlers

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"knobs/config"
	"knobs/db"
	"knobs/field"
	"knobs/llm"
	"knobs/vault"
	"knobs/web/session"
)

// reservedProviderIDs are taken by the built-in providers.
var reservedProviderIDs = map[string]bool{"cerebras": true, "xai": true, "sim": true}

// providerSlug makes a provider's id from its name: "Groq Cloud" -> "groq-cloud".
func providerSlug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimRight(b.String(), "-")
}

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

// RemoveProvider deletes a custom provider and its keys.
func (h *Handler) RemoveProvider(c *fiber.Ctx) error {
	err := h.store.RemoveCustomProvider(ctx(c), c.Params("id"))
	if errors.Is(err, db.ErrNotFound) {
		return fiber.NewError(fiber.StatusNotFound, "There is no such provider.")
	}
	if err != nil {
		return err
	}
	return redirectWith(c, "/settings", "Removed the provider.")
}

// CreateInvite makes a single-use invite link and shows it once.
func (h *Handler) CreateInvite(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	days, err := strconv.Atoi(c.FormValue("days"))
	if err != nil || days < 1 || days > 30 {
		return h.renderSettings(c, fiber.StatusUnprocessableEntity, field.Errors{"days": "Choose 1 to 30 days."}, "")
	}
	token, err := h.store.CreateInvite(ctx(c), u.ID, time.Duration(days)*24*time.Hour)
	if err != nil {
		return err
	}
	return h.renderSettings(c, fiber.StatusOK, nil, c.BaseURL()+"/signup?invite="+token)
}

// RevokeInvite deletes an unused invite.
func (h *Handler) RevokeInvite(c *fiber.Ctx) error {
	id, err := pathID(c, "invite")
	if err != nil {
		return err
	}
	if err := h.store.RevokeInvite(ctx(c), id); errors.Is(err, db.ErrNotFound) {
		return fiber.NewError(fiber.StatusNotFound, "There is no open invite with that id.")
	} else if err != nil {
		return err
	}
	return redirectWith(c, "/settings", "Revoked the invite.")
}

// SetSignUpMode switches sign-up between invite-only and open.
func (h *Handler) SetSignUpMode(c *fiber.Ctx) error {
	mode := c.FormValue("mode")
	if mode != "open" && mode != "invite" {
		return h.renderSettings(c, fiber.StatusUnprocessableEntity, field.Errors{"mode": "Choose invite-only or open."}, "")
	}
	if err := h.store.SetSetting(ctx(c), db.SettingSignUpMode, mode); err != nil {
		return err
	}
	if mode == "open" {
		return redirectWith(c, "/settings", "Anyone who can reach this server can now sign up.")
	}
	return redirectWith(c, "/settings", "Sign-up now needs an invite link.")
}

// SetMemberRole makes a member an admin or back.
func (h *Handler) SetMemberRole(c *fiber.Ctx) error {
	id, err := pathID(c, "member")
	if err != nil {
		return err
	}
	role := c.FormValue("role")
	if role != db.RoleAdmin && role != db.RoleMember {
		return h.renderSettings(c, fiber.StatusUnprocessableEntity, field.Errors{"role": "Choose member or admin."}, "")
	}
	switch err := h.store.SetUserRole(ctx(c), id, role, session.From(c).Token); {
	case errors.Is(err, db.ErrNotFound):
		return fiber.NewError(fiber.StatusNotFound, "There is no such member.")
	case errors.Is(err, db.ErrLastAdmin):
		return redirectWith(c, "/settings", "The team needs at least one admin: make someone else admin first.")
	case err != nil:
		return err
	}
	return redirectWith(c, "/settings", "Changed the role.")
}

// RemoveMember deletes another account and everything it owns.
func (h *Handler) RemoveMember(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "member")
	if err != nil {
		return err
	}
	if id == u.ID {
		return redirectWith(c, "/settings", "You cannot remove your own account here.")
	}
	switch err := h.store.RemoveUser(ctx(c), id); {
	case errors.Is(err, db.ErrNotFound):
		return fiber.NewError(fiber.StatusNotFound, "There is no such member.")
	case errors.Is(err, db.ErrLastAdmin):
		return redirectWith(c, "/settings", "The team needs at least one admin.")
	case err != nil:
		return err
	}
	// Their live runs stop: no one may read them, and their rows are gone.
	if n := h.runner.CancelUser(id); n > 0 {
		h.log.Info("stopped the runs of a removed member", "user", id, "runs", n)
	}
	return redirectWith(c, "/settings", "Removed the member.")
}
