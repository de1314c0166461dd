package db_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"knobs/db"
)

// A listing's price is kept with the date Knobs first read it: the same
// price read again keeps that date, a new one gets its own, and an
// admin's price of the same model is never touched.
func TestListedPricesKeepTheirDate(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	first := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	admin := db.ModelPrice{Provider: "cerebras", Model: "gpt-oss-120b", Input: 9, Output: 9, CachedInput: 9, Reasoning: 9, SetAt: first}
	if err := s.SetModelPrice(ctx, admin); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ListedPrice(ctx, "cerebras", "gpt-oss-120b"); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("a price never listed: err %v, want ErrNotFound", err)
	}
	keep := func(at time.Time, input float64) {
		t.Helper()
		err := s.KeepListedPrices(ctx, []db.ListedPrice{
			{Provider: "cerebras", Model: "gpt-oss-120b", Input: input, Output: 0.75, Reasoning: 2, ReadAt: at},
			{Provider: "cerebras", Model: "other", Input: 1, Output: 1, ReadAt: at},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	keep(first, 0.35)
	keep(first.Add(time.Hour), 0.35) // the same price, read again
	got, err := s.ListedPrice(ctx, "cerebras", "gpt-oss-120b")
	if err != nil || got.Input != 0.35 || got.Output != 0.75 || got.CachedInput != 0 || got.Reasoning != 2 || !got.ReadAt.Equal(first) {
		t.Fatalf("listed price read twice: %+v, %v; want $0.35/$0.75, reasoning $2, read at %v", got, err, first)
	}
	changed := first.Add(48 * time.Hour)
	keep(changed, 0.4)
	all, err := s.ListedPrices(ctx)
	if err != nil || len(all) != 2 || all[0].Model != "gpt-oss-120b" || all[0].Input != 0.4 || !all[0].ReadAt.Equal(changed) ||
		all[1].Model != "other" || !all[1].ReadAt.Equal(first) {
		t.Fatalf("after the price changed: %+v, %v", all, err)
	}
	mp, err := s.ModelPrice(ctx, "cerebras", "gpt-oss-120b")
	if err != nil || mp.Input != 9 || !mp.SetAt.Equal(first) {
		t.Fatalf("the admin's price after listings were kept: %+v, %v", mp, err)
	}
}
