package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserSSOSignInLandsOnPlayground clicks "Sign in with …" on the
// sign-in page, goes through the provider, which signs the queued user in
// at once, and lands on the playground, signed in to a new account.
func TestBrowserSSOSignInLandsOnPlayground(t *testing.T) {
	srv, d, front := ssoServer(t, "KNOBS_OIDC_ALLOWED_DOMAINS", "example.com")
	newTeamAdmin(t, srv)
	ctx := newBrowser(t)
	d.queue("sub-grace", "grace@example.com", true)

	err := chromedp.Do(ctx,
		chromedp.Navigate(front.srv.URL+"/login"),
		chromedp.WaitVisible(chromedp.CSS("#sso-start")),
	)
	if err != nil {
		t.Fatalf("opening the sign-in page: %v", err)
	}
	screenshot(t, ctx, "sso-login.png")
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("#sso-start")),
		chromedp.WaitVisible(chromedp.CSS("#playground")),
		chromedp.Poll[chromedp.Void](`document.getElementById("playground").dataset.ready && !document.getElementById("playground").dataset.busy`, chromedp.WithPollingInterval(20*time.Millisecond)),
	)
	if err != nil {
		t.Fatalf("signing in through the provider: %v", err)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if loc != front.srv.URL+"/" {
		t.Errorf("after single sign-on the browser is at %s, want the playground %s/", loc, front.srv.URL)
	}
	name, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".usermenu .username")))
	if err != nil {
		t.Fatal(err)
	}
	if name != "grace" {
		t.Errorf("the user menu shows %q, want grace", name)
	}
	flash, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("main")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(flash, "Welcome to Knobs, grace.") {
		t.Errorf("the playground does not welcome grace")
	}
	if u, err := srv.identityUser(t, d, "sub-grace"); err != nil || u.Username != "grace" {
		t.Errorf("the identity signs in to %+v (%v), want grace", u, err)
	}
	screenshot(t, ctx, "sso-playground.png")
}
