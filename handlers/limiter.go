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

// Reserve counts an attempt against every key before it is checked, so
// that parallel attempts cannot all pass a check made before any of them
// failed. It fails, with the wait until the oldest counted attempt leaves
// the window, when any key has used up its attempts; then nothing is
// counted. An attempt that succeeds is taken back with Release.
func (l *Limiter) Reserve(keys ...string) (ok bool, wait time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		if f := l.prune(k); len(f) >= l.max {
			return false, f[0].Add(l.window).Sub(l.now())
		}
	}
	now := l.now()
	for _, k := range keys {
		l.fails[k] = append(l.fails[k], now)
	}
	l.bound()
	return true, 0
}

// Release takes back one reserved attempt of each key.
func (l *Limiter) Release(keys ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		if f := l.fails[k]; len(f) > 0 {
			l.fails[k] = f[:len(f)-1]
			if len(f) == 1 {
				delete(l.fails, k)
			}
		}
	}
}

// bound keeps memory bounded under a flood of distinct keys; the caller
// holds l.mu.
func (l *Limiter) bound() {
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
