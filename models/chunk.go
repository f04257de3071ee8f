package models

import (
	"fmt"

	"gorm.io/gorm"
)

// Bind-parameter ceilings of one SQL statement. SQLite (3.32 and later, as
// built into the driver) allows 32,766 host parameters, though statements
// stay far below (sqliteParamsPerStatement); PostgreSQL's wire protocol
// counts them in 16 bits, so 65,535. A multi-row INSERT uses one parameter
// per column per row, which is what overflowed when a whole round of
// batches went in one statement.
const (
	sqliteMaxParams   = 32766
	postgresMaxParams = 65535
)

// maxChunkRows caps a chunk even when rows are narrow: past a thousand rows
// a statement gains nothing in speed and only grows the driver's buffers.
const maxChunkRows = 1000

// sqliteParamsPerStatement caps the parameters of one statement on SQLite
// well below its limit. It was set when the driver (glebarez/go-sqlite,
// replaced by modernc.org/sqlite in December 2026) found each
// parameter's argument by scanning the whole argument list, so binding a
// statement cost the square of its parameters. Storing the first round of
// a million-sample run (100,000 batches in 1,000-row INSERTs of 10,000
// parameters) took five minutes before the first judge call; in
// statements of at most 500 parameters binding costs less than executing.
const sqliteParamsPerStatement = 500

// chunkRows is how many rows of a model with the given number of inserted
// columns fit in one INSERT on the dialect of tx, with a margin of one
// row's worth of parameters for anything GORM adds.
func chunkRows(tx *gorm.DB, columns int) int {
	limit := sqliteParamsPerStatement
	if tx.Dialector.Name() == "postgres" {
		limit = postgresMaxParams
	}
	n := limit/max(columns, 1) - 1
	return min(max(n, 1), maxChunkRows)
}

// insertedColumns counts the columns an INSERT of model writes: every
// creatable field with a database column, the auto-increment key aside.
func insertedColumns(tx *gorm.DB, model any) (int, error) {
	stmt := &gorm.Statement{DB: tx}
	if err := stmt.Parse(model); err != nil {
		return 0, fmt.Errorf("read the columns of %T: %w", model, err)
	}
	n := 0
	for _, f := range stmt.Schema.Fields {
		if f.DBName == "" || !f.Creatable {
			continue
		}
		if f.PrimaryKey && f.AutoIncrement {
			continue
		}
		n++
	}
	return n, nil
}

// insertChunked inserts rows in as few statements as the dialect's
// parameter limit allows, filling in their generated ids. It does not open
// a transaction: callers that need all-or-nothing pass one.
func insertChunked[T any](tx *gorm.DB, rows []T) error {
	if len(rows) == 0 {
		return nil
	}
	cols, err := insertedColumns(tx, &rows[0])
	if err != nil {
		return err
	}
	size := chunkRows(tx, cols)
	for start := 0; start < len(rows); start += size {
		// A sub-slice shares the backing array, so the ids GORM reads
		// back land in the caller's rows.
		part := rows[start:min(start+size, len(rows))]
		if err := tx.Create(&part).Error; err != nil {
			return err
		}
	}
	return nil
}
