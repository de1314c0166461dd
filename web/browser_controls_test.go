package web_test

import (
	"testing"

	"github.com/chromedp/chromedp"
)

func TestBrowserControlsLook(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	if err := chromedp.Do(ctx, choose("sim", "sim-reasoning")); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "look-desktop.png")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1024, 900)); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "look-1024.png")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900), chromedp.Click(chromedp.CSS("#pg-model")), chromedp.Click(chromedp.CSS("#p-temperature"))); err != nil {
		t.Fatal(err)
	}
	v, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement.id + " " + document.querySelector(".model-list").hidden + " " + document.querySelector(".model-list").children.length`))
	t.Log(v)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#pg-model"))); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "look-picker.png")
}
