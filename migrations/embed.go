// Package migrations holds gpubook's versioned schema as goose SQL files, one
// folder per database. The two folders are kept equivalent: the same version
// numbers, tables, columns and guarantees, in each database's own dialect.
package migrations

import "embed"

// Postgres holds the PostgreSQL migrations under "postgres".
//
//go:embed postgres/*.sql
var Postgres embed.FS

// SQLite holds the SQLite migrations under "sqlite".
//
//go:embed sqlite/*.sql
var SQLite embed.FS
