// Package static holds gpubook's CSS, scripts and images, embedded in the
// binary so that a deployment is one file.
package static

import (
	"embed"
	"io/fs"
)

//go:embed css js img
var files embed.FS

// FS serves the assets from the package root (css/app.css, js/htmx.min.js, …).
var FS fs.FS = files
