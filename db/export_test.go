package db

import (
	"context"
	"database/sql"
	"net/url"
)

// MigrateTo leaves the file at path at schema version v, as an older
// Knobs would have left it.
func MigrateTo(ctx context.Context, path string, v int) error {
	w, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_txlock=immediate")
	if err != nil {
		return err
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	return (&Store{w: w}).migrateTo(ctx, v)
}

// FTSQuery exposes the search sanitiser to tests.
var FTSQuery = ftsQuery
