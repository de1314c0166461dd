package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// LabelProduction is the label a preset is fetched by when the caller
// names neither a label nor a version.
const LabelProduction = "production"

// ErrLabelProtected is returned when a member who is neither the
// preset's owner nor an admin moves, removes or unprotects a protected
// label.
var ErrLabelProtected = errors.New("db: the label is protected")

// ErrLabelMoved is returned when a move names the version a label was
// seen at (LabelChange.From) and the label was moved since.
var ErrLabelMoved = errors.New("db: the label was moved since it was seen")

// ErrNoVersion is returned when a label is pointed at a version its
// preset does not have.
var ErrNoVersion = errors.New("db: the preset has no such version")

// PresetLabel is a name, such as "production", that points at one
// version of a preset: apps fetch the preset by it.
type PresetLabel struct {
	PresetID  int64
	Name      string
	Version   int
	Protected bool // moved by the preset's owner or an admin only
	MovedAt   time.Time
	MovedBy   string // username; "" once that account is removed
}

// LabelMove is one change of a label, as its history lists it.
type LabelMove struct {
	ID        int64
	Label     string
	From      int  // the version it pointed at; 0 when it was made
	To        int  // the version it points at; 0 when it was removed
	Protected bool // whether it was protected after the move
	At        time.Time
	By        string // username; "" once that account is removed
}

// AmbiguousError is returned when a preset name names more than one
// preset the caller sees: they name it by id instead.
type AmbiguousError struct {
	Name string
	IDs  []int64
}

func (e *AmbiguousError) Error() string {
	ids := make([]string, len(e.IDs))
	for i, id := range e.IDs {
		ids[i] = strconv.FormatInt(id, 10)
	}
	return fmt.Sprintf("db: %q names more than one preset (%s)", e.Name, strings.Join(ids, ", "))
}

const labelColumns = `l.preset_id, l.name, l.version, l.protected, l.moved_at, ifnull(u.username, '')`

func scanLabel(row interface{ Scan(...any) error }) (PresetLabel, error) {
	var l PresetLabel
	var at int64
	err := row.Scan(&l.PresetID, &l.Name, &l.Version, &l.Protected, &at, &l.MovedBy)
	l.MovedAt = time.UnixMilli(at)
	return l, err
}

