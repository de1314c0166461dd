package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserUsageChartIsReadableOnAPhone: after a run of a priced model
// and one of a model without a price, the usage page shows the priced one's
// bar and legend, the total and the unpriced model with a link to
// price it; on a 390 px phone nothing is wider than the screen and the
// chart's labels stay at least 9 px tall.
func TestBrowserUsageChartIsReadableOnAPhone(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	ada := s.newClient(t)
	ada.mustLogIn("ada")
	tok := ada.makeToken("runs", "write", nil).Token
	s.runAndWait(t, tok, "sim-reasoning", "Count the stars.")
	s.runAndWait(t, tok, "sim-fast", "Name the rivers.")

	type page struct {
		Bars      int      `json:"bars"`
		Legend    []string `json:"legend"`
		Total     string   `json:"total"`
		Unpriced  string   `json:"unpriced"`
		SetLink   string   `json:"setLink"`
		ChartW    float64  `json:"chartW"`
		MinLabelH float64  `json:"minLabelH"`
	}
	read := `(() => {
		const labels = Array.from(document.querySelectorAll(".usage-chart svg[role=img] text")).map(t => t.getBoundingClientRect().height);
		const link = document.querySelector("#unpriced a");
		return {
			bars: document.querySelectorAll(".usage-chart svg[role=img] rect").length,
			legend: Array.from(document.querySelectorAll(".usage-chart .legend li")).map(li => li.textContent.trim()),
			total: document.getElementById("usage-total").textContent,
			unpriced: (document.getElementById("unpriced") || {textContent: ""}).textContent,
			setLink: link ? link.getAttribute("href") : "",
			chartW: document.querySelector(".usage-chart svg[role=img]").getBoundingClientRect().width,
			minLabelH: Math.min(...labels),
		};
	})()`
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/usage?group_by=model"), chromedp.WaitVisible(chromedp.CSS(".usage-chart svg"))); err != nil {
		t.Fatal(err)
	}
	desk, err := chromedp.Run(ctx, chromedp.Evaluate[page](read))
	if err != nil {
		t.Fatal(err)
	}
	if desk.Bars != 1 || strings.Join(desk.Legend, ",") != "sim/sim-reasoning" || !strings.Contains(desk.Total, "over 2 calls") ||
		!strings.Contains(desk.Unpriced, "sim/sim-fast") || !strings.HasPrefix(desk.SetLink, "/usage/prices?") {
		t.Errorf("the usage page shows %+v", desk)
	}
	screenshot(t, ctx, "usage.png")

	if err := chromedp.Do(ctx, chromedp.Action[chromedp.Void](phone), chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(".usage-chart svg"))); err != nil {
		t.Fatal(err)
	}
	noHorizontalOverflow(t, ctx, "the usage page")
	mobile, err := chromedp.Run(ctx, chromedp.Evaluate[page](read))
	if err != nil {
		t.Fatal(err)
	}
	if mobile.ChartW > 390 || mobile.ChartW < 250 || mobile.MinLabelH < 9 {
		t.Errorf("on a phone the chart is %.0f px wide with labels %.1f px tall", mobile.ChartW, mobile.MinLabelH)
	}
	screenshot(t, ctx, "usage-phone.png")

	// The link from the unpriced list opens the form filled for the model.
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+desk.SetLink), chromedp.WaitVisible(chromedp.CSS("#p-model"))); err != nil {
		t.Fatal(err)
	}
	noHorizontalOverflow(t, ctx, "the prices page")
	screenshot(t, ctx, "prices-phone.png")
	model, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS("#p-model")))
	if err != nil || model != "sim-fast" {
		t.Errorf("the price form is for %q (%v)", model, err)
	}
}
