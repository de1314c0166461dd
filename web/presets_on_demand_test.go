package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// The compare page lists the team's presets by name and fetches a
// preset's setup only when one is loaded into a pane, so that many big
// team presets do not make the page (and its rendering) huge. The
// setup comes from GET /presets/:id/spec, which shows only presets the
// user may see.
func TestComparePageLoadsPresetSetupsOnDemand(t *testing.T) {
	_, admin := newTeam(t)
	bob := admin.addMember("bob")
	const n, size = 20, 100_000 // 2 MB of team presets
	big := strings.Repeat("tides ", size/6)
	var ids []int64
	for i := range n {
		spec := strings.Replace(presetSpecJSON, "You are terse.", fmt.Sprintf("Preset %d. %s", i, big), 1)
		r, out := admin.jsonPost("/presets", fmt.Sprintf(`{"name":"Team preset %d","visibility":"team","spec":%s}`, i, spec))
		if r.status != http.StatusCreated {
			t.Fatalf("saving preset %d: %d %s", i, r.status, r.body)
		}
		ids = append(ids, int64(out["id"].(float64)))
	}
	private := admin.savePreset("Admin's own", "private")

	page := bob.open("/compare")
	wantPage(t, page, http.StatusOK, "Team preset 0", fmt.Sprintf("Team preset %d", n-1))
	if len(page.body) > 200_000 {
		t.Errorf("the compare page is %d bytes with %d team presets of %d bytes: it carries their setups", len(page.body), n, size)
	}
	if page.has("Admin&#39;s own") || page.has("Admin's own") {
		t.Error("the compare page lists another member's private preset")
	}

	// Loading one into a pane fetches its setup.
	r := bob.get(fmt.Sprintf("/presets/%d/spec", ids[3]))
	if r.status != http.StatusOK {
		t.Fatalf("the setup of a team preset answered %d: %s", r.status, r.body)
	}
	var got struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
		Spec struct {
			Provider string `json:"provider"`
			Endpoint string `json:"endpoint"`
			Body     struct {
				Model    string `json:"model"`
				Messages []struct {
					Content string `json:"content"`
				} `json:"messages"`
			} `json:"body"`
		} `json:"spec"`
	}
	if err := json.Unmarshal([]byte(r.body), &got); err != nil {
		t.Fatalf("the setup is not JSON: %v", err)
	}
	if got.ID != ids[3] || got.Name != "Team preset 3" || got.Spec.Provider != "sim" || got.Spec.Body.Model != "sim-fast" ||
		len(got.Spec.Body.Messages) != 2 || !strings.HasPrefix(got.Spec.Body.Messages[0].Content, "Preset 3. tides") {
		t.Errorf("the setup of preset 3 reads %+v", got)
	}
	// Scoped as the preset itself is: another member's private preset is
	// not found, nor is an unknown one.
	for _, path := range []string{fmt.Sprintf("/presets/%d/spec", private), "/presets/999999/spec", "/presets/x/spec"} {
		if r := bob.get(path); r.status != http.StatusNotFound {
			t.Errorf("GET %s answered %d, want 404", path, r.status)
		}
	}
	if r := admin.get(fmt.Sprintf("/presets/%d/spec", private)); r.status != http.StatusOK {
		t.Errorf("the owner's own preset setup answered %d", r.status)
	}
}
