package db_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"knobs/db"
	"knobs/db/dbtest"
)

// openStore opens a store on a new file in t.TempDir() and closes it when
// the test ends.
func openStore(t *testing.T) (*db.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "knobs.db")
	dbtest.Fresh(t, path)
	s, err := db.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

// rawDB opens a plain connection to the file, as another program would.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	d, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func schemaVersion(t *testing.T, path string) int {
	t.Helper()
	var v int
	if err := rawDB(t, path).QueryRow(`SELECT version FROM schema_version`).Scan(&v); err != nil {
		t.Fatalf("schema_version: %v", err)
	}
	return v
}

func TestMigrations(t *testing.T) {
	ctx := context.Background()
	s, path := openStore(t)
	if got := schemaVersion(t, path); got != db.SchemaVersion() {
		t.Fatalf("new file at schema version %d, want %d", got, db.SchemaVersion())
	}
	if _, err := s.CreateUser(ctx, db.SignUp{Username: "alice", PasswordHash: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	for range 2 {
		s, err := db.Open(ctx, path)
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		u, err := s.UserByName(ctx, "alice")
		if err != nil || !u.IsAdmin() {
			t.Errorf("after reopening, alice: %+v %v", u, err)
		}
		s.Close()
		if got := schemaVersion(t, path); got != db.SchemaVersion() {
			t.Errorf("reopened file at schema version %d, want %d", got, db.SchemaVersion())
		}
	}
	var rows int
	rawDB(t, path).QueryRow(`SELECT count(*) FROM schema_version`).Scan(&rows)
	if rows != 1 {
		t.Errorf("schema_version has %d rows, want 1", rows)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	s, path := openStore(t)
	s.Close()
	if _, err := rawDB(t, path).Exec(`UPDATE schema_version SET version = ?`, db.SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	_, err := db.Open(context.Background(), path)
	if err == nil {
		t.Fatal("opened a database newer than this Knobs")
	}
	want := fmt.Sprintf("schema version %d, newer than this Knobs", db.SchemaVersion()+1)
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
}

func TestOpenPathWithSpecialCharacters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "my knobs #1?.db")
	s, err := db.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.SetSetting(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Setting(ctx, "k"); v != "v" || err != nil {
		t.Errorf("setting read back %q %v", v, err)
	}
	if got := schemaVersion(t, path); got != db.SchemaVersion() {
		t.Errorf("the file at %q is at version %d", path, got)
	}
}

func TestConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	if err := s.SetSetting(ctx, db.SettingSignUpMode, "open"); err != nil {
		t.Fatal(err)
	}
	admin, err := s.CreateUser(ctx, db.SignUp{Username: "admin", PasswordHash: "x"})
	if err != nil {
		t.Fatal(err)
	}

	const workers, rounds = 50, 10
	errs := make(chan error, workers*rounds*6)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				name := fmt.Sprintf("u%d-%d", w, i)
				u, err := s.CreateUser(ctx, db.SignUp{Username: name, PasswordHash: "x", Open: true})
				if err != nil {
					errs <- err
					continue
				}
				errs <- s.SetSetting(ctx, fmt.Sprintf("k%d", w), name)
				errs <- s.SetProviderKey(ctx, u.ID, "cerebras", []byte("sealed-"+name), "abcd")
				errs <- s.SetProviderKey(ctx, db.Team, "xai", []byte("team-"+name), "efgh")
				if _, err := s.CreateInvite(ctx, admin.ID, time.Hour); err != nil {
					errs <- err
				}
				// A read-then-write transaction, the kind that fails with
				// SQLITE_BUSY under deferred locking.
				if _, _, err := s.SettingOrInit(ctx, fmt.Sprintf("init%d", i), func() string { return name }); err != nil {
					errs <- err
				}
				if _, err := s.EffectiveKey(ctx, u.ID, "cerebras"); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	n := 0
	for err := range errs {
		if err != nil {
			n++
			if n <= 5 {
				t.Errorf("concurrent write: %v", err)
			}
		}
	}
	if n > 0 {
		t.Fatalf("%d writes failed", n)
	}
	if got, _ := s.CountUsers(ctx); got != workers*rounds+1 {
		t.Errorf("users: %d, want %d", got, workers*rounds+1)
	}
	for i := range rounds {
		v, _ := s.Setting(ctx, fmt.Sprintf("init%d", i))
		if v == "" {
			t.Errorf("init%d never set", i)
		}
	}
}

func TestFirstAccountIsAdminUnderRace(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	const n = 20
	var wg sync.WaitGroup
	results := make([]error, n)
	users := make([]db.User, n)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			users[i], results[i] = s.CreateUser(ctx, db.SignUp{Username: fmt.Sprintf("first%d", i), PasswordHash: "x"})
		})
	}
	close(start)
	wg.Wait()
	ok := 0
	for i, err := range results {
		switch {
		case err == nil:
			ok++
			if !users[i].IsAdmin() {
				t.Errorf("the account that got in is %s, not admin", users[i].Role)
			}
		case !errors.Is(err, db.ErrSignUpClosed):
			t.Errorf("sign-up %d: %v, want ErrSignUpClosed", i, err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d accounts created, want exactly 1", ok)
	}
	all, err := s.Users(ctx)
	if err != nil || len(all) != 1 || !all[0].IsAdmin() {
		t.Errorf("users: %+v %v, want one admin", all, err)
	}
}

func TestCreateUser(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	first, err := s.CreateUser(ctx, db.SignUp{Username: "Alice", PasswordHash: "x"})
	if err != nil || !first.IsAdmin() {
		t.Fatalf("first: %+v %v", first, err)
	}
	if _, err := s.CreateUser(ctx, db.SignUp{Username: "bob", PasswordHash: "x"}); !errors.Is(err, db.ErrSignUpClosed) {
		t.Errorf("second without invite: %v, want ErrSignUpClosed", err)
	}
	bob, err := s.CreateUser(ctx, db.SignUp{Username: "bob", PasswordHash: "x", Open: true})
	if err != nil || bob.IsAdmin() {
		t.Errorf("open sign-up: %+v %v, want a member", bob, err)
	}
	if _, err := s.CreateUser(ctx, db.SignUp{Username: "ALICE", PasswordHash: "x", Open: true}); !errors.Is(err, db.ErrUsernameTaken) {
		t.Errorf("ALICE after Alice: %v, want ErrUsernameTaken", err)
	}
	if u, err := s.UserByName(ctx, "aLiCe"); err != nil || u.ID != first.ID {
		t.Errorf("UserByName ignoring case: %+v %v", u, err)
	}
	if _, err := s.UserByName(ctx, "nobody"); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("unknown user: %v, want ErrNotFound", err)
	}
	if _, err := s.User(ctx, 999); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("unknown id: %v, want ErrNotFound", err)
	}
}

