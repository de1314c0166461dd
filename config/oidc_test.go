package config_test

import (
	"strings"
	"testing"

	"knobs/config"
)

// ssoEnv is a complete single sign-on setup, with extra settings.
func ssoEnv(extra ...string) map[string]string {
	m := map[string]string{
		"KNOBS_OIDC_ISSUER":        "https://idp.example.com/realms/acme",
		"KNOBS_OIDC_CLIENT_ID":     "knobs",
		"KNOBS_OIDC_CLIENT_SECRET": "s3cret-value",
		"KNOBS_OIDC_REDIRECT_URL":  "https://knobs.example.com/auth/oidc/callback",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i]] = extra[i+1]
	}
	return m
}

func TestSingleSignOnSettings(t *testing.T) {
	c, err := config.Load(env(ssoEnv(
		"KNOBS_OIDC_ALLOWED_DOMAINS", " Example.com, example.org ,",
		"KNOBS_OIDC_ADMIN_GROUP", "knobs-admins",
		"KNOBS_OIDC_GROUPS_CLAIM", "roles",
		"KNOBS_OIDC_SCOPES", "openid  email groups",
		"KNOBS_OIDC_NAME", "Okta",
		"KNOBS_PASSWORD_LOGIN", "false",
	)))
	if err != nil {
		t.Fatal(err)
	}
	want := config.OIDC{
		Issuer:         "https://idp.example.com/realms/acme",
		ClientID:       "knobs",
		ClientSecret:   "s3cret-value",
		RedirectURL:    "https://knobs.example.com/auth/oidc/callback",
		AllowedDomains: "example.com,example.org",
		AdminGroup:     "knobs-admins",
		GroupsClaim:    "roles",
		Name:           "Okta",
		Scopes:         "openid email groups",
	}
	if c.OIDC != want || c.PasswordLogin || !c.OIDC.Enabled() {
		t.Errorf("loaded:\n got %+v (password login %v)\nwant %+v", c.OIDC, c.PasswordLogin, want)
	}
}

func TestSingleSignOnRefusesWrongSettings(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"password off without sso", map[string]string{"KNOBS_PASSWORD_LOGIN": "false"}, "KNOBS_PASSWORD_LOGIN=false needs single sign-on"},
		{"issuer alone", map[string]string{"KNOBS_OIDC_ISSUER": "https://idp.example.com"}, "needs KNOBS_OIDC_CLIENT_ID and KNOBS_OIDC_REDIRECT_URL"},
		{"client without issuer", map[string]string{"KNOBS_OIDC_CLIENT_ID": "knobs"}, "need KNOBS_OIDC_ISSUER"},
		{"plain http issuer", ssoEnv("KNOBS_OIDC_ISSUER", "http://idp.example.com"), "KNOBS_OIDC_ISSUER: want an https URL"},
		{"issuer not a URL", ssoEnv("KNOBS_OIDC_ISSUER", "idp.example.com"), "KNOBS_OIDC_ISSUER:"},
		{"redirect elsewhere", ssoEnv("KNOBS_OIDC_REDIRECT_URL", "https://knobs.example.com/callback"), "KNOBS_OIDC_REDIRECT_URL: want this Knobs' address followed by /auth/oidc/callback"},
		{"domain with at", ssoEnv("KNOBS_OIDC_ALLOWED_DOMAINS", "@example.com"), "KNOBS_OIDC_ALLOWED_DOMAINS:"},
		{"no openid scope", ssoEnv("KNOBS_OIDC_SCOPES", "email profile"), "KNOBS_OIDC_SCOPES: must include openid"},
		{"password login word", ssoEnv("KNOBS_PASSWORD_LOGIN", "off"), "KNOBS_PASSWORD_LOGIN:"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Load(env(tt.env))
			if err == nil {
				t.Fatalf("accepted %v", tt.env)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "s3cret-value") {
				t.Errorf("error %q shows the client secret", err)
			}
		})
	}
}

func TestSingleSignOnAllowsLoopbackHTTPIssuer(t *testing.T) {
	c, err := config.Load(env(ssoEnv("KNOBS_OIDC_ISSUER", "http://127.0.0.1:5556/dex", "KNOBS_OIDC_CLIENT_SECRET", "")))
	if err != nil {
		t.Fatal(err)
	}
	if c.OIDC.Issuer != "http://127.0.0.1:5556/dex" || c.OIDC.ClientSecret != "" {
		t.Errorf("got %+v", c.OIDC)
	}
}
