package vault_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"knobs/vault"
)

const secret = "vault-test-secret-0123456789abcdef"

func newBox(t *testing.T, secret string) *vault.Box {
	t.Helper()
	b, err := vault.New(secret)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSealOpen(t *testing.T) {
	box := newBox(t, secret)
	for _, plain := range []string{"csk-0123456789abcdefghij", "", "ключ-🔑", strings.Repeat("k", 512)} {
		sealed := box.Seal(plain, "7/cerebras")
		if plain != "" && bytes.Contains(sealed, []byte(plain)) {
			t.Errorf("the sealed value contains the key")
		}
		got, err := box.Open(sealed, "7/cerebras")
		if err != nil || got != plain {
			t.Errorf("Open(Seal(%q)) = %q, %v", plain, got, err)
		}
	}
	a, b := box.Seal("same", "x"), box.Seal("same", "x")
	if bytes.Equal(a, b) {
		t.Errorf("sealing twice gave the same bytes: the nonce is not fresh")
	}
}

func TestOpenFails(t *testing.T) {
	box := newBox(t, secret)
	sealed := box.Seal("csk-0123456789abcdefghij", "7/cerebras")
	tampered := bytes.Clone(sealed)
	tampered[len(tampered)-1] ^= 1

	for _, tt := range []struct {
		name       string
		box        *vault.Box
		sealed     []byte
		associated string
	}{
		{"other row's owner", box, sealed, "8/cerebras"},
		{"other provider", box, sealed, "7/xai"},
		{"different secret", newBox(t, secret+"-changed"), sealed, "7/cerebras"},
		{"tampered", box, tampered, "7/cerebras"},
		{"truncated", box, sealed[:5], "7/cerebras"},
		{"empty", box, nil, "7/cerebras"},
	} {
		got, err := tt.box.Open(tt.sealed, tt.associated)
		if !errors.Is(err, vault.ErrOpen) || got != "" {
			t.Errorf("%s: Open = %q, %v; want ErrOpen", tt.name, got, err)
		}
	}
}

func TestLast4(t *testing.T) {
	for _, tt := range []struct{ key, want string }{
		{"", ""},
		{"abcd", ""},
		{"short-k3y9", ""},
		{"elevenchars", ""},
		{"twelve-chars", "hars"},
		{"csk-0123456789abcdefwxyz", "wxyz"},
	} {
		if got := vault.Last4(tt.key); got != tt.want {
			t.Errorf("Last4(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
}

func TestDerive(t *testing.T) {
	a, b := vault.Derive(secret, "session-hash", 32), vault.Derive(secret, "session-block", 32)
	if bytes.Equal(a, b) {
		t.Errorf("two purposes gave the same key")
	}
	if !bytes.Equal(a, vault.Derive(secret, "session-hash", 32)) {
		t.Errorf("Derive is not deterministic")
	}
	if bytes.Equal(a, vault.Derive(secret+"x", "session-hash", 32)) {
		t.Errorf("two secrets gave the same key")
	}
	if len(vault.Derive(secret, "x", 64)) != 64 {
		t.Errorf("wrong length")
	}
}