func TestEffectiveKey(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	alice, _ := s.CreateUser(ctx, db.SignUp{Username: "alice", PasswordHash: "x"})
	bob, _ := s.CreateUser(ctx, db.SignUp{Username: "bob", PasswordHash: "x", Open: true})

	if _, err := s.EffectiveKey(ctx, alice.ID, "cerebras"); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("no key stored: %v, want ErrNotFound", err)
	}
	must(t, s.SetProviderKey(ctx, db.Team, "cerebras", []byte("team"), "team"))
	must(t, s.SetProviderKey(ctx, alice.ID, "cerebras", []byte("alice"), "alic"))
	must(t, s.SetProviderKey(ctx, bob.ID, "xai", []byte("bob-xai"), "bobx"))

	for _, tt := range []struct {
		user       int64
		provider   string
		wantSealed string
		wantOwner  int64
	}{
		{alice.ID, "cerebras", "alice", alice.ID},
		{bob.ID, "cerebras", "team", db.Team},
		{bob.ID, "xai", "bob-xai", bob.ID},
	} {
		k, err := s.EffectiveKey(ctx, tt.user, tt.provider)
		if err != nil || string(k.Sealed) != tt.wantSealed || k.UserID != tt.wantOwner {
			t.Errorf("user %d %s: %q owner %d (%v), want %q owner %d", tt.user, tt.provider, k.Sealed, k.UserID, err, tt.wantSealed, tt.wantOwner)
		}
	}
	if _, err := s.EffectiveKey(ctx, alice.ID, "xai"); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("alice on xai, which only bob has: %v, want ErrNotFound", err)
	}

	// Replacing keeps one row; removing falls back to the team.
	must(t, s.SetProviderKey(ctx, alice.ID, "cerebras", []byte("alice2"), "ali2"))
	if keys, _ := s.ProviderKeys(ctx, alice.ID); len(keys) != 1 || string(keys[0].Sealed) != "alice2" || keys[0].Last4 != "ali2" {
		t.Errorf("after replacing: %+v", keys)
	}
	must(t, s.RemoveProviderKey(ctx, alice.ID, "cerebras"))
	if k, _ := s.EffectiveKey(ctx, alice.ID, "cerebras"); string(k.Sealed) != "team" {
		t.Errorf("after removing alice's key: %q, want the team's", k.Sealed)
	}
	if err := s.RemoveProviderKey(ctx, alice.ID, "cerebras"); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("removing twice: %v, want ErrNotFound", err)
	}
	// Removing a user takes their keys with them.
	must(t, s.RemoveUser(ctx, bob.ID))
	if keys, _ := s.ProviderKeys(ctx, bob.ID); len(keys) != 0 {
		t.Errorf("a removed user's keys remain: %+v", keys)
	}
	if keys, _ := s.ProviderKeys(ctx, db.Team); len(keys) != 1 {
		t.Errorf("team keys: %+v", keys)
	}
}

