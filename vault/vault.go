// Package vault keeps provider keys sealed at rest and derives every key
// Knobs needs from its one secret.
package vault

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"

	"golang.org/x/crypto/hkdf"
)

// Derive returns n bytes bound to purpose, from secret. Separate purposes
// give unrelated keys, so the cookie keys never equal the sealing key.
func Derive(secret, purpose string, n int) []byte {
	out := make([]byte, n)
	r := hkdf.New(sha256.New, []byte(secret), []byte("knobs"), []byte(purpose))
	if _, err := io.ReadFull(r, out); err != nil {
		// HKDF-SHA256 yields up to 8 KiB; asking for more is a programming error.
		panic(fmt.Sprintf("vault: derive %d bytes: %v", n, err))
	}
	return out
}

// Box seals and opens small secrets with AES-256-GCM.
type Box struct {
	aead cipher.AEAD
}

// New returns a Box whose key is derived from secret.
func New(secret string) (*Box, error) {
	block, err := aes.NewCipher(Derive(secret, "provider-keys", 32))
	if err != nil {
		return nil, fmt.Errorf("vault: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("vault: %w", err)
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plain; the associated data binds the result to where it is
// stored (owner and provider), so a sealed key moved to another row fails
// to open.
func (b *Box) Seal(plain, associated string) []byte {
	nonce := make([]byte, b.aead.NonceSize(), b.aead.NonceSize()+len(plain)+b.aead.Overhead())
	rand.Read(nonce)
	return b.aead.Seal(nonce, nonce, []byte(plain), []byte(associated))
}

// ErrOpen is returned when a sealed value cannot be opened: a changed
// secret, tampering, or a value moved between rows.
var ErrOpen = errors.New("vault: unable to open the sealed key (was KNOBS_SECRET changed?)")

// Open decrypts what Seal returned for the same associated data.
func (b *Box) Open(sealed []byte, associated string) (string, error) {
	n := b.aead.NonceSize()
	if len(sealed) < n {
		return "", ErrOpen
	}
	plain, err := b.aead.Open(nil, sealed[:n], sealed[n:], []byte(associated))
	if err != nil {
		return "", ErrOpen
	}
	return string(plain), nil
}

// Last4 is the part of a key that may be shown: its last four characters,
// or nothing for a key so short that four characters would give it away.
func Last4(key string) string {
	if len(key) < 12 {
		return ""
	}
	return key[len(key)-4:]
}
