package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// With password sign-in off and no single sign-on policy, a Knobs with
// no account yet could never get one (invites need an admin): it refuses
// to start and says which setting makes the first account possible.
func TestNoWayToAFirstAccountRefusesToStart(t *testing.T) {
	env := map[string]string{"KNOBS_ADDR": "127.0.0.1:0", "KNOBS_DB": filepath.Join(t.TempDir(), "knobs.db"),
		"KNOBS_PASSWORD_LOGIN": "false", "KNOBS_OIDC_ISSUER": "http://127.0.0.1:1/issuer", "KNOBS_OIDC_CLIENT_ID": "knobs",
		"KNOBS_OIDC_REDIRECT_URL": "http://127.0.0.1:8080/auth/oidc/callback"}
	var out bytes.Buffer
	err := run(t.Context(), nil, envFrom(env), &out)
	if err == nil || !strings.Contains(err.Error(), "KNOBS_OIDC_ALLOWED_DOMAINS or KNOBS_OIDC_ADMIN_GROUP") {
		t.Fatalf("start with no way to a first account: %v, want a refusal naming the settings", err)
	}
	// With a domain allowed, the same Knobs starts.
	env["KNOBS_OIDC_ALLOWED_DOMAINS"] = "example.com"
	base, stop := start(t, env)
	if base == "" {
		t.Fatal("Knobs did not start with an allowed domain")
	}
	if _, err := stop(); err != nil {
		t.Fatal(err)
	}
}
