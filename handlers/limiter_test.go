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
		if ok, _ := l.Reserve("user:a", "addr:1"); !ok {
			t.Fatalf("refused after %d failures, limit 3", i)
		}
		now = now.Add(time.Minute)
	}
	ok, wait := l.Reserve("user:a")
	if ok || wait != 12*time.Minute {
		t.Errorf("after 3 failures: ok %v, wait %v; want refused for 12m (the oldest leaves the window)", ok, wait)
	}
	if ok, _ := l.Reserve("addr:1"); ok {
		t.Errorf("the address is not limited")
	}
	if ok, _ := l.Reserve("user:b"); !ok {
		t.Errorf("another key is limited")
	}
	// A refused attempt on one key counts on none.
	if ok, _ := l.Reserve("user:c", "addr:1"); ok {
		t.Errorf("an attempt from a limited address went through")
	}
	if ok, _ := l.Reserve("user:c"); !ok {
		t.Errorf("a refused attempt was counted against user:c")
	}

	// The oldest failure leaves the window: one more try.
	now = now.Add(12 * time.Minute)
	if ok, _ := l.Reserve("user:a"); !ok {
		t.Errorf("still refused after the oldest failure left the window")
	}
	if ok, _ := l.Reserve("user:a"); ok {
		t.Errorf("not refused again after a new failure")
	}

	// A success takes its attempt back.
	l.Reset("user:a")
	for range 5 {
		if ok, _ := l.Reserve("user:a"); !ok {
			t.Fatalf("refused although every attempt succeeded")
		}
		l.Release("user:a")
	}
	// The address kept its two failures still in the window.
	if ok, _ := l.Reserve("addr:1"); !ok {
		t.Errorf("the address is refused with two failures in the window")
	}
	if ok, _ := l.Reserve("addr:1"); ok {
		t.Errorf("Reset of the account cleared the address")
	}
}
