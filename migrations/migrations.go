// Package migrations holds the versioned SQL schema of the product, one
// folder per dialect, embedded in the binary. They are applied with goose at
// start-up and by `batcheval migrate`; River's own schema is migrated in the
// same step by the caller (see models.Migrate).
package migrations

import "embed"

// SQLite is the schema for the embedded SQLite database.
//
//go:embed sqlite/*.sql
var SQLite embed.FS

// Postgres is the schema for PostgreSQL.
//
//go:embed postgres/*.sql
var Postgres embed.FS
