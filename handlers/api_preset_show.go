package handlers

import (
	"context"
	"net/http"
	"strings"

	"knobs/preset"
)

// ShowPresetInput is GET /api/v1/presets/{preset}.
type ShowPresetInput struct {
	PresetRef
	PresetPick
	IfNoneMatch string `header:"If-None-Match" doc:"The ETag of the copy you hold: answered 304 while it is still the one."`
}

// ShowPresetOutput is a preset file, or 304 with its headers alone.
type ShowPresetOutput struct {
	Status        int
	ContentType   string `header:"Content-Type"`
	ETag          string `header:"ETag" doc:"Changes exactly when the answer's bytes do."`
	PresetID      int64  `header:"X-Knobs-Preset-Id" doc:"The preset's id."`
	PresetVersion int    `header:"X-Knobs-Preset-Version" doc:"The version answered."`
	Label         string `header:"X-Knobs-Label" doc:"The label that chose the version; absent when none did."`
	Body          []byte
}

// ShowAPIPreset answers a version of a preset the caller sees in the
// export format, byte for byte what the page's Export gives for it, with
// an ETag; 304 when If-None-Match holds that ETag.
func (h *Handler) ShowAPIPreset(ctx context.Context, in *ShowPresetInput) (*ShowPresetOutput, error) {
	p, err := h.apiPreset(ctx, in.Ref)
	if err != nil {
		return nil, err
	}
	v, label, err := h.apiPresetAt(ctx, p, in.PresetPick)
	if err != nil {
		return nil, err
	}
	b, err := preset.Export(versionFile(v))
	if err != nil {
		return nil, err
	}
	out := &ShowPresetOutput{Status: http.StatusOK, ContentType: "application/json; charset=utf-8", ETag: exportTag(b),
		PresetID: p.ID, PresetVersion: v.Version, Label: label, Body: b}
	if etagMatches(in.IfNoneMatch, out.ETag) {
		out.Status, out.ContentType, out.Body = http.StatusNotModified, "", nil
	}
	return out, nil
}

// etagMatches reports whether an If-None-Match header holds tag: "*",
// or a list naming it, weak or strong (a GET compares weakly).
func etagMatches(header, tag string) bool {
	for part := range strings.SplitSeq(header, ",") {
		part = strings.TrimPrefix(strings.TrimSpace(part), "W/")
		if part == "*" || part == tag {
			return true
		}
	}
	return false
}
