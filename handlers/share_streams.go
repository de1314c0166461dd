package handlers

import (
	"sync"

	"knobs/web/sse"
)

// shareStreams knows the replays streaming through each share link, so
// that revoking the link cuts them at once instead of letting them play
// to their end. It is safe for concurrent use.
type shareStreams struct {
	mu   sync.Mutex
	byID map[int64]map[*sse.Replay]struct{}
}

func newShareStreams() *shareStreams {
	return &shareStreams{byID: map[int64]map[*sse.Replay]struct{}{}}
}

// add records r as streaming through share id until the returned func is
// called.
func (s *shareStreams) add(id int64, r *sse.Replay) (remove func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byID[id] == nil {
		s.byID[id] = map[*sse.Replay]struct{}{}
	}
	s.byID[id][r] = struct{}{}
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.byID[id], r)
		if len(s.byID[id]) == 0 {
			delete(s.byID, id)
		}
	}
}

// cut ends every replay streaming through share id.
func (s *shareStreams) cut(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for r := range s.byID[id] {
		r.Cut()
	}
}
