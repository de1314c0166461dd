package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Preset visibilities.
const (
	PresetPrivate = "private" // its owner alone sees it
	PresetTeam    = "team"    // every member sees and uses it; its owner or an admin changes it
)

// ErrForbidden is returned when the caller sees a preset but may not
// change it: a team preset of someone else, for a member.
var ErrForbidden = errors.New("db: not allowed")

// ErrPresetStale is returned by UpdatePreset when the preset was saved
// by someone else since the caller loaded the Version it passed.
var ErrPresetStale = errors.New("db: the preset was changed since it was loaded")

// Preset is a saved RunSpec with a name, shared or not with the team.
// Names need not be unique: two members may both have a "Summariser",
// and the list tells them apart by owner.
type Preset struct {
	ID          int64
	OwnerID     int64
	OwnerName   string // loaded, never written
	Name        string
	Description string
	Tags        []string // normalised: lowercase, sorted, unique
	Visibility  string   // PresetPrivate or PresetTeam
	Spec        string   // RunSpec JSON, with {{name}} placeholders
	Variables   map[string]string
	Version     int // the current version; UpdatePreset checks it when not 0
	CreatedAt   time.Time
	UpdatedAt   time.Time
	LastUsedAt  time.Time // zero when never used; one time for the whole team
}

// PresetVersion is a preset's content as one save left it. Visibility is
// not versioned: a restore does not change who sees the preset.
type PresetVersion struct {
	Version     int
	Name        string
	Description string
	Tags        []string
	Spec        string
	Variables   map[string]string
	SavedAt     time.Time
	SavedBy     string // username; "" once that account is removed
}

// presetContent is what a version keeps, encoded for its columns.
type presetContent struct {
	name, description, tags, spec, variables string
}

func encodeContent(p Preset) (presetContent, error) {
	if p.Variables == nil {
		p.Variables = map[string]string{} // stored as {}, never null
	}
	vars, err := json.Marshal(p.Variables)
	if err != nil {
		return presetContent{}, err
	}
	return presetContent{p.Name, p.Description, strings.Join(p.Tags, ","), p.Spec, string(vars)}, nil
}

