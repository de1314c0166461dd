package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// A saved comparison's title can be changed by its owner (presenter mode
// edits it in place); bad input changes nothing and another user's
// comparison answers 404.
func TestRenameComparison(t *testing.T) {
	s, admin := newTeam(t)
	_, cmp := admin.postCompare("Glaciers", simPane(1, 10), simPane(2, 10))
	admin.readGroup(cmp.Events, "", nil)
	bob := admin.addMember("bob")
	rename := func(c *client, body string) *response {
		return c.post(fmt.Sprintf("/groups/%d/title", cmp.Group), "application/json", strings.NewReader(body),
			http.Header{"X-Csrf-Token": {c.token()}, "Accept": {"application/json"}})
	}
	title := func() string {
		g, err := s.store.Group(context.Background(), s.userID(t, "admin"), cmp.Group)
		if err != nil {
			t.Fatal(err)
		}
		return g.Title
	}
	tests := []struct {
		name   string
		who    *client
		body   string
		status int
		title  string
	}{
		{"the owner renames it", admin, `{"title":"  Glaciers, fast and slow "}`, http.StatusOK, "Glaciers, fast and slow"},
		{"no title field", admin, `{"name":"x"}`, http.StatusBadRequest, "Glaciers, fast and slow"},
		{"a title too long", admin, `{"title":"` + strings.Repeat("a", 201) + `"}`, http.StatusUnprocessableEntity, "Glaciers, fast and slow"},
		{"another user", bob, `{"title":"Mine now"}`, http.StatusNotFound, "Glaciers, fast and slow"},
		{"the owner clears it", admin, `{"title":""}`, http.StatusOK, ""},
	}
	for _, tt := range tests {
		r := rename(tt.who, tt.body)
		if r.status != tt.status {
			t.Errorf("%s: answered %d %s, want %d", tt.name, r.status, r.body, tt.status)
		}
		if tt.status >= 400 && !r.has(`"error"`) && tt.status != http.StatusNotFound {
			t.Errorf("%s: the answer %s has no message", tt.name, r.body)
		}
		if got := title(); got != tt.title {
			t.Errorf("%s: the title is %q, want %q", tt.name, got, tt.title)
		}
	}
	if r := admin.post(fmt.Sprintf("/groups/%d/title", cmp.Group), "application/json", strings.NewReader(`{"title":"x"}`), nil); r.status < 400 || title() != "" {
		t.Errorf("a rename without the CSRF token answered %d and the title is %q", r.status, title())
	}
}
