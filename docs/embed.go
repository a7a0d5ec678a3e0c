// Package docs carries the documents the portal itself serves: the
// report's definitions, so that every figure a user reads links to the
// one text that says what it counts.
package docs

import _ "embed"

// Reports is docs/reports.md, served at /usage/definitions.
//
//go:embed reports.md
var Reports []byte
