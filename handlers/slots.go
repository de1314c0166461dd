package handlers

import "sync"

// slots counts the streams open per key (a user, a link, an address), so
// that long downloads and replays have a bound per key. It is safe for
// concurrent use.
type slots struct {
	mu   sync.Mutex
	used map[string]int
}

func newSlots() *slots { return &slots{used: map[string]int{}} }

// slot is one key and how many streams it may have open.
type slot struct {
	key   string
	limit int
}

// take opens a stream on every one of want, or on none: it returns the
// index of the first slot that is full, or -1 when all were taken.
func (s *slots) take(want ...slot) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, w := range want {
		if s.used[w.key] >= w.limit {
			return i
		}
	}
	for _, w := range want {
		s.used[w.key]++
	}
	return -1
}

// give closes a stream on each of keys.
func (s *slots) give(keys ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		if s.used[k]--; s.used[k] <= 0 {
			delete(s.used, k) // keeps the map as small as what is open
		}
	}
}
