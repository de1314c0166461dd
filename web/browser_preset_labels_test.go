package web_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The owner protects a production label, moves it after reading the
// diff, sees it as a chip in the presets list, and opens the preset at it
// in the playground, which names the label.
func TestBrowserPresetLabelsProtectedMovedAndOpened(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	c := s.newClient(t)
	c.mustLogIn("ada")
	id := presetWithVersions(c, "Summariser", "0.2", "0.9", "0.5", "0.7")
	page := fmt.Sprintf("%s/presets/%d", s.url, id)
	poll := func(js string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](js, chromedp.WithPollingInterval(20*time.Millisecond))
	}

	err := chromedp.Do(ctx,
		chromedp.Navigate(page),
		chromedp.WaitVisible(chromedp.CSS("#lb-name")),
		chromedp.SendKeys(chromedp.CSS("#lb-name"), "production"),
		chromedp.SetValue(chromedp.CSS("#lb-version"), "1"),
		chromedp.Click(chromedp.CSS(`form.label-form input[name="protected"]`)),
		chromedp.Click(chromedp.CSS(`form.label-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-label="production"]`)),
	)
	if err != nil {
		t.Fatalf("pointing a protected production label at version 1: %v", err)
	}
	if row := evalString(t, ctx, `document.querySelector('tr[data-label="production"]').innerText`); !strings.Contains(row, "protected") || !strings.Contains(row, "points at v1") {
		t.Errorf("the production row reads %q", row)
	}

	// Moving it to version 3 asks first, with the diff.
	err = chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`tr[data-label="production"] select[name="version"]`), "3"),
		chromedp.Click(chromedp.CSS(`tr[data-label="production"] form[action$="/labels"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(".label-confirm")),
	)
	if err != nil {
		t.Fatalf("moving production: %v", err)
	}
	ask := evalString(t, ctx, `document.querySelector(".label-confirm").innerText`)
	for _, want := range []string{"Move the protected label production from version 1 to version 3?", "body.temperature", "0.2", "0.5"} {
		if !strings.Contains(ask, want) {
			t.Errorf("the confirmation %q lacks %q", ask, want)
		}
	}
	if got := labelsAs(t, s, "ada", id); got["production"] != "1!" {
		t.Fatalf("production moved before the confirmation: %v", got)
	}
	screenshot(t, ctx, "preset-labels.png")
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`.label-confirm button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(".flash")),
	)
	if err != nil {
		t.Fatalf("confirming the move: %v", err)
	}
	if flash := evalString(t, ctx, `document.querySelector(".flash").innerText`); flash != "Moved the label production from version 1 to version 3." {
		t.Errorf("after Confirm the page says %q", flash)
	}
	if got := labelsAs(t, s, "ada", id); got["production"] != "3!" {
		t.Errorf("production after the confirmation: %v", got)
	}

	// The list shows the chip.
	err = chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/presets"),
		chromedp.WaitVisible(chromedp.CSS(".label-chip")),
	)
	if err != nil {
		t.Fatal(err)
	}
	if chip := evalString(t, ctx, `document.querySelector(".label-chip").innerText`); !strings.HasPrefix(strings.Join(strings.Fields(chip), " "), "production v3") {
		t.Errorf("the list's chip reads %q", chip)
	}

	// Opened at production, the playground holds version 3 and says so.
	err = chromedp.Do(ctx,
		chromedp.Navigate(page),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-label="production"]`)),
		chromedp.Click(chromedp.CSS(`tr[data-label="production"] button[aria-label="Open production in the playground"]`)),
		chromedp.WaitVisible(chromedp.CSS("#playground")),
		poll(`document.getElementById("pg-preset-name").textContent === "Summariser · production (v3)"`),
	)
	if err != nil {
		t.Fatalf("opening the preset at production: %v (the playground names %q)", err, evalString(t, ctx, `(document.getElementById("pg-preset-name") || {}).textContent || ""`))
	}
	if temp := evalString(t, ctx, `document.getElementById("p-temperature").value`); temp != "0.5" {
		t.Errorf("the playground's temperature is %q, want version 3's 0.5", temp)
	}
	if modified := evalString(t, ctx, `String(!document.getElementById("pg-preset-dirty").hidden)`); modified != "false" {
		t.Error("the preset opened at production shows as modified")
	}
}
