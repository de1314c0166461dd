package handlers

import (
	"encoding/base64"
	"strconv"
	"strings"

	"knobs/field"
)

// PageQuery is how a list of the API is paged: embedded in a list
// operation's input. Lists go newest first, by id.
type PageQuery struct {
	Limit  int    `query:"limit" minimum:"1" maximum:"100" default:"50" doc:"How many items to answer at most."`
	Cursor string `query:"cursor" maxLength:"100" doc:"The next_cursor of the previous page; empty for the first page."`
}

// Page is one page of a list: its items, and the cursor that asks for
// the next page (null on the last).
type Page[T any] struct {
	Items      []T     `json:"items" nullable:"false"`
	NextCursor *string `json:"next_cursor" nullable:"true" doc:"Pass as cursor for the next page; null when this is the last."`
}

// cursorTag starts every cursor, so that a cursor of another kind or a
// made-up one is refused rather than misread.
const cursorTag = "id:"

// before is the id the page continues below (0 for the first page); a
// cursor Knobs did not give out is a field error.
func (q PageQuery) before() (int64, error) {
	if q.Cursor == "" {
		return 0, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(q.Cursor)
	id, perr := strconv.ParseInt(strings.TrimPrefix(string(raw), cursorTag), 10, 64)
	if err != nil || !strings.HasPrefix(string(raw), cursorTag) || perr != nil || id <= 0 {
		return 0, apiInvalid(field.Errors{"cursor": "This is not a cursor Knobs gave out: pass next_cursor from the previous page, or nothing."})
	}
	return id, nil
}

// pageOf makes the page of rows, which were read with one more than
// q.Limit to tell whether another page follows; id is a row's key, item
// what the list shows of it.
func pageOf[R, T any](q PageQuery, rows []R, id func(R) int64, item func(R) T) Page[T] {
	p := Page[T]{Items: make([]T, 0, min(len(rows), q.Limit))}
	for i, r := range rows {
		if i == q.Limit {
			next := base64.RawURLEncoding.EncodeToString([]byte(cursorTag + strconv.FormatInt(id(rows[i-1]), 10)))
			p.NextCursor = &next
			break
		}
		p.Items = append(p.Items, item(r))
	}
	return p
}