func TestInviteSingleUse(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	admin, _ := s.CreateUser(ctx, db.SignUp{Username: "admin", PasswordHash: "x"})

	token, err := s.CreateInvite(ctx, admin.ID, time.Hour)
	must(t, err)
	if ok, err := s.InviteValid(ctx, token); !ok || err != nil {
		t.Fatalf("new invite valid: %v %v", ok, err)
	}
	bob, err := s.CreateUser(ctx, db.SignUp{Username: "bob", PasswordHash: "x", InviteToken: token})
	if err != nil || bob.IsAdmin() {
		t.Fatalf("sign-up with invite: %+v %v", bob, err)
	}
	if ok, _ := s.InviteValid(ctx, token); ok {
		t.Errorf("a used invite is still valid")
	}
	if _, err := s.CreateUser(ctx, db.SignUp{Username: "carol", PasswordHash: "x", InviteToken: token}); !errors.Is(err, db.ErrInviteInvalid) {
		t.Errorf("second use: %v, want ErrInviteInvalid", err)
	}
	in, _ := s.Invites(ctx)
	if len(in) != 1 || in[0].UsedBy != "bob" || in[0].UsedAt.IsZero() || in[0].CreatedBy != "admin" {
		t.Errorf("invites: %+v", in)
	}
	if err := s.RevokeInvite(ctx, in[0].ID); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("revoking a used invite: %v, want ErrNotFound", err)
	}

	// A taken username does not spend the invite.
	token2, _ := s.CreateInvite(ctx, admin.ID, time.Hour)
	if _, err := s.CreateUser(ctx, db.SignUp{Username: "BOB", PasswordHash: "x", InviteToken: token2}); !errors.Is(err, db.ErrUsernameTaken) {
		t.Errorf("taken name: %v", err)
	}
	if ok, _ := s.InviteValid(ctx, token2); !ok {
		t.Errorf("a failed sign-up spent the invite")
	}

	expired, _ := s.CreateInvite(ctx, admin.ID, -time.Second)
	if ok, _ := s.InviteValid(ctx, expired); ok {
		t.Errorf("an expired invite is valid")
	}
	if _, err := s.CreateUser(ctx, db.SignUp{Username: "late", PasswordHash: "x", InviteToken: expired}); !errors.Is(err, db.ErrInviteInvalid) {
		t.Errorf("expired invite: %v, want ErrInviteInvalid", err)
	}

	// Many people racing on one link: one gets in.
	token3, _ := s.CreateInvite(ctx, admin.ID, time.Hour)
	var wg sync.WaitGroup
	var mu sync.Mutex
	created := 0
	for i := range 10 {
		wg.Go(func() {
			_, err := s.CreateUser(ctx, db.SignUp{Username: fmt.Sprintf("racer%d", i), PasswordHash: "x", InviteToken: token3})
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				created++
			} else if !errors.Is(err, db.ErrInviteInvalid) {
				t.Errorf("racer %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if created != 1 {
		t.Errorf("%d accounts from one invite, want 1", created)
	}

	// With sign-up open, a spent invite in the link does not stop anyone,
	// and a valid one is still spent.
	if _, err := s.CreateUser(ctx, db.SignUp{Username: "opener", PasswordHash: "x", InviteToken: token, Open: true}); err != nil {
		t.Errorf("open sign-up with a spent invite: %v", err)
	}
	token4, _ := s.CreateInvite(ctx, admin.ID, time.Hour)
	if _, err := s.CreateUser(ctx, db.SignUp{Username: "opener2", PasswordHash: "x", InviteToken: token4, Open: true}); err != nil {
		t.Errorf("open sign-up with a valid invite: %v", err)
	}
	if ok, _ := s.InviteValid(ctx, token4); ok {
		t.Errorf("an invite used while sign-up is open was not spent")
	}

	revoked, _ := s.CreateInvite(ctx, admin.ID, time.Hour)
	in, _ = s.Invites(ctx)
	must(t, s.RevokeInvite(ctx, in[0].ID))
	if _, err := s.CreateUser(ctx, db.SignUp{Username: "dave", PasswordHash: "x", InviteToken: revoked}); !errors.Is(err, db.ErrInviteInvalid) {
		t.Errorf("revoked invite: %v, want ErrInviteInvalid", err)
	}
}

func TestLastAdmin(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	alice, _ := s.CreateUser(ctx, db.SignUp{Username: "alice", PasswordHash: "x"})
	bob, _ := s.CreateUser(ctx, db.SignUp{Username: "bob", PasswordHash: "x", Open: true})

	if err := s.SetUserRole(ctx, alice.ID, db.RoleMember, ""); !errors.Is(err, db.ErrLastAdmin) {
		t.Errorf("demoting the only admin: %v, want ErrLastAdmin", err)
	}
	if err := s.RemoveUser(ctx, alice.ID); !errors.Is(err, db.ErrLastAdmin) {
		t.Errorf("removing the only admin: %v, want ErrLastAdmin", err)
	}
	must(t, s.SetUserRole(ctx, bob.ID, db.RoleAdmin, ""))
	must(t, s.SetUserRole(ctx, alice.ID, db.RoleMember, ""))
	if err := s.RemoveUser(ctx, bob.ID); !errors.Is(err, db.ErrLastAdmin) {
		t.Errorf("removing the new only admin: %v, want ErrLastAdmin", err)
	}
	must(t, s.RemoveUser(ctx, alice.ID))
	if err := s.RemoveUser(ctx, alice.ID); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("removing twice: %v, want ErrNotFound", err)
	}
	if err := s.SetUserRole(ctx, 999, db.RoleAdmin, ""); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("role of unknown user: %v, want ErrNotFound", err)
	}
	if err := s.SetUserRole(ctx, bob.ID, "owner", ""); err == nil {
		t.Errorf("an unknown role was accepted")
	}
	if u, _ := s.User(ctx, bob.ID); !u.IsAdmin() {
		t.Errorf("bob is %s, want admin", u.Role)
	}
}

