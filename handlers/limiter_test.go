package handlers

import (
	"testing"
	"time"
)

func TestLimiter(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	l := NewLimiter(3, 15*time.Minute)
	l.now = func() time.Time { return now }

	for i := range 3 {
		if blocked, _ := l.Blocked("user:a"); blocked {
			t.Fatalf("blocked after %d failures, limit 3", i)
		}
		l.Fail("user:a", "addr:1")
		now = now.Add(time.Minute)
	}
	blocked, wait := l.Blocked("user:a")
	if !blocked || wait != 12*time.Minute {
		t.Errorf("after 3 failures: blocked %v, wait %v; want blocked for 12m (the oldest leaves the window)", blocked, wait)
	}
	if blocked, _ := l.Blocked("addr:1"); !blocked {
		t.Errorf("the address is not blocked")
	}
	if blocked, _ := l.Blocked("user:b"); blocked {
		t.Errorf("another key is blocked")
	}

	// The oldest failure leaves the window: one more try.
	now = now.Add(12 * time.Minute)
	if blocked, _ := l.Blocked("user:a"); blocked {
		t.Errorf("still blocked after the oldest failure left the window")
	}
	l.Fail("user:a")
	if blocked, _ := l.Blocked("user:a"); !blocked {
		t.Errorf("not blocked again after a new failure")
	}

	l.Reset("user:a")
	if blocked, _ := l.Blocked("user:a"); blocked {
		t.Errorf("blocked after Reset")
	}
	// The address kept its two failures still in the window.
	l.Fail("addr:1")
	if blocked, _ := l.Blocked("addr:1"); !blocked {
		t.Errorf("Reset of the account cleared the address")
	}
}
