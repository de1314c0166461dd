package handlers

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"knobs/db"
)

// A period with more models than the chart has colours draws, each day,
// a bar per coloured model and one grey bar for the rest together, whose
// cost is theirs summed; the legend names the coloured models and "other
// models".
func TestUsageChartDrawsTheRestAsOneBarADay(t *testing.T) {
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	const dayCount, models = 3, 12
	var days []db.DayModelCost
	for d := range dayCount {
		for m := range models {
			days = append(days, db.DayModelCost{Day: from.AddDate(0, 0, d), Provider: "acme", Model: fmt.Sprintf("m%02d", m),
				UsageFigures: db.UsageFigures{Calls: 1, CostUSD: float64(models-m) / 100}})
		}
	}
	ch := usageChart(from, from.AddDate(0, 0, dayCount-1), days)
	if want := dayCount * (len(chartColours) + 1); len(ch.Bars) != want {
		t.Fatalf("%d bars, want %d: a bar per coloured model and one for the rest, each day", len(ch.Bars), want)
	}
	// m07 to m11 are past the colours: $0.05 + 0.04 + 0.03 + 0.02 + 0.01.
	var grey []string
	for _, b := range ch.Bars {
		if b.Fill == chartOther {
			grey = append(grey, b.Title)
		}
	}
	if len(grey) != dayCount || grey[0] != "2026-11-01 · other models · $0.15" {
		t.Errorf("the grey bars: %q", grey)
	}
	if len(ch.Legend) != len(chartColours)+1 || ch.Legend[0].Name != "acme/m00" || ch.Legend[len(ch.Legend)-1].Name != "other models" {
		t.Errorf("legend: %+v", ch.Legend)
	}
	for _, b := range ch.Bars {
		if strings.Contains(b.Title, "m11") {
			t.Errorf("a model past the colours has a bar of its own: %q", b.Title)
		}
	}
}
