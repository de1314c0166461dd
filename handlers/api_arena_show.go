package handlers

import (
	"context"
	"errors"

	"knobs/db"
)

// ArenaInput names an arena in a path.
type ArenaInput struct {
	ID int64 `path:"id" minimum:"1" doc:"The arena's id."`
}

// apiArena loads an arena; every member of the team sees it.
func (h *Handler) apiArena(ctx context.Context, id int64) (db.Arena, error) {
	a, err := h.store.Arena(ctx, id)
	if errors.Is(err, db.ErrNotFound) {
		return db.Arena{}, apiNotFound("arena")
	}
	return a, err
}

// ShowAPIArena answers an arena: its link, whether its answers are made,
// its votes and spend.
func (h *Handler) ShowAPIArena(ctx context.Context, in *ArenaInput) (*ArenaOutput, error) {
	a, err := h.apiArena(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	d, err := h.arenaDetail(ctx, a)
	if err != nil {
		return nil, err
	}
	return &ArenaOutput{Body: d}, nil
}

// ListArenasInput is GET /api/v1/arenas.
type ListArenasInput struct {
	PageQuery
}

// ListArenasOutput is the answer to GET /api/v1/arenas.
type ListArenasOutput struct {
	Body Page[ArenaDetail]
}

// ListAPIArenas lists the team's arenas, newest first.
func (h *Handler) ListAPIArenas(ctx context.Context, in *ListArenasInput) (*ListArenasOutput, error) {
	before, err := in.before()
	if err != nil {
		return nil, err
	}
	as, err := h.store.Arenas(ctx, before, in.Limit+1)
	if err != nil {
		return nil, err
	}
	details := map[int64]ArenaDetail{}
	for i, x := range as {
		if i == in.Limit {
			break
		}
		if details[x.ID], err = h.arenaDetail(ctx, x); err != nil {
			return nil, err
		}
	}
	page := pageOf(in.PageQuery, as, func(a db.Arena) int64 { return a.ID }, func(a db.Arena) ArenaDetail { return details[a.ID] })
	return &ListArenasOutput{Body: page}, nil
}

// RevokeAPIArena ends an arena's voting link at once; its votes stay.
func (h *Handler) RevokeAPIArena(ctx context.Context, in *ArenaInput) (*ArenaOutput, error) {
	u := apiUser(ctx)
	a, err := h.apiArena(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	if a.OwnerID != u.ID && !u.IsAdmin() {
		return nil, &Problem{Status: 403, Message: "Only the arena's owner or an admin revokes its link."}
	}
	if err := h.store.RevokeArena(ctx, u.ID, u.IsAdmin(), a.ID); err != nil && !errors.Is(err, db.ErrNotFound) {
		return nil, err
	}
	return h.ShowAPIArena(ctx, in)
}
