package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrDatasetStale is returned by EditDataset when another version was
// saved after the one the edit was made on.
var ErrDatasetStale = errors.New("db: the dataset was changed since it was loaded")

// Dataset is a named table of rows that experiments run presets over.
type Dataset struct {
	ID          int64
	OwnerID     int64
	OwnerName   string // loaded, never written
	Name        string
	Description string
	Visibility  string // PresetPrivate or PresetTeam: the same rules as presets
	Version     int    // the latest version
	Columns     []string
	Rows        int // in the latest version
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// DatasetRow is one row of a dataset: a value per variable, an optional
// reference answer and tags. Key is the row's identity across its edits;
// ID names this content of it.
type DatasetRow struct {
	ID       int64
	Key      int64
	Vars     map[string]string
	Expected *string
	Tags     []string
}

// DatasetVersion is a dataset as one save left it.
type DatasetVersion struct {
	Version int
	Columns []string
	Rows    int
	Note    string
	SavedAt time.Time
	SavedBy string // username; "" once that account is removed
}

// DatasetEdit is a change to a dataset, saved as its next version over
// Base: rows added at the end, rows changed (by key) and rows removed (by
// key), and the columns the version has.
type DatasetEdit struct {
	Base    int
	Add     []DatasetRow
	Change  []DatasetRow // by Key
	Remove  []int64      // keys
	Columns []string     // nil: unchanged
	Note    string
}

const datasetColumns = `d.id, d.owner_id, u.username, d.name, d.description, d.visibility, d.version, v.columns, v.row_count,
	d.created_at, d.updated_at`

const datasetFrom = ` FROM datasets d JOIN users u ON u.id = d.owner_id
JOIN dataset_versions v ON v.dataset_id = d.id AND v.version = d.version`

// datasetVisible is the condition for datasets (as d) that user ?1 sees.
const datasetVisible = `(d.owner_id = ?1 OR d.visibility = 'team')`

func scanDataset(row interface{ Scan(...any) error }) (Dataset, error) {
	var d Dataset
	var cols string
	var created, updated int64
	err := row.Scan(&d.ID, &d.OwnerID, &d.OwnerName, &d.Name, &d.Description, &d.Visibility, &d.Version, &cols, &d.Rows,
		&created, &updated)
	_ = json.Unmarshal([]byte(cols), &d.Columns) // written by this file
	d.CreatedAt, d.UpdatedAt = time.UnixMilli(created), time.UnixMilli(updated)
	return d, err
}

func loadDataset(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, viewer, id int64) (Dataset, error) {
	d, err := scanDataset(q.QueryRowContext(ctx, `SELECT `+datasetColumns+datasetFrom+` WHERE d.id = ?2 AND `+datasetVisible, viewer, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Dataset{}, ErrNotFound
	}
	return d, err
}

// insertRows adds rows to dataset id as of version, at positions from
// pos on. A row with a Key keeps it (a change); a new row's key is its
// id.
func insertRows(ctx context.Context, tx *sql.Tx, id int64, version int, pos int64, rows []DatasetRow) error {
	stmt, err := tx.PrepareContext(ctx, `
INSERT INTO dataset_rows (dataset_id, key, pos, vars, expected, tags, added_in) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for i, r := range rows {
		vars := r.Vars
		if vars == nil {
			vars = map[string]string{}
		}
		vj, err := json.Marshal(vars)
		if err != nil {
			return err
		}
		var rowID int64
		if err := stmt.QueryRowContext(ctx, id, r.Key, pos+int64(i), string(vj), r.Expected, strings.Join(r.Tags, ","), version).Scan(&rowID); err != nil {
			return err
		}
		if r.Key == 0 {
			if _, err := tx.ExecContext(ctx, `UPDATE dataset_rows SET key = id WHERE id = ?`, rowID); err != nil {
				return err
			}
		}
	}
	return nil
}

func insertDatasetVersion(ctx context.Context, tx *sql.Tx, id int64, version int, cols []string, rows int, note string, by int64, at time.Time) error {
	if cols == nil {
		cols = []string{}
	}
	cj, err := json.Marshal(cols)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `
INSERT INTO dataset_versions (dataset_id, version, columns, row_count, note, saved_at, saved_by) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		id, version, string(cj), rows, note, at.UnixMilli(), by)
	return err
}

// CreateDataset saves a new dataset of d.OwnerID with rows, as version 1,
// all at once or not at all. The caller has checked the names and rows.
func (s *Store) CreateDataset(ctx context.Context, d Dataset, rows []DatasetRow) (Dataset, error) {
	if d.Visibility == "" {
		d.Visibility = PresetPrivate
	}
	now := time.Now()
	var out Dataset
	err := s.tx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `
INSERT INTO datasets (owner_id, name, description, visibility, version, created_at, updated_at) VALUES (?, ?, ?, ?, 1, ?, ?) RETURNING id`,
			d.OwnerID, d.Name, d.Description, d.Visibility, now.UnixMilli(), now.UnixMilli()).Scan(&d.ID)
		if err != nil {
			return err
		}
		for i := range rows {
			rows[i].Key = 0
		}
		if err := insertRows(ctx, tx, d.ID, 1, 1, rows); err != nil {
			return err
		}
		if err := insertDatasetVersion(ctx, tx, d.ID, 1, d.Columns, len(rows), "", d.OwnerID, now); err != nil {
			return err
		}
		out, err = loadDataset(ctx, tx, d.OwnerID, d.ID)
		return err
	})
	if err != nil {
		return Dataset{}, fmt.Errorf("db: unable to create dataset: %w", err)
	}
	return out, nil
}

