package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Identity is a person as a single sign-on provider knows them: the
// provider's issuer URL, their subject there, and their verified email.
type Identity struct {
	Issuer  string
	Subject string
	Email   string
}

// ErrIdentityTaken is returned when an identity is already linked to an
// account, such as by a second sign-in at the same moment.
var ErrIdentityTaken = errors.New("db: identity already linked")

// IdentityUser loads the account an identity signs in to; ErrNotFound
// when it is linked to none.
func (s *Store) IdentityUser(ctx context.Context, issuer, subject string) (User, error) {
	u, err := scanUser(s.r.QueryRowContext(ctx, `SELECT u.id, u.username, u.password_hash, u.role, u.created_at
FROM user_identities i JOIN users u ON u.id = i.user_id WHERE i.issuer = ? AND i.subject = ?`, issuer, subject))
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, ErrNotFound
	}
	if err != nil {
		return User{}, fmt.Errorf("db: unable to load the account of an identity: %w", err)
	}
	return u, nil
}

// UserByEmail loads the account whose verified email, or else whose
// username, is email, ignoring case; ErrNotFound when there is none.
// byEmail is false for a match on the username alone: anyone may have
// chosen that name, so it proves nothing about who owns the address.
func (s *Store) UserByEmail(ctx context.Context, email string) (u User, byEmail bool, err error) {
	var created int64
	err = s.r.QueryRowContext(ctx, `SELECT `+userColumns+`, ifnull(email = ?1, 0) FROM users
WHERE email = ?1 OR username = ?1 ORDER BY email = ?1 DESC, id LIMIT 1`, email).Scan(&u.ID, &u.Username, &u.PasswordHash, &u.Role, &created, &byEmail)
	u.CreatedAt = time.Unix(created, 0)
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, false, ErrNotFound
	}
	if err != nil {
		return User{}, false, fmt.Errorf("db: unable to load the account of an email: %w", err)
	}
	return u, byEmail, nil
}

// UserEmail returns the verified email of an account, "" when it has none.
func (s *Store) UserEmail(ctx context.Context, id int64) (string, error) {
	var email sql.NullString
	err := s.r.QueryRowContext(ctx, `SELECT email FROM users WHERE id = ?`, id).Scan(&email)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("db: unable to load the email of user %d: %w", id, err)
	}
	return email.String, nil
}

// HasIdentityAt reports whether an account is linked to an identity of
// the provider issuer.
func (s *Store) HasIdentityAt(ctx context.Context, user int64, issuer string) (bool, error) {
	var n int
	err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM user_identities WHERE user_id = ? AND issuer = ?`, user, issuer).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("db: unable to check the identities of user %d: %w", user, err)
	}
	return n > 0, nil
}

// IdentityRemoved reports whether an admin removed an account this
// identity, or another of the same email at the same provider, signed in to.
func (s *Store) IdentityRemoved(ctx context.Context, id Identity) (bool, error) {
	var n int
	err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM removed_identities
WHERE issuer = ? AND (subject = ? OR email = ?)`, id.Issuer, id.Subject, id.Email).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("db: unable to check removed identities: %w", err)
	}
	return n > 0, nil
}

// SSOSignUp is what creating an account at a first single sign-on needs.
type SSOSignUp struct {
	Identity Identity
	// Username is the name wanted; a suffix (-2, -3, …) makes it unique.
	Username string
	Role     string
	// Allowed is true when the sign-on policy (email domain, admin
	// group) lets this identity in without an invite.
	Allowed bool
	// InviteToken, when set, is spent in the same transaction; without
	// Allowed, an unknown, used or expired one fails with ErrInviteInvalid.
	InviteToken string
	// AdminGroupSet is true when an admin group is configured: the first
	// account, which becomes the admin, must then be in it (Role admin).
	AdminGroupSet bool
}

// ErrFirstNotAdmin is the first account's sign-on refused because it is
// outside the admin group.
var ErrFirstNotAdmin = errors.New("db: the first account must be in the admin group")

// maxNameTries bounds the numbered usernames tried before a random one.
const maxNameTries = 50

