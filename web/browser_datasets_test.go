package web_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

func TestBrowserDatasetUploadGridEditAndVersion(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	file := filepath.Join(t.TempDir(), "capitals.csv")
	if err := os.WriteFile(file, []byte("country,expected,tags\nFrance,Paris,eu\nJapan,Tokyo,asia\nPeru,Lima,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/datasets"),
		chromedp.Click(chromedp.CSS(`a[href="/datasets/new"]`)),
		chromedp.WaitVisible(chromedp.CSS("#d-name")),
		chromedp.SendKeys(chromedp.CSS("#d-name"), "Capitals"),
		chromedp.SetUploadFiles(chromedp.CSS("#d-file"), []string{file}),
		chromedp.Submit(chromedp.CSS("#d-name")),
		chromedp.WaitVisible(chromedp.CSS("table.dataset-grid")),
	)
	if err != nil {
		t.Fatalf("uploading: %v", err)
	}
	page, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Capitals", "v1", "3 rows", "country", "expected", "Created the dataset Capitals with 3 rows."} {
		// Headings may be shown in capitals.
		if !strings.Contains(strings.ToLower(page), strings.ToLower(want)) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if v, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`textarea[aria-label="country of row 3"]`))); err != nil || v != "Peru" {
		t.Errorf("row 3's country: %q (%v)", v, err)
	}
	cell := `textarea[aria-label="expected of row 2"]`
	val, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(cell)))
	if err != nil || val != "Tokyo" {
		t.Fatalf("row 2's expected: %q (%v)", val, err)
	}
	// Edit the cell in place and save its row.
	err = chromedp.Do(ctx,
		chromedp.Clear(chromedp.CSS(cell)),
		chromedp.SendKeys(chromedp.CSS(cell), "Tōkyō"),
		chromedp.Click(chromedp.CSS(`tr[data-key]:nth-child(2) button`)),
		chromedp.WaitVisible(chromedp.CSS(".dataset-versions tr:nth-child(2)")),
	)
	if err != nil {
		t.Fatalf("editing a cell: %v", err)
	}
	flash, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".flash")))
	if err != nil || !strings.Contains(flash, "saved as version 2") {
		t.Errorf("flash: %q (%v)", flash, err)
	}
	val, err = chromedp.Run(ctx, chromedp.Value(chromedp.CSS(cell)))
	if err != nil || val != "Tōkyō" {
		t.Errorf("after saving, row 2's expected is %q (%v)", val, err)
	}
	versions, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".dataset-versions")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(versions, "v2") || !strings.Contains(versions, "Changed a row") || !strings.Contains(versions, "ada") {
		t.Errorf("versions: %q", versions)
	}
	screenshot(t, ctx, "datasets.png")
	// Version 1 reads as it was, read-only.
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`.dataset-versions a`)),
		chromedp.WaitVisible(chromedp.CSS("#latest-version")),
	)
	if err != nil {
		t.Fatalf("opening version 1: %v", err)
	}
	old, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("table.dataset-grid")))
	if err != nil || !strings.Contains(old, "Tokyo") || strings.Contains(old, "Tōkyō") {
		t.Errorf("version 1: %q (%v)", old, err)
	}
}
