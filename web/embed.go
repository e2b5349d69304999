// Package web holds Sova's browser UI: one HTML page, a style sheet and
// plain JavaScript modules, embedded into the binary so that `sova serve`
// needs no separate front-end server and no build step. The server package
// decides how the files are served (routes, headers); this package only
// provides them.
package web

import (
	"embed"
	"io/fs"
)

//go:embed index.html share.html assets
var files embed.FS

// Files returns the UI: index.html at the root and its assets (style sheet,
// modules, icons) under assets/. The file system is read-only.
func Files() fs.FS { return files }
