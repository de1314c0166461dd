package handlers

import (
	"sync"
	"time"
)

const loginWindow = 15 * time.Minute

// Limiter counts failures per key (an account, a client address) in a
// sliding window. It lives in memory: one Knobs process serves a team, and
// a restart forgetting failed sign-ins is acceptable.
type Limiter struct {
	mu     sync.Mutex
	max    int
	window time.Duration
	fails  map[string][]time.Time
	now    func() time.Time
}

// NewLimiter allows max failures per key within window.
func NewLimiter(max int, window time.Duration) *Limiter {
	return &Limiter{max: max, window: window, fails: map[string][]time.Time{}, now: time.Now}
}

// Blocked reports whether key has used up its failures, and when the
// oldest of them leaves the window.
func (l *Limiter) Blocked(key string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.prune(key)
	if len(f) < l.max {
		return false, 0
	}
	return true, f[0].Add(l.window).Sub(l.now())
}

// Fail records a failure for each key.
func (l *Limiter) Fail(keys ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		l.fails[k] = append(l.prune(k), l.now())
	}
	// Keep memory bounded under a flood of distinct keys.
	if len(l.fails) > 100_000 {
		for k := range l.fails {
			if len(l.prune(k)) == 0 {
				delete(l.fails, k)
			}
		}
	}
}

// Reset forgets key's failures.
func (l *Limiter) Reset(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.fails, key)
}

func (l *Limiter) prune(key string) []time.Time {
	f := l.fails[key]
	cut := l.now().Add(-l.window)
	i := 0
	for i < len(f) && !f[i].After(cut) {
		i++
	}
	f = f[i:]
	if len(f) == 0 {
		delete(l.fails, key)
		return nil
	}
	l.fails[key] = f
	return f
}
