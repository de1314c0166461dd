package db

import (
	"errors"
	"strings"
	"syscall"
)

// SQLite's primary result codes that mean the disk (or the cap set by
// LimitGrowth) has no room; modernc's errors carry them, possibly as
// extended codes whose low byte is the primary one.
const (
	sqliteIOErr = 10
	sqliteFull  = 13
)

// IsFull reports whether err means the database could not grow because
// its storage is full: SQLITE_FULL, or an I/O error from ENOSPC, whose
// errno SQLite reports only in the message's text.
func IsFull(err error) bool {
	if errors.Is(err, syscall.ENOSPC) {
		return true
	}
	var coded interface{ Code() int }
	if !errors.As(err, &coded) {
		return false
	}
	switch coded.Code() & 0xff {
	case sqliteFull:
		return true
	case sqliteIOErr:
		return strings.Contains(strings.ToLower(err.Error()), "no space left on device")
	}
	return false
}
