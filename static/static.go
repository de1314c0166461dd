// Package static holds the CSS, JavaScript and icons, embedded in the
// binary so that Knobs works offline and needs no CDN.
package static

import "embed"

// FS is the static tree, served under /static.
//
//go:embed css js icons
var FS embed.FS
