package handlers

import (
	"cmp"
	"time"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/field"
	"knobs/retention"
	"knobs/views"
)

// keyedProviders lists the providers a key can be set for: every one but
// the simulator.
func (h *Handler) keyedProviders(c *fiber.Ctx) ([]Provider, error) {
	all, err := h.providerList(ctx(c))
	if err != nil {
		return nil, err
	}
	keyed := all[:0:0]
	for _, p := range all {
		if !p.keyless {
			keyed = append(keyed, p)
		}
	}
	return keyed, nil
}

// ssoName is the identity provider's name as pages say it ("Sign in
// with <name>"), for accounts single sign-on made.
func (h *Handler) ssoName() string {
	return cmp.Or(h.cfg.OIDC.Name, "single sign-on")
}

// settingsTokensMax bounds the API tokens Settings lists (the API pages
// through all of them).
const settingsTokensMax = 200

// ShowSettingsPage renders the settings page.
func (h *Handler) ShowSettingsPage(c *fiber.Ctx) error {
	return h.renderSettings(c, fiber.StatusOK, nil, "")
}

func (h *Handler) renderSettings(c *fiber.Ctx, status int, errs field.Errors, inviteURL string) error {
	return h.renderSettingsView(c, status, views.SettingsView{Errors: errs, InviteURL: inviteURL})
}

// renderSettingsView renders the settings page around what v already
// holds (field errors, a link just made).
func (h *Handler) renderSettingsView(c *fiber.Ctx, status int, v views.SettingsView) error {
	u, _ := CurrentUser(c)
	refs, err := h.keyedProviders(c)
	if err != nil {
		return err
	}
	mine, err := h.store.ProviderKeys(ctx(c), u.ID)
	if err != nil {
		return err
	}
	team, err := h.store.ProviderKeys(ctx(c), db.Team)
	if err != nil {
		return err
	}
	byProvider := func(keys []db.ProviderKey) map[string]db.ProviderKey {
		m := map[string]db.ProviderKey{}
		for _, k := range keys {
			m[k.Provider] = k
		}
		return m
	}
	mineBy, teamBy := byProvider(mine), byProvider(team)
	using := func(p Provider) string {
		switch {
		case mineBy[p.ID].Sealed != nil:
			return "your key"
		case teamBy[p.ID].Sealed != nil:
			return "the team key"
		case p.envKey != "":
			return "the server's environment"
		}
		return "no key: runs will fail until one is set"
	}
	v.Page = h.page(c, "Settings", "settings")
	if u.PasswordHash == "" {
		v.SignInWith = h.ssoName()
	}
	if v.Sessions, err = h.store.CountUserSessions(ctx(c), u.ID); err != nil {
		return err
	}
	tokens, err := h.store.Tokens(ctx(c), u.ID, 0, settingsTokensMax)
	if err != nil {
		return err
	}
	now := h.now()
	for _, t := range tokens {
		row := views.TokenRow{ID: t.ID, Name: t.Name, Scope: t.Scope, Prefix: t.Prefix, Created: day(t.CreatedAt), LastUsed: "never", Expires: "never"}
		if !t.LastUsed.IsZero() {
			row.LastUsed = day(t.LastUsed)
		}
		switch {
		case t.ExpiresAt.IsZero():
		case !t.Live(now):
			row.Expires, row.Expired = "expired on "+day(t.ExpiresAt), true
		default:
			row.Expires = day(t.ExpiresAt)
		}
		v.Tokens = append(v.Tokens, row)
	}
	for _, p := range refs {
		k := mineBy[p.ID]
		v.Keys = append(v.Keys, views.KeyRow{Provider: p.ID, Name: p.Name, Last4: k.Last4, Stored: k.Sealed != nil, Using: using(p)})
	}
	if u.IsAdmin() {
		a, err := h.adminView(c, refs, teamBy, using, v.BudgetForm)
		if err != nil {
			return err
		}
		v.Admin = a
	}
	return Render(c, status, views.SettingsPage(v))
}

func (h *Handler) adminView(c *fiber.Ctx, refs []Provider, teamBy map[string]db.ProviderKey, using func(Provider) string, budgetForm map[string]string) (*views.AdminView, error) {
	u, _ := CurrentUser(c)
	a := &views.AdminView{PasswordResets: h.cfg.PasswordLogin}
	for _, p := range refs {
		k := teamBy[p.ID]
		a.TeamKeys = append(a.TeamKeys, views.KeyRow{Provider: p.ID, Name: p.Name, Last4: k.Last4, Stored: k.Sealed != nil, Using: teamUsing(k, p)})
	}
	custom, err := h.store.CustomProviders(ctx(c))
	if err != nil {
		return nil, err
	}
	for _, p := range custom {
		k := teamBy[p.ID]
		a.Providers = append(a.Providers, views.ProviderRow{ID: p.ID, Name: p.Name, BaseURL: p.BaseURL, KeyLast4: k.Last4, HasKey: k.Sealed != nil})
	}
	invites, err := h.store.Invites(ctx(c))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	for _, in := range invites {
		row := views.InviteRow{ID: in.ID, CreatedBy: in.CreatedBy, Created: day(in.CreatedAt), Expires: day(in.ExpiresAt)}
		switch {
		case !in.UsedAt.IsZero():
			row.Status = "used by " + orUnknown(in.UsedBy)
		case now.After(in.ExpiresAt):
			row.Status = "expired"
		default:
			row.Status, row.Open = "open", true
		}
		a.Invites = append(a.Invites, row)
	}
	if a.SignUpMode, err = h.store.Setting(ctx(c), db.SettingSignUpMode); err != nil {
		return nil, err
	}
	kept, err := h.store.Setting(ctx(c), db.SettingRetentionDays)
	if err != nil {
		return nil, err
	}
	days, _ := retention.ParseDays(kept) // a broken value deletes nothing: forever
	for _, d := range retention.Choices {
		a.Retention = append(a.Retention, views.RetentionOption{Days: d, Selected: d == days})
	}
	users, err := h.store.Users(ctx(c))
	if err != nil {
		return nil, err
	}
	for _, m := range users {
		a.Members = append(a.Members, views.MemberRow{ID: m.ID, Name: m.Username, Role: m.Role, Created: day(m.CreatedAt), IsSelf: m.ID == u.ID})
	}
	if a.Budgets, err = h.budgetsView(ctx(c), users, budgetForm); err != nil {
		return nil, err
	}
	return a, nil
}

func teamUsing(k db.ProviderKey, p Provider) string {
	switch {
	case k.Sealed != nil:
		return "the team key, unless a member set their own"
	case p.envKey != "":
		return "the server's environment"
	}
	return "members' own keys only"
}

func day(t time.Time) string { return t.Format("2 Jan 2006 15:04") }

func orUnknown(s string) string {
	if s == "" {
		return "a removed account"
	}
	return s
}