func TestSettingOrInitAgrees(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	const n = 10
	values := make([]string, n)
	created := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			v, c, err := s.SettingOrInit(ctx, db.SettingSecret, func() string { return fmt.Sprint("secret-", i) })
			if err != nil {
				t.Error(err)
			}
			values[i], created[i] = v, c
		})
	}
	wg.Wait()
	nCreated := 0
	for i := range n {
		if values[i] != values[0] {
			t.Errorf("goroutine %d got %q, goroutine 0 %q", i, values[i], values[0])
		}
		if created[i] {
			nCreated++
		}
	}
	if nCreated != 1 {
		t.Errorf("%d goroutines created the setting, want 1", nCreated)
	}
	if v, _ := s.Setting(ctx, db.SettingSecret); v != values[0] {
		t.Errorf("stored %q, handed out %q", v, values[0])
	}
	if v, err := s.Setting(ctx, "never-set"); v != "" || err != nil {
		t.Errorf("unset setting: %q %v", v, err)
	}
}

func TestCustomProviders(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	u, _ := s.CreateUser(ctx, db.SignUp{Username: "alice", PasswordHash: "x"})
	must(t, s.CreateCustomProvider(ctx, db.CustomProvider{ID: "groq", Name: "Groq", BaseURL: "https://api.groq.com/openai"}, []byte("sealed"), "1234"))
	if err := s.CreateCustomProvider(ctx, db.CustomProvider{ID: "groq2", Name: "GROQ", BaseURL: "https://x"}, nil, ""); !errors.Is(err, db.ErrProviderTaken) {
		t.Errorf("same name other case: %v, want ErrProviderTaken", err)
	}
	must(t, s.SetProviderKey(ctx, u.ID, "groq", []byte("mine"), "mine"))
	p, err := s.CustomProvider(ctx, "groq")
	if err != nil || p.BaseURL != "https://api.groq.com/openai" {
		t.Errorf("provider: %+v %v", p, err)
	}
	if k, _ := s.EffectiveKey(ctx, u.ID, "groq"); string(k.Sealed) != "mine" {
		t.Errorf("effective key: %q", k.Sealed)
	}
	must(t, s.RemoveCustomProvider(ctx, "groq"))
	if _, err := s.EffectiveKey(ctx, u.ID, "groq"); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("keys of a removed provider remain: %v", err)
	}
	if _, err := s.CustomProvider(ctx, "groq"); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("removed provider: %v, want ErrNotFound", err)
	}
	if err := s.RemoveCustomProvider(ctx, "groq"); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("removing twice: %v, want ErrNotFound", err)
	}
}

func TestPingAfterClose(t *testing.T) {
	s, _ := openStore(t)
	if err := s.Ping(context.Background()); err != nil {
		t.Fatalf("ping: %v", err)
	}
	s.Close()
	if err := s.Ping(context.Background()); err == nil {
		t.Errorf("ping on a closed store succeeded")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
