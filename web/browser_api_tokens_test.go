package web_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// A user makes a token in Settings, sees it once and copies it, a script
// uses it, and once revoked in the page it is refused.
func TestBrowserAPITokenMadeInSettingsUsedAndRevoked(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	grantClipboard(t, ctx, s.url)

	err := chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/settings"),
		chromedp.WaitVisible(chromedp.CSS("#token-name")),
		chromedp.SendKeys(chromedp.CSS("#token-name"), "nightly CI"),
		chromedp.SetValue(chromedp.CSS("#token-scope"), "write"),
		chromedp.SetValue(chromedp.CSS("#token-days"), "30"),
		chromedp.Click(chromedp.CSS(`form[action="/settings/tokens"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#new-token")),
	)
	if err != nil {
		t.Fatalf("making a token in Settings: %v", err)
	}
	token := evalString(t, ctx, `document.querySelector("#new-token").value`)
	if !strings.HasPrefix(token, "knobs_") {
		t.Fatalf("the page shows %q as the new token", token)
	}
	row := evalString(t, ctx, `document.querySelector("#tokens tbody tr").innerText`)
	for _, want := range []string{"nightly CI", "write", token[:12], "never"} {
		if !strings.Contains(row, want) {
			t.Errorf("the token's row %q lacks %q", row, want)
		}
	}
	screenshot(t, ctx, "settings-api-token.png")

	// Copy puts it on the clipboard.
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("#new-token + button[data-copy]")),
		chromedp.Poll[chromedp.Void](`document.querySelector("#new-token + button[data-copy]").textContent === "Copied"`, chromedp.WithPollingInterval(20*time.Millisecond)),
	)
	if err != nil {
		t.Fatalf("copying the token: %v", err)
	}
	if got := readClipboard(t, ctx); got != token {
		t.Errorf("Copy put %q on the clipboard, want the token", got)
	}

	// Shown once: the page opened again lists it by its prefix only.
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/settings"), chromedp.WaitVisible(chromedp.CSS("#tokens"))); err != nil {
		t.Fatal(err)
	}
	if html := evalString(t, ctx, `document.documentElement.outerHTML`); strings.Contains(html, token[12:]) {
		t.Errorf("the settings page shows the token again")
	}

	// A script uses it.
	if a := s.apiCall(t, "GET", "/api/v1/tokens", token, nil); a.status != http.StatusOK || !strings.Contains(a.body, "nightly CI") {
		t.Fatalf("the token from Settings: %d %s", a.status, a.body)
	}

	// Revoked in the page: refused.
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#tokens button[aria-label="Revoke nightly CI"]`)),
		chromedp.WaitVisible(chromedp.CSS("#no-tokens")),
	)
	if err != nil {
		t.Fatalf("revoking the token in Settings: %v", err)
	}
	if text := evalString(t, ctx, `document.body.innerText`); !strings.Contains(text, "Revoked the API token") {
		t.Errorf("after Revoke the page does not say so: %.300s", text)
	}
	a := s.apiCall(t, "GET", "/api/v1/tokens", token, nil)
	wantAPIError(t, "the revoked token", a, http.StatusUnauthorized)
}