func queryLabels(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, where string, args ...any) ([]PresetLabel, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+labelColumns+` FROM preset_labels l LEFT JOIN users u ON u.id = l.moved_by
JOIN presets p ON p.id = l.preset_id WHERE `+where+` ORDER BY l.preset_id, l.name`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []PresetLabel
	for rows.Next() {
		l, err := scanLabel(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// PresetLabels lists the labels of a preset viewer sees, by name.
func (s *Store) PresetLabels(ctx context.Context, viewer, id int64) ([]PresetLabel, error) {
	if _, err := s.Preset(ctx, viewer, id); err != nil {
		return nil, err
	}
	ls, err := queryLabels(ctx, s.r, `l.preset_id = ?`, id)
	if err != nil {
		return nil, fmt.Errorf("db: unable to list the labels of preset %d: %w", id, err)
	}
	return ls, nil
}

// VisibleLabels gives the labels of every preset viewer sees, by preset
// id, in one query: the presets list shows them.
func (s *Store) VisibleLabels(ctx context.Context, viewer int64) (map[int64][]PresetLabel, error) {
	ls, err := queryLabels(ctx, s.r, visibleTo, viewer)
	if err != nil {
		return nil, fmt.Errorf("db: unable to list preset labels: %w", err)
	}
	out := map[int64][]PresetLabel{}
	for _, l := range ls {
		out[l.PresetID] = append(out[l.PresetID], l)
	}
	return out, nil
}

// LabelMoves lists the moves of a preset's labels, newest first, at most
// limit of them.
func (s *Store) LabelMoves(ctx context.Context, viewer, id int64, limit int) ([]LabelMove, error) {
	if _, err := s.Preset(ctx, viewer, id); err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT m.id, m.label, ifnull(m.from_version, 0), ifnull(m.to_version, 0), m.protected, m.moved_at,
	ifnull(u.username, '') FROM preset_label_moves m LEFT JOIN users u ON u.id = m.moved_by
WHERE m.preset_id = ? ORDER BY m.id DESC LIMIT ?`, id, limit)
	if err != nil {
		return nil, fmt.Errorf("db: unable to list the label moves of preset %d: %w", id, err)
	}
	defer rows.Close()
	var out []LabelMove
	for rows.Next() {
		var m LabelMove
		var at int64
		if err := rows.Scan(&m.ID, &m.Label, &m.From, &m.To, &m.Protected, &at, &m.By); err != nil {
			return nil, fmt.Errorf("db: unable to list the label moves of preset %d: %w", id, err)
		}
		m.At = time.UnixMilli(at)
		out = append(out, m)
	}
	return out, rows.Err()
}

// LabelChange is a move of one label: where it should point and, when
// Protect is not nil, whether it is protected.
type LabelChange struct {
	PresetID int64
	Label    string // checked by the caller (preset.LabelName)
	Version  int
	Protect  *bool
	// From, when not 0, is the version the mover saw the label at: a
	// label moved since is ErrLabelMoved, and nothing changes.
	From int
}

// labelGuard loads preset id and its label name in tx for a change by
// mover: ErrNotFound when mover does not see the preset; ErrLabelProtected
// when the label is protected and mover is neither the preset's owner nor
// an admin. The label is nil when the preset has none of that name.
func labelGuard(ctx context.Context, tx *sql.Tx, mover int64, isAdmin bool, id int64, name string) (Preset, *PresetLabel, error) {
	p, err := loadPreset(ctx, tx, mover, id)
	if err != nil {
		return Preset{}, nil, err
	}
	ls, err := queryLabels(ctx, tx, `l.preset_id = ? AND l.name = ?`, id, name)
	if err != nil || len(ls) == 0 {
		return p, nil, err
	}
	if ls[0].Protected && p.OwnerID != mover && !isAdmin {
		return Preset{}, nil, ErrLabelProtected
	}
	return p, &ls[0], nil
}

// MovePresetLabel points a label of a preset mover sees at one of its
// versions, making the label when the preset has none of that name, and
// records the move. Any member who sees the preset moves a label that is
// not protected; a protected one, and protection itself, are the
// preset's owner's or an admin's (ErrLabelProtected, ErrForbidden). A
// version the preset does not have is ErrNoVersion. Pointing a label
// where it already points changes and records nothing.
func (s *Store) MovePresetLabel(ctx context.Context, mover int64, isAdmin bool, ch LabelChange) (PresetLabel, error) {
	var out PresetLabel
	err := s.tx(ctx, func(tx *sql.Tx) error {
		p, cur, err := labelGuard(ctx, tx, mover, isAdmin, ch.PresetID, ch.Label)
		if err != nil {
			return err
		}
		if ch.From != 0 && (cur == nil || cur.Version != ch.From) {
			return ErrLabelMoved
		}
		protect := cur != nil && cur.Protected
		if ch.Protect != nil && *ch.Protect != protect {
			if p.OwnerID != mover && !isAdmin {
				return ErrForbidden
			}
			protect = *ch.Protect
		}
		if _, err := loadVersion(ctx, tx, ch.PresetID, ch.Version); errors.Is(err, ErrNotFound) {
			return ErrNoVersion
		} else if err != nil {
			return err
		}
		if cur != nil && cur.Version == ch.Version && cur.Protected == protect {
			out = *cur
			return nil
		}
		from := sql.NullInt64{}
		if cur != nil {
			from = sql.NullInt64{Int64: int64(cur.Version), Valid: true}
		}
		now := time.Now().UnixMilli()
		if _, err := tx.ExecContext(ctx, `
INSERT INTO preset_labels (preset_id, name, version, protected, moved_at, moved_by) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (preset_id, name) DO UPDATE SET version = excluded.version, protected = excluded.protected,
	moved_at = excluded.moved_at, moved_by = excluded.moved_by`, ch.PresetID, ch.Label, ch.Version, protect, now, mover); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `
INSERT INTO preset_label_moves (preset_id, label, from_version, to_version, protected, moved_at, moved_by)
VALUES (?, ?, ?, ?, ?, ?, ?)`, ch.PresetID, ch.Label, from, ch.Version, protect, now, mover); err != nil {
			return err
		}
		ls, err := queryLabels(ctx, tx, `l.preset_id = ? AND l.name = ?`, ch.PresetID, ch.Label)
		if err != nil {
			return err
		}
		out = ls[0]
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrLabelProtected) || errors.Is(err, ErrNoVersion) || errors.Is(err, ErrLabelMoved) {
			return PresetLabel{}, err
		}
		return PresetLabel{}, presetError(err, "move label %q of preset %d", ch.Label, ch.PresetID)
	}
	return out, nil
}

// RemovePresetLabel takes a label off a preset, by the rules of
// MovePresetLabel, and records it; ErrNotFound when there is no such
// label.
func (s *Store) RemovePresetLabel(ctx context.Context, mover int64, isAdmin bool, id int64, name string) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		_, cur, err := labelGuard(ctx, tx, mover, isAdmin, id, name)
		if err != nil {
			return err
		}
		if cur == nil {
			return ErrNotFound
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM preset_labels WHERE preset_id = ? AND name = ?`, id, name); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `
INSERT INTO preset_label_moves (preset_id, label, from_version, to_version, protected, moved_at, moved_by)
VALUES (?, ?, ?, NULL, ?, ?, ?)`, id, name, cur.Version, cur.Protected, time.Now().UnixMilli(), mover)
		return err
	})
	if errors.Is(err, ErrLabelProtected) {
		return err
	}
	if err != nil {
		return presetError(err, "remove label %q of preset %d", name, id)
	}
	return nil
}

