package db

import "testing"

// A lookup that read the database before a sign-out was committed must
// not put the ended session back after the cache was cleared.
func TestSessionCacheDropsEntriesReadBeforeAClear(t *testing.T) {
	var c sessionCache
	_, gen, ok := c.get("k")
	if ok {
		t.Fatal("an empty cache has an entry")
	}
	c.clear() // the sign-out commits while the lookup reads
	c.put("k", cachedSession{user: User{ID: 7}}, gen)
	if _, _, ok := c.get("k"); ok {
		t.Error("an entry read before the clear was kept")
	}
	_, gen, _ = c.get("k")
	c.put("k", cachedSession{user: User{ID: 7}}, gen)
	if e, _, ok := c.get("k"); !ok || e.user.ID != 7 {
		t.Error("a fresh entry was not kept")
	}
	for i := range sessionCacheMax + 1 {
		c.put(string(rune(i)), cachedSession{}, gen)
	}
	if n := len(c.entries); n > sessionCacheMax {
		t.Errorf("the cache grew to %d entries, past %d", n, sessionCacheMax)
	}
}