func splitTags(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func decodeVariables(s string) map[string]string {
	v := map[string]string{}
	json.Unmarshal([]byte(s), &v) // written by encodeContent; a bad row loads as no defaults
	return v
}

// presetColumns reads a preset joined as p with its owner as u.
const presetColumns = `p.id, p.owner_id, u.username, p.name, p.description, p.tags, p.visibility, p.spec, p.variables, p.version,
	p.created_at, p.updated_at, ifnull(p.last_used_at, 0)`

// visibleTo is the condition for presets (as p) that user ?1 sees.
const visibleTo = `(p.owner_id = ?1 OR p.visibility = 'team')`

func scanPreset(row interface{ Scan(...any) error }) (Preset, error) {
	var p Preset
	var tags, vars string
	var created, updated, used int64
	err := row.Scan(&p.ID, &p.OwnerID, &p.OwnerName, &p.Name, &p.Description, &tags, &p.Visibility, &p.Spec, &vars, &p.Version,
		&created, &updated, &used)
	p.Tags = splitTags(tags)
	p.Variables = decodeVariables(vars)
	p.CreatedAt = time.UnixMilli(created)
	p.UpdatedAt = time.UnixMilli(updated)
	if used != 0 {
		p.LastUsedAt = time.UnixMilli(used)
	}
	return p, err
}

// loadPreset reads preset id as viewer sees it, on q (the reader or a
// write transaction); ErrNotFound when viewer does not see it.
func loadPreset(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, viewer, id int64) (Preset, error) {
	p, err := scanPreset(q.QueryRowContext(ctx, `SELECT `+presetColumns+` FROM presets p JOIN users u ON u.id = p.owner_id
WHERE p.id = ?2 AND `+visibleTo, viewer, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Preset{}, ErrNotFound
	}
	return p, err
}

// insertVersion keeps p's content as version p.Version.
func insertVersion(ctx context.Context, tx *sql.Tx, p Preset, by int64, at time.Time) error {
	c, err := encodeContent(p)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `
INSERT INTO preset_versions (preset_id, version, name, description, tags, spec, variables, saved_at, saved_by)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, p.ID, p.Version, c.name, c.description, c.tags, c.spec, c.variables, at.UnixMilli(), by)
	return err
}

// CreatePreset saves a new preset of p.OwnerID as version 1, which is
// also kept in its versions. The caller has checked p by the preset rules
// (preset.Normalize); an empty visibility is private.
func (s *Store) CreatePreset(ctx context.Context, p Preset) (Preset, error) {
	if p.Visibility == "" {
		p.Visibility = PresetPrivate
	}
	c, err := encodeContent(p)
	if err != nil {
		return Preset{}, fmt.Errorf("db: unable to create preset: %w", err)
	}
	now := time.Now()
	var out Preset
	err = s.tx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `
INSERT INTO presets (owner_id, name, description, tags, visibility, spec, variables, version, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?) RETURNING id`,
			p.OwnerID, c.name, c.description, c.tags, p.Visibility, c.spec, c.variables, now.UnixMilli(), now.UnixMilli()).Scan(&p.ID)
		if err != nil {
			return err
		}
		p.Version = 1
		if err := insertVersion(ctx, tx, p, p.OwnerID, now); err != nil {
			return err
		}
		out, err = loadPreset(ctx, tx, p.OwnerID, p.ID)
		return err
	})
	if err != nil {
		return Preset{}, fmt.Errorf("db: unable to create preset: %w", err)
	}
	return out, nil
}

// Preset loads a preset viewer sees: their own, or a team preset.
// Anything else is ErrNotFound.
func (s *Store) Preset(ctx context.Context, viewer, id int64) (Preset, error) {
	p, err := loadPreset(ctx, s.r, viewer, id)
	if errors.Is(err, ErrNotFound) {
		return Preset{}, err
	}
	if err != nil {
		return Preset{}, fmt.Errorf("db: unable to load preset %d: %w", id, err)
	}
	return p, nil
}

// Presets lists viewer's presets and the team's, most recently used
// first, then most recently saved. query keeps the presets that match
// every word of it: "tag:x" matches the tag x; any other word matches a
// tag equal to it or a name containing it, ignoring case.
func (s *Store) Presets(ctx context.Context, viewer int64, query string) ([]Preset, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+presetColumns+` FROM presets p JOIN users u ON u.id = p.owner_id
WHERE `+visibleTo+` ORDER BY p.last_used_at DESC NULLS LAST, p.updated_at DESC, p.id DESC`, viewer)
	if err != nil {
		return nil, fmt.Errorf("db: unable to list presets: %w", err)
	}
	defer rows.Close()
	words := strings.Fields(strings.ToLower(query))
	var out []Preset
	for rows.Next() {
		p, err := scanPreset(rows)
		if err != nil {
			return nil, fmt.Errorf("db: unable to list presets: %w", err)
		}
		if presetMatches(p, words) {
			out = append(out, p)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: unable to list presets: %w", err)
	}
	return out, nil
}

// PresetName is a preset as a list to choose from shows it.
type PresetName struct {
	ID   int64
	Name string
}

// PresetNames lists the names of viewer's presets and the team's, in the
// order of Presets, without reading their setups: a page that offers
// them fetches the one chosen.
func (s *Store) PresetNames(ctx context.Context, viewer int64) ([]PresetName, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT p.id, p.name FROM presets p
WHERE `+visibleTo+` ORDER BY p.last_used_at DESC NULLS LAST, p.updated_at DESC, p.id DESC`, viewer)
	if err != nil {
		return nil, fmt.Errorf("db: unable to list presets: %w", err)
	}
	defer rows.Close()
	var out []PresetName
	for rows.Next() {
		var p PresetName
		if err := rows.Scan(&p.ID, &p.Name); err != nil {
			return nil, fmt.Errorf("db: unable to list presets: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: unable to list presets: %w", err)
	}
	return out, nil
}

// presetMatches filters in Go rather than SQL: a team's presets are few,
// and SQLite's lower() and LIKE fold ASCII only.
func presetMatches(p Preset, words []string) bool {
	name := strings.ToLower(p.Name)
	for _, w := range words {
		if tag, ok := strings.CutPrefix(w, "tag:"); ok {
			if !slices.Contains(p.Tags, tag) {
				return false
			}
			continue
		}
		if !strings.Contains(name, w) && !slices.Contains(p.Tags, w) {
			return false
		}
	}
	return true
}

// changeable loads preset id in tx for a change by editor: ErrNotFound
// when editor does not see it, ErrForbidden when they see it but are
// neither its owner nor an admin.
func changeable(ctx context.Context, tx *sql.Tx, editor int64, isAdmin bool, id int64) (Preset, error) {
	p, err := loadPreset(ctx, tx, editor, id)
	if err != nil {
		return Preset{}, err
	}
	if p.OwnerID != editor && !isAdmin {
		return Preset{}, ErrForbidden
	}
	return p, nil
}

// savePreset writes next's content and visibility over preset cur as a
// new version, kept in its versions.
func savePreset(ctx context.Context, tx *sql.Tx, editor int64, cur, next Preset) (Preset, error) {
	c, err := encodeContent(next)
	if err != nil {
		return Preset{}, err
	}
	now := time.Now()
	next.ID, next.Version = cur.ID, cur.Version+1
	_, err = tx.ExecContext(ctx, `
UPDATE presets SET name = ?, description = ?, tags = ?, visibility = ?, spec = ?, variables = ?, version = ?, updated_at = ?
WHERE id = ?`, c.name, c.description, c.tags, next.Visibility, c.spec, c.variables, next.Version, now.UnixMilli(), cur.ID)
	if err != nil {
		return Preset{}, err
	}
	if err := insertVersion(ctx, tx, next, editor, now); err != nil {
		return Preset{}, err
	}
	// As the owner sees it: an admin who made it private no longer does.
	return loadPreset(ctx, tx, cur.OwnerID, cur.ID)
}

// presetError passes the errors a caller acts on through unwrapped.
func presetError(err error, format string, args ...any) error {
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrForbidden) || errors.Is(err, ErrPresetStale) {
		return err
	}
	return fmt.Errorf("db: unable to "+format+": %w", append(args, err)...)
}

// UpdatePreset saves p's name, description, tags, visibility, spec and
// variables, checked by the caller (preset.Normalize), over preset p.ID
// as its next version. Only the owner or an admin changes a preset: another member gets ErrForbidden for a team
// preset and ErrNotFound for a private one (an admin too: private is
// private). When p.Version is not 0 and another save came after it,
// the result is ErrPresetStale and nothing changes.
func (s *Store) UpdatePreset(ctx context.Context, editor int64, isAdmin bool, p Preset) (Preset, error) {
	if p.Visibility == "" {
		p.Visibility = PresetPrivate
	}
	var out Preset
	err := s.tx(ctx, func(tx *sql.Tx) error {
		cur, err := changeable(ctx, tx, editor, isAdmin, p.ID)
		if err != nil {
			return err
		}
		if p.Version != 0 && p.Version != cur.Version {
			return ErrPresetStale
		}
		out, err = savePreset(ctx, tx, editor, cur, p)
		return err
	})
	if err != nil {
		return Preset{}, presetError(err, "update preset %d", p.ID)
	}
	return out, nil
}

const versionColumns = `v.version, v.name, v.description, v.tags, v.spec, v.variables, v.saved_at, ifnull(u.username, '')`

func scanVersion(row interface{ Scan(...any) error }) (PresetVersion, error) {
	var v PresetVersion
	var tags, vars string
	var saved int64
	err := row.Scan(&v.Version, &v.Name, &v.Description, &tags, &v.Spec, &vars, &saved, &v.SavedBy)
	v.Tags = splitTags(tags)
	v.Variables = decodeVariables(vars)
	v.SavedAt = time.UnixMilli(saved)
	return v, err
}

// PresetVersions lists every version of a preset viewer sees, the
// current one included, newest first.
func (s *Store) PresetVersions(ctx context.Context, viewer, id int64) ([]PresetVersion, error) {
	if _, err := s.Preset(ctx, viewer, id); err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+versionColumns+` FROM preset_versions v LEFT JOIN users u ON u.id = v.saved_by
WHERE v.preset_id = ? ORDER BY v.version DESC`, id)
	if err != nil {
		return nil, fmt.Errorf("db: unable to list versions of preset %d: %w", id, err)
	}
	defer rows.Close()
	var out []PresetVersion
	for rows.Next() {
		v, err := scanVersion(rows)
		if err != nil {
			return nil, fmt.Errorf("db: unable to list versions of preset %d: %w", id, err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// loadVersion reads one version of preset id, which the caller has
// checked viewer sees.
func loadVersion(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, id int64, version int) (PresetVersion, error) {
	v, err := scanVersion(q.QueryRowContext(ctx, `SELECT `+versionColumns+` FROM preset_versions v LEFT JOIN users u ON u.id = v.saved_by
WHERE v.preset_id = ? AND v.version = ?`, id, version))
	if errors.Is(err, sql.ErrNoRows) {
		return PresetVersion{}, ErrNotFound
	}
	return v, err
}

// PresetVersion loads one version of a preset viewer sees; ErrNotFound
// when either is unknown to viewer.
func (s *Store) PresetVersion(ctx context.Context, viewer, id int64, version int) (PresetVersion, error) {
	if _, err := s.Preset(ctx, viewer, id); err != nil {
		return PresetVersion{}, err
	}
	v, err := loadVersion(ctx, s.r, id, version)
	if err != nil {
		return PresetVersion{}, presetError(err, "load version %d of preset %d", version, id)
	}
	return v, nil
}

// RestorePresetVersion saves the content of an earlier version as the
// preset's next version, so that the restore itself can be undone. The
// rules of UpdatePreset apply; an unknown version is ErrNotFound.
func (s *Store) RestorePresetVersion(ctx context.Context, editor int64, isAdmin bool, id int64, version int) (Preset, error) {
	var out Preset
	err := s.tx(ctx, func(tx *sql.Tx) error {
		cur, err := changeable(ctx, tx, editor, isAdmin, id)
		if err != nil {
			return err
		}
		old, err := loadVersion(ctx, tx, id, version)
		if err != nil {
			return err
		}
		next := cur
		next.Name, next.Description, next.Tags, next.Spec, next.Variables = old.Name, old.Description, old.Tags, old.Spec, old.Variables
		out, err = savePreset(ctx, tx, editor, cur, next)
		return err
	})
	if err != nil {
		return Preset{}, presetError(err, "restore version %d of preset %d", version, id)
	}
	return out, nil
}

// RemovePreset deletes a preset with its versions; the presets_forget
// trigger ends its share links and cascades clear the defaults naming
// it. The rules of UpdatePreset apply. Runs made from it keep its id.
func (s *Store) RemovePreset(ctx context.Context, editor int64, isAdmin bool, id int64) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := changeable(ctx, tx, editor, isAdmin, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM presets WHERE id = ?`, id)
		return err
	})
	if err != nil {
		return presetError(err, "remove preset %d", id)
	}
	return nil
}

// TouchPreset records that viewer opened or ran a preset they see; the
// list puts it first. ErrNotFound when viewer does not see it.
func (s *Store) TouchPreset(ctx context.Context, viewer, id int64) error {
	res, err := s.w.ExecContext(ctx, `UPDATE presets AS p SET last_used_at = ?3 WHERE p.id = ?2 AND `+visibleTo,
		viewer, id, time.Now().UnixMilli())
	if err != nil {
		return fmt.Errorf("db: unable to touch preset %d: %w", id, err)
	}
	return affectedOne(res)
}

// SetDefaultPreset makes a preset user sees the one a fresh playground
// loads; 0 clears it. ErrNotFound when user does not see the preset.
func (s *Store) SetDefaultPreset(ctx context.Context, user, presetID int64) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if presetID == 0 {
			_, err := tx.ExecContext(ctx, `DELETE FROM user_defaults WHERE user_id = ?`, user)
			return err
		}
		if _, err := loadPreset(ctx, tx, user, presetID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `
INSERT INTO user_defaults (user_id, preset_id) VALUES (?, ?)
ON CONFLICT (user_id) DO UPDATE SET preset_id = excluded.preset_id`, user, presetID)
		return err
	})
	if err != nil {
		return presetError(err, "set the default preset of user %d", user)
	}
	return nil
}

// DefaultPreset loads user's default preset; ErrNotFound when there is
// none, or it is a team preset its owner has since made private.
func (s *Store) DefaultPreset(ctx context.Context, user int64) (Preset, error) {
	p, err := scanPreset(s.r.QueryRowContext(ctx, `SELECT `+presetColumns+` FROM user_defaults d
JOIN presets p ON p.id = d.preset_id JOIN users u ON u.id = p.owner_id
WHERE d.user_id = ?1 AND `+visibleTo, user))
	if errors.Is(err, sql.ErrNoRows) {
		return Preset{}, ErrNotFound
	}
	if err != nil {
		return Preset{}, fmt.Errorf("db: unable to load the default preset of user %d: %w", user, err)
	}
	return p, nil
}
