// Package views holds Knobs' templ components: the layout, one file per
// page, and partials. Pages take typed view models and never touch the
// database.
package views

// Page is what the layout needs on every page.
type Page struct {
	Title string
	Nav   string // the navigation entry to mark current: "playground", "compare", ...
	CSRF  string
	User  *User // nil on the sign-in and sign-up pages
	Flash string
}

// User is the signed-in user as the layout shows them.
type User struct {
	Name    string
	IsAdmin bool
}

// navItem is one entry of the top navigation.
type navItem struct {
	Key, Label, Href string
}

var navItems = []navItem{
	{"playground", "Playground", "/"},
	{"compare", "Compare", "/compare"},
	{"presets", "Presets", "/presets"},
	{"datasets", "Datasets", "/datasets"},
	{"history", "History", "/history"},
	{"experiments", "Experiments", "/experiments"},
	{"arenas", "Arenas", "/arenas"},
	{"usage", "Usage", "/usage"},
	{"settings", "Settings", "/settings"},
}