// Dataset loads a dataset viewer sees: their own or a team one.
func (s *Store) Dataset(ctx context.Context, viewer, id int64) (Dataset, error) {
	d, err := loadDataset(ctx, s.r, viewer, id)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Dataset{}, fmt.Errorf("db: unable to load dataset %d: %w", id, err)
	}
	return d, err
}

// Datasets lists the datasets viewer sees, newest first.
func (s *Store) Datasets(ctx context.Context, viewer int64) ([]Dataset, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+datasetColumns+datasetFrom+` WHERE `+datasetVisible+` ORDER BY d.id DESC`, viewer)
	if err != nil {
		return nil, fmt.Errorf("db: unable to list datasets: %w", err)
	}
	defer rows.Close()
	var out []Dataset
	for rows.Next() {
		d, err := scanDataset(rows)
		if err != nil {
			return nil, fmt.Errorf("db: unable to list datasets: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// liveAt is the condition for rows (as r) of version ?v.
const liveAt = `r.added_in <= :v AND (r.removed_in IS NULL OR r.removed_in > :v)`

// DatasetRows reads the rows of a version of a dataset viewer sees, in
// order, at most limit of them after the offset first ones. An unknown
// version is ErrNotFound.
func (s *Store) DatasetRows(ctx context.Context, viewer, id int64, version, offset, limit int) ([]DatasetRow, error) {
	if _, err := s.DatasetVersion(ctx, viewer, id, version); err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT r.id, r.key, r.vars, r.expected, r.tags FROM dataset_rows r
WHERE r.dataset_id = :id AND `+liveAt+` ORDER BY r.pos LIMIT :limit OFFSET :offset`,
		sql.Named("id", id), sql.Named("v", version), sql.Named("limit", limit), sql.Named("offset", offset))
	if err != nil {
		return nil, fmt.Errorf("db: unable to read the rows of dataset %d: %w", id, err)
	}
	defer rows.Close()
	out := []DatasetRow{}
	for rows.Next() {
		var r DatasetRow
		var vars, tags string
		var expected sql.NullString
		if err := rows.Scan(&r.ID, &r.Key, &vars, &expected, &tags); err != nil {
			return nil, fmt.Errorf("db: unable to read the rows of dataset %d: %w", id, err)
		}
		_ = json.Unmarshal([]byte(vars), &r.Vars)
		if expected.Valid {
			r.Expected = &expected.String
		}
		r.Tags = splitTags(tags)
		out = append(out, r)
	}
	return out, rows.Err()
}

// DatasetVersion loads one version of a dataset viewer sees.
func (s *Store) DatasetVersion(ctx context.Context, viewer, id int64, version int) (DatasetVersion, error) {
	if _, err := s.Dataset(ctx, viewer, id); err != nil {
		return DatasetVersion{}, err
	}
	vs, err := s.datasetVersions(ctx, id, `AND v.version = ?`, version)
	if err != nil {
		return DatasetVersion{}, err
	}
	if len(vs) == 0 {
		return DatasetVersion{}, ErrNotFound
	}
	return vs[0], nil
}

// DatasetVersions lists the versions of a dataset viewer sees, newest
// first.
func (s *Store) DatasetVersions(ctx context.Context, viewer, id int64) ([]DatasetVersion, error) {
	if _, err := s.Dataset(ctx, viewer, id); err != nil {
		return nil, err
	}
	return s.datasetVersions(ctx, id, "")
}

func (s *Store) datasetVersions(ctx context.Context, id int64, where string, args ...any) ([]DatasetVersion, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT v.version, v.columns, v.row_count, v.note, v.saved_at, ifnull(u.username, '')
FROM dataset_versions v LEFT JOIN users u ON u.id = v.saved_by WHERE v.dataset_id = ? `+where+` ORDER BY v.version DESC`,
		append([]any{id}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("db: unable to list the versions of dataset %d: %w", id, err)
	}
	defer rows.Close()
	var out []DatasetVersion
	for rows.Next() {
		var v DatasetVersion
		var cols string
		var at int64
		if err := rows.Scan(&v.Version, &cols, &v.Rows, &v.Note, &at, &v.SavedBy); err != nil {
			return nil, fmt.Errorf("db: unable to list the versions of dataset %d: %w", id, err)
		}
		_ = json.Unmarshal([]byte(cols), &v.Columns)
		v.SavedAt = time.UnixMilli(at)
		out = append(out, v)
	}
	return out, rows.Err()
}

// EditDataset saves an edit of a dataset its owner or an admin makes
// (ErrForbidden for another member of a team dataset, ErrNotFound for
// one they do not see) as its next version, unless another was saved
// after e.Base (ErrDatasetStale). A key the version does not have is
// ErrNotFound, and nothing changes.
func (s *Store) EditDataset(ctx context.Context, editor int64, isAdmin bool, id int64, e DatasetEdit) (Dataset, error) {
	var out Dataset
	err := s.tx(ctx, func(tx *sql.Tx) error {
		cur, err := loadDataset(ctx, tx, editor, id)
		if err != nil {
			return err
		}
		if cur.OwnerID != editor && !isAdmin {
			return ErrForbidden
		}
		if e.Base != cur.Version {
			return ErrDatasetStale
		}
		next := cur.Version + 1
		end := func(key int64) error {
			res, err := tx.ExecContext(ctx, `UPDATE dataset_rows AS r SET removed_in = :next
WHERE r.dataset_id = :id AND r.key = :key AND `+liveAt, sql.Named("next", next), sql.Named("id", id), sql.Named("key", key),
				sql.Named("v", cur.Version))
			if err != nil {
				return err
			}
			return affectedOne(res)
		}
		for _, key := range e.Remove {
			if err := end(key); err != nil {
				return err
			}
		}
		for _, r := range e.Change {
			var pos int64
			err := tx.QueryRowContext(ctx, `SELECT r.pos FROM dataset_rows r WHERE r.dataset_id = :id AND r.key = :key AND `+liveAt,
				sql.Named("id", id), sql.Named("key", r.Key), sql.Named("v", cur.Version)).Scan(&pos)
			if errors.Is(err, sql.ErrNoRows) {
				return ErrNotFound
			} else if err != nil {
				return err
			}
			if err := end(r.Key); err != nil {
				return err
			}
			if err := insertRows(ctx, tx, id, next, pos, []DatasetRow{r}); err != nil {
				return err
			}
		}
		var last int64
		if err := tx.QueryRowContext(ctx, `SELECT ifnull(max(pos), 0) FROM dataset_rows WHERE dataset_id = ?`, id).Scan(&last); err != nil {
			return err
		}
		add := make([]DatasetRow, len(e.Add))
		for i, r := range e.Add {
			r.Key = 0
			add[i] = r
		}
		if err := insertRows(ctx, tx, id, next, last+1, add); err != nil {
			return err
		}
		var count int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM dataset_rows r WHERE r.dataset_id = :id AND `+liveAt,
			sql.Named("id", id), sql.Named("v", next)).Scan(&count); err != nil {
			return err
		}
		cols := e.Columns
		if cols == nil {
			cols = cur.Columns
		}
		now := time.Now()
		if err := insertDatasetVersion(ctx, tx, id, next, cols, count, e.Note, editor, now); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE datasets SET version = ?, updated_at = ? WHERE id = ?`, next, now.UnixMilli(), id); err != nil {
			return err
		}
		out, err = loadDataset(ctx, tx, editor, id)
		return err
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) || errors.Is(err, ErrForbidden) || errors.Is(err, ErrDatasetStale) {
			return Dataset{}, err
		}
		return Dataset{}, fmt.Errorf("db: unable to edit dataset %d: %w", id, err)
	}
	return out, nil
}

// RemoveDataset deletes a dataset with its rows and versions, by the
// rules of EditDataset.
func (s *Store) RemoveDataset(ctx context.Context, editor int64, isAdmin bool, id int64) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		cur, err := loadDataset(ctx, tx, editor, id)
		if err != nil {
			return err
		}
		if cur.OwnerID != editor && !isAdmin {
			return ErrForbidden
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM datasets WHERE id = ?`, id)
		return err
	})
	if err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrForbidden) {
		return fmt.Errorf("db: unable to remove dataset %d: %w", id, err)
	}
	return err
}