// CreateSSOUser creates an account linked to an identity, with no
// password. The first account becomes the admin, as with sign-up; after
// that it needs Allowed or a valid invite, checked in the transaction. A
// removed identity let back in is no longer remembered as removed.
func (s *Store) CreateSSOUser(ctx context.Context, in SSOSignUp) (User, error) {
	now := time.Now()
	u := User{Role: in.Role, CreatedAt: now}
	if u.Role != RoleAdmin {
		u.Role = RoleMember
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var count int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM users`).Scan(&count); err != nil {
			return err
		}
		var inviteID int64
		if in.InviteToken != "" {
			err := tx.QueryRowContext(ctx,
				`SELECT id FROM invites WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?`,
				hashToken(in.InviteToken), now.Unix()).Scan(&inviteID)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		switch {
		case count == 0 && !in.Allowed:
			// The first account becomes the admin, so the policy must
			// let it in: not whoever reaches the provider first.
			return ErrSignUpClosed
		case count == 0 && in.AdminGroupSet && in.Role != RoleAdmin:
			return ErrFirstNotAdmin
		case count == 0:
			u.Role = RoleAdmin
		case inviteID != 0 || in.Allowed:
		case in.InviteToken != "":
			return ErrInviteInvalid
		default:
			return ErrSignUpClosed
		}
		var err error
		if u.Username, err = freeUsername(ctx, tx, in.Username); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx,
			`INSERT INTO users (username, password_hash, role, created_at, email) VALUES (?, '', ?, ?, ?)`,
			u.Username, u.Role, now.Unix(), in.Identity.Email)
		if err != nil {
			return err
		}
		if u.ID, err = res.LastInsertId(); err != nil {
			return err
		}
		if err := insertIdentity(ctx, tx, u.ID, in.Identity, now); err != nil {
			return err
		}
		if inviteID != 0 {
			if _, err = tx.ExecContext(ctx, `UPDATE invites SET used_at = ?, used_by = ? WHERE id = ?`, now.Unix(), u.ID, inviteID); err != nil {
				return err
			}
		}
		return forgetRemoved(ctx, tx, in.Identity)
	})
	if errors.Is(err, ErrInviteInvalid) || errors.Is(err, ErrSignUpClosed) || errors.Is(err, ErrIdentityTaken) || errors.Is(err, ErrFirstNotAdmin) {
		return User{}, err
	}
	if err != nil {
		return User{}, fmt.Errorf("db: unable to create an account by single sign-on: %w", err)
	}
	return u, nil
}

// LinkIdentity links an identity to an existing account, whose email
// becomes the identity's.
func (s *Store) LinkIdentity(ctx context.Context, user int64, id Identity) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if err := insertIdentity(ctx, tx, user, id, time.Now()); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE users SET email = ? WHERE id = ?`, id.Email, user)
		if err != nil {
			return err
		}
		if err := affectedOne(res); err != nil {
			return err
		}
		return forgetRemoved(ctx, tx, id)
	})
	if errors.Is(err, ErrIdentityTaken) || errors.Is(err, ErrNotFound) {
		return err
	}
	if err != nil {
		return fmt.Errorf("db: unable to link an identity to user %d: %w", user, err)
	}
	return nil
}

// TouchIdentity records a sign-in through an identity, with the email
// the provider gave this time.
func (s *Store) TouchIdentity(ctx context.Context, id Identity) error {
	_, err := s.w.ExecContext(ctx, `UPDATE user_identities SET last_used_at = ?, email = ? WHERE issuer = ? AND subject = ?`,
		time.Now().Unix(), id.Email, id.Issuer, id.Subject)
	if err != nil {
		return fmt.Errorf("db: unable to record a sign-in by single sign-on: %w", err)
	}
	return nil
}

func insertIdentity(ctx context.Context, tx *sql.Tx, user int64, id Identity, now time.Time) error {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM user_identities WHERE issuer = ? AND subject = ?`, id.Issuer, id.Subject).Scan(&n)
	if err != nil {
		return err
	}
	if n > 0 {
		return ErrIdentityTaken
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO user_identities (issuer, subject, user_id, email, created_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?)`,
		id.Issuer, id.Subject, user, id.Email, now.Unix(), now.Unix())
	return err
}

func forgetRemoved(ctx context.Context, tx *sql.Tx, id Identity) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM removed_identities WHERE issuer = ? AND (subject = ? OR email = ?)`, id.Issuer, id.Subject, id.Email)
	return err
}

// freeUsername returns want, or want with the first free suffix, or
// with a random one when the first maxNameTries are taken.
func freeUsername(ctx context.Context, tx *sql.Tx, want string) (string, error) {
	taken := func(name string) (bool, error) {
		var n int
		err := tx.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE username = ?`, name).Scan(&n)
		return n > 0, err
	}
	for i := 1; i <= maxNameTries; i++ {
		name := want
		if i > 1 {
			name = want + "-" + strconv.Itoa(i)
		}
		t, err := taken(name)
		if err != nil || !t {
			return name, err
		}
	}
	name := want + "-" + NewToken()[:8]
	if t, err := taken(name); err != nil || t {
		return "", errors.Join(ErrUsernameTaken, err)
	}
	return name, nil
}
