package db

import (
	"sync"
	"time"
)

// sessionCache keeps the user behind each session token seen lately, so
// that a signed-in request costs a map lookup instead of a query. It is
// coherent because one process alone uses the file (see lockFile) and
// every change to sessions or users goes through the Store, which drops
// the cache: whole, since such changes are rare (a sign-out, a role or
// password change, a removal), and an entry left behind would be a
// session that outlived its end.
//
// A lookup that misses reads the database outside the lock; it may then
// race a change. The generation settles it: an entry read before a clear
// is not kept after it.
type sessionCache struct {
	mu      sync.Mutex
	entries map[string]cachedSession // by hashed token
	gen     uint64                   // counts clears
}

type cachedSession struct {
	user User
	seen time.Time // the session's seen_at as stored
}

// sessionCacheMax bounds the cache; past it, it starts again empty.
const sessionCacheMax = 10_000

// get returns the entry for key, and the generation to put a fresh one
// under when there is none.
func (c *sessionCache) get(key string) (cachedSession, uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	return e, c.gen, ok
}

// put keeps e, read from the database in generation gen, unless the
// cache was cleared since.
func (c *sessionCache) put(key string, e cachedSession, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if c.entries == nil || len(c.entries) >= sessionCacheMax {
		c.entries = map[string]cachedSession{}
	}
	c.entries[key] = e
}

// clear forgets every entry; callers clear after their change is
// committed.
func (c *sessionCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = nil
	c.gen++
}