// FindPreset loads the preset viewer means by ref: an id ("12"), or a
// name, which names viewer's own preset of that name before a team
// preset of it. ErrNotFound when there is none; an *AmbiguousError when
// the name names more than one at the same rank.
func (s *Store) FindPreset(ctx context.Context, viewer int64, ref string) (Preset, error) {
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil && id > 0 && strconv.FormatInt(id, 10) == ref {
		return s.Preset(ctx, viewer, id)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT p.id, p.owner_id = ?1 FROM presets p WHERE `+visibleTo+` AND p.name = ?2
ORDER BY p.owner_id = ?1 DESC, p.id LIMIT 50`, viewer, ref)
	if err != nil {
		return Preset{}, fmt.Errorf("db: unable to find preset %q: %w", ref, err)
	}
	var own, team []int64
	for rows.Next() {
		var id int64
		var mine bool
		if err := rows.Scan(&id, &mine); err != nil {
			rows.Close()
			return Preset{}, fmt.Errorf("db: unable to find preset %q: %w", ref, err)
		}
		if mine {
			own = append(own, id)
		} else {
			team = append(team, id)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return Preset{}, fmt.Errorf("db: unable to find preset %q: %w", ref, err)
	}
	ids := own
	if len(ids) == 0 {
		ids = team
	}
	switch len(ids) {
	case 0:
		return Preset{}, ErrNotFound
	case 1:
		return s.Preset(ctx, viewer, ids[0])
	}
	return Preset{}, &AmbiguousError{Name: ref, IDs: ids}
}

// PresetAt loads the version of a preset viewer sees that label or
// version names: version when not 0, else label when not "", else the
// production label when the preset has one, else its latest version. It
// answers the label that chose the version ("" when none did);
// ErrNotFound for an unknown label or version.
func (s *Store) PresetAt(ctx context.Context, viewer int64, p Preset, label string, version int) (PresetVersion, string, error) {
	if version != 0 {
		label = ""
	} else {
		ls, err := s.PresetLabels(ctx, viewer, p.ID)
		if err != nil {
			return PresetVersion{}, "", err
		}
		want, found := label, false
		if want == "" {
			want = LabelProduction
		}
		for _, l := range ls {
			if l.Name == want {
				version, found = l.Version, true
			}
		}
		switch {
		case !found && label != "":
			return PresetVersion{}, "", ErrNotFound
		case !found:
			version, want = p.Version, ""
		}
		label = want
	}
	v, err := s.PresetVersion(ctx, viewer, p.ID, version)
	return v, label, err
}
