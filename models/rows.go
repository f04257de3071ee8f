package models

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/batcheval/batcheval/evaluator"
	"gorm.io/gorm"
)

// EachDatasetRatings calls fn with the human ratings of every row of the
// dataset, in file order. It reads the ratings column only, row by row
// from one cursor, so a page that summarises the ratings does not hold the
// texts of a large dataset in memory.
func (db *DB) EachDatasetRatings(ctx context.Context, datasetID int64, fn func(ratings map[string]*float64) error) error {
	return db.EachDatasetRowRatings(ctx, datasetID, func(_ string, ratings map[string]*float64) error { return fn(ratings) })
}

// EachDatasetRowRatings is EachDatasetRatings with each row's id in its
// file (DatasetRow.ExternalID), so that a warning can name the rows.
func (db *DB) EachDatasetRowRatings(ctx context.Context, datasetID int64, fn func(externalID string, ratings map[string]*float64) error) error {
	rows, err := db.Reader(ctx).Model(&DatasetRow{}).Select("external_id, ratings").
		Where("dataset_id = ?", datasetID).Order("position").Rows()
	if err != nil {
		return fmt.Errorf("read ratings of dataset %d: %w", datasetID, err)
	}
	defer rows.Close()
	var raw []byte
	var id string
	for rows.Next() {
		if err := rows.Scan(&id, &raw); err != nil {
			return fmt.Errorf("read ratings of dataset %d: %w", datasetID, err)
		}
		var r map[string]*float64
		if err := json.Unmarshal(raw, &r); err != nil {
			return fmt.Errorf("read ratings of dataset %d: %w", datasetID, err)
		}
		if err := fn(id, r); err != nil {
			return err
		}
	}
	return rows.Err()
}

// ImportDataset stores a dataset and the rows fill gives to put, in one
// transaction: either everything is imported or nothing is. Rows are
// written in chunks as they come, so a caller that reads its rows from a
// stream holds one chunk at a time, not the dataset; put encodes a row at
// once, so the caller may reuse the row's maps after put returns. fill may
// change d's Columns until it returns (a streamed JSON file reveals its
// columns as it goes), and set its ImportNotes (what reading the file
// found), which are stored in the same transaction; RowCount is counted
// here. An error from fill, or no
// rows at all, stores nothing.
//
// The rows are written without GORM's reflection: their JSON is encoded
// by hand (rowjson.go), and a chunk goes to SQLite as one multi-row INSERT
// and to PostgreSQL as one COPY.
//
// ctx stops the import between two chunks (and fill, which reads with it),
// never inside a statement: the import then rolls back and reports ctx's
// error, or, once fill has handed over every row, commits and reports
// success. A cancel that reached a statement in flight (the commit) made
// the client report the cancel while PostgreSQL went on to commit: the
// caller, told nothing was stored, kept the upload for a retry that
// imported the dataset twice (TestCancelledImportEndsOneWay).
func (db *DB) ImportDataset(ctx context.Context, d *Dataset, fill func(put func(DatasetRow) error) error) error {
	return db.importDataset(ctx, d, fill, nil)
}

// importDataset is ImportDataset; then, when not nil, writes more in the
// same transaction once every row is stored (an alignment's held-out copy
// and the runs on it, LaunchHeldOutCopy): an error from it stores nothing.
func (db *DB) importDataset(ctx context.Context, d *Dataset, fill func(put func(DatasetRow) error) error, then func(tx *gorm.DB) error) error {
	if err := checkDataset(d); err != nil {
		return err
	}
	stop := ctx
	ctx = context.WithoutCancel(ctx)
	store := func(g *gorm.DB, conn *sql.Conn) error {
		return g.Transaction(func(tx *gorm.DB) error {
			d.RowCount = 0
			if d.Columns == nil {
				d.Columns = []string{} // a NOT NULL JSON column: [] until fill says
			}
			if err := tx.Create(d).Error; err != nil {
				return fmt.Errorf("create dataset: %w", err)
			}
			w := &rowWriter{ctx: ctx, tx: tx, conn: conn, dialect: db.Dialect, datasetID: d.ID, size: db.importChunkRows()}
			var stats RatingStats
			put := func(r DatasetRow) error {
				if err := w.add(&r); err != nil {
					return err
				}
				stats.Add(r.Ratings)
				d.RowCount++
				if w.n == w.size {
					if err := stop.Err(); err != nil {
						return err
					}
					return w.flush(d.RowCount)
				}
				return nil
			}
			if err := fill(put); err != nil {
				return err
			}
			if err := w.flush(d.RowCount); err != nil {
				return err
			}
			if d.RowCount == 0 {
				return Errorf(EInvalid, "the dataset has no rows")
			}
			if d.Columns == nil {
				d.Columns = []string{}
			}
			d.RatingStats = stats.storable()
			if err := tx.Model(d).Select("row_count", "columns", "rating_stats", "import_notes").Updates(d).Error; err != nil {
				return err
			}
			if then != nil {
				return then(tx)
			}
			return nil
		})
	}
	g := db.Gorm.WithContext(ctx)
	if db.Dialect != Postgres {
		return store(g, nil)
	}
	// COPY needs the pgx connection under the transaction: hold one
	// connection and run the transaction on it.
	if err := g.Connection(func(c *gorm.DB) error {
		conn, _ := c.Statement.ConnPool.(*sql.Conn)
		return store(c, conn)
	}); err != nil {
		return err
	}
	db.analyzeFilled(ctx, "dataset_rows", d.RowCount)
	return nil
}

// bulkAnalyzeRows is how many rows one write (an import, a round's
// batches, a run's stored sample results) adds to a PostgreSQL table
// before it gathers the table's statistics itself, once committed.
// Without them the planner sizes a table never analyzed from its pages
// alone: a run's start read a fresh import's rows in chunks planned for
// a hundred rows each (a Bitmap Heap Scan of every row from the chunk on
// and a Sort) until autovacuum's first ANALYZE, a minute or more later;
// that read took 1.3-1.5x as long as once analyzed at 200,000 and
// 1,000,000 rows (BenchmarkRunStartReadNeverAnalyzed; the pages stayed
// fast either way, BenchmarkPagesOnAFreshPostgres). An
// ANALYZE reads a sample of at most 30,000 rows (the default statistics
// target), a fraction of a second, whatever the table's size.
const bulkAnalyzeRows = 10000

// analyzeFilled gathers PostgreSQL's statistics of table (one of this
// package's, never a name from input) after a committed write of added
// rows, when that is at least bulkAnalyzeRows. The write has succeeded
// whatever this does: an error (a cancelled request, a lock that autovacuum
// holds) leaves the statistics to autovacuum, as before.
func (db *DB) analyzeFilled(ctx context.Context, table string, added int) {
	if db.Dialect != Postgres || added < bulkAnalyzeRows {
		return
	}
	_ = db.Gorm.WithContext(ctx).Exec("ANALYZE " + table).Error
}

// Rows per statement of an import. SQLite's former driver
// (glebarez/go-sqlite) looked each bound parameter up by scanning the whole
// argument list, so binding one statement cost the square of its
// parameters (the sizes were chosen then and kept): at 1,000 rows
// (5,000 parameters) binding took most of an import's time, at 100 rows it
// costs less than the statements themselves. PostgreSQL's COPY sends a
// chunk in one round trip; 5,000 rows of a few hundred bytes each bound
// what one chunk holds.
const (
	sqliteImportChunkRows   = 100
	postgresImportChunkRows = 5000
)

// importChunkRows is the rows per statement of an import on db.
func (db *DB) importChunkRows() int {
	if db.ImportChunkRows > 0 {
		return db.ImportChunkRows
	}
	if db.Dialect == Postgres {
		return postgresImportChunkRows
	}
	return sqliteImportChunkRows
}

// datasetRowColumns are the columns an import writes, in statement order.
var datasetRowColumns = []string{"dataset_id", "position", "external_id", "data", "ratings"}

// rowWriter buffers encoded dataset rows and writes them a chunk at a time.
type rowWriter struct {
	ctx       context.Context
	tx        *gorm.DB
	conn      *sql.Conn // the connection under tx, for COPY (PostgreSQL only)
	dialect   Dialect
	datasetID int64
	size      int // rows per chunk

	n         int      // rows buffered
	positions []int64  // each row's position
	ids       []string // each row's external id
	ends      []int    // each row's end of data and end of ratings in buf
	buf       []byte   // the rows' JSON, back to back
	enc       rowEncoder

	args    []any  // reused statement arguments
	fullSQL string // the INSERT of a full chunk, built once
}

// add encodes a row into the chunk.
func (w *rowWriter) add(r *DatasetRow) error {
	if r.Data == nil {
		r.Data = map[string]string{} // NOT NULL JSON columns: no data is {}, not null
	}
	if r.Ratings == nil {
		r.Ratings = map[string]*float64{}
	}
	w.buf = w.enc.appendData(w.buf, r.Data)
	dataEnd := len(w.buf)
	var err error
	if w.buf, err = w.enc.appendRatings(w.buf, r.Ratings); err != nil {
		return Errorf(EInvalid, "row %d (id %q): %v", r.Position, r.ExternalID, err)
	}
	w.positions = append(w.positions, int64(r.Position))
	w.ids = append(w.ids, r.ExternalID)
	w.ends = append(w.ends, dataEnd, len(w.buf))
	w.n++
	return nil
}

// flush writes the buffered rows; last is the count of rows so far, for
// the error message.
func (w *rowWriter) flush(last int) error {
	if w.n == 0 {
		return nil
	}
	// One string for the chunk's JSON: each row's values are slices of it.
	text := string(w.buf)
	var err error
	if w.conn != nil {
		err = w.copyChunk(text)
	} else {
		err = w.insertChunk(text)
	}
	if err != nil {
		return fmt.Errorf("store dataset rows %d to %d: %w", last-w.n+1, last, err)
	}
	w.n = 0
	w.positions, w.ids, w.ends, w.buf = w.positions[:0], w.ids[:0], w.ends[:0], w.buf[:0]
	clear(w.args)
	return nil
}

// values returns row i's column values.
func (w *rowWriter) values(text string, i int, into []any) {
	start := 0
	if i > 0 {
		start = w.ends[2*i-1]
	}
	into[0], into[1], into[2] = w.datasetID, w.positions[i], w.ids[i]
	into[3], into[4] = text[start:w.ends[2*i]], text[w.ends[2*i]:w.ends[2*i+1]]
}

// insertChunk writes the chunk as one multi-row INSERT.
func (w *rowWriter) insertChunk(text string) error {
	cols := len(datasetRowColumns)
	query := w.fullSQL
	if w.n != w.size || query == "" {
		query = insertSQL("dataset_rows", datasetRowColumns, w.n, w.dialect)
		if w.n == w.size {
			w.fullSQL = query
		}
	}
	if cap(w.args) < w.n*cols {
		w.args = make([]any, w.size*cols)
	}
	args := w.args[:w.n*cols]
	for i := range w.n {
		w.values(text, i, args[i*cols:(i+1)*cols])
	}
	_, err := w.tx.Statement.ConnPool.ExecContext(w.ctx, query, args...)
	return err
}

// copyChunk writes the chunk with PostgreSQL's COPY, on the pgx connection
// under the transaction.
func (w *rowWriter) copyChunk(text string) error {
	return w.conn.Raw(func(driverConn any) error {
		pc, ok := driverConn.(interface{ Conn() *pgx.Conn })
		if !ok {
			return fmt.Errorf("COPY needs a pgx connection, not %T", driverConn)
		}
		src := &chunkSource{w: w, text: text, i: -1, row: make([]any, len(datasetRowColumns))}
		n, err := pc.Conn().CopyFrom(w.ctx, pgx.Identifier{"dataset_rows"}, datasetRowColumns, src)
		if err == nil && n != int64(w.n) {
			err = fmt.Errorf("COPY stored %d rows of %d", n, w.n)
		}
		return err
	})
}

// chunkSource hands a chunk's rows to pgx's CopyFrom one at a time.
type chunkSource struct {
	w    *rowWriter
	text string
	i    int
	row  []any
}

func (s *chunkSource) Next() bool { s.i++; return s.i < s.w.n }

func (s *chunkSource) Values() ([]any, error) {
	s.w.values(s.text, s.i, s.row)
	return s.row, nil
}

func (s *chunkSource) Err() error { return nil }

// insertSQL is an INSERT of rows rows into table, with the dialect's
// placeholders.
func insertSQL(table string, columns []string, rows int, d Dialect) string {
	var b strings.Builder
	b.WriteString("INSERT INTO ")
	b.WriteString(table)
	b.WriteString(" (")
	b.WriteString(strings.Join(columns, ", "))
	b.WriteString(") VALUES ")
	p := 0
	for r := range rows {
		if r > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for c := range columns {
			if c > 0 {
				b.WriteByte(',')
			}
			p++
			if d == Postgres {
				b.WriteByte('$')
				b.WriteString(strconv.Itoa(p))
			} else {
				b.WriteByte('?')
			}
		}
		b.WriteByte(')')
	}
	return b.String()
}

// ListDatasetRowFigures returns every row of the dataset in file order as
// a run's figures read them: id, position, id in the file and ratings, and
// of the texts only the given columns (a system or group column; Data is
// nil when none is given or the row has none of them). It reads row by row
// from one cursor and keeps no other text, so that computing the figures
// of a large run does not hold the dataset's texts. Rows with the same
// values in those columns share one Data map (a system column has a few
// values for many rows), and rows with the same stored ratings one
// Ratings map and its values: callers must change neither.
func (db *DB) ListDatasetRowFigures(ctx context.Context, datasetID int64, columns []string) ([]DatasetRow, error) {
	var keep []string
	for _, c := range columns {
		if c != "" && !slices.Contains(keep, c) {
			keep = append(keep, c)
		}
	}
	// The kept columns are taken out of each row's JSON by the database
	// (dataColumnsSQL), so the texts stay there; a name SQLite's JSON path
	// cannot spell reads the row's JSON whole, as before.
	cols := "id, position, external_id, ratings"
	extract, args := db.dataColumnsSQL(keep)
	whole := len(keep) > 0 && extract == ""
	if whole {
		cols += ", data"
	} else if extract != "" {
		cols += ", " + extract
	}
	n, err := db.CountDatasetRows(ctx, datasetID)
	if err != nil {
		return nil, err
	}
	rows, err := db.Reader(ctx).Model(&DatasetRow{}).Select(cols, args...).Where("dataset_id = ?", datasetID).Order("position").Rows()
	if err != nil {
		return nil, fmt.Errorf("read rows of dataset %d: %w", datasetID, err)
	}
	defer rows.Close()
	out := make([]DatasetRow, 0, n)
	shared := dataMaps{}
	sharedRatings := ratingMaps{}
	var ratings, data []byte
	values := make([]sql.NullString, len(keep))
	for rows.Next() {
		r := DatasetRow{DatasetID: datasetID}
		dest := []any{&r.ID, &r.Position, &r.ExternalID, &ratings}
		switch {
		case whole:
			dest = append(dest, &data)
		case extract != "":
			for i := range values {
				dest = append(dest, &values[i])
			}
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("read rows of dataset %d: %w", datasetID, err)
		}
		if len(ratings) > 0 {
			if r.Ratings, err = sharedRatings.of(ratings); err != nil {
				return nil, fmt.Errorf("read ratings of row %d: %w", r.ID, err)
			}
		}
		switch {
		case whole && len(data) > 0:
			var all map[string]string
			if err := json.Unmarshal(data, &all); err != nil {
				return nil, fmt.Errorf("read data of row %d: %w", r.ID, err)
			}
			r.Data = shared.of(keep, all)
		case extract != "":
			var all map[string]string
			for i, v := range values {
				if v.Valid {
					if all == nil {
						all = make(map[string]string, len(keep))
					}
					all[keep[i]] = v.String
				}
			}
			r.Data = shared.of(keep, all)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// dataColumnsSQL is the select list that takes the columns out of a
// row's JSON (data) in the database, one expression a column in their
// order, with its arguments: PostgreSQL's ->> on the parsed text, SQLite's
// on the JSON path of the quoted label. "" when there are none or one
// cannot be spelled as a SQLite path (a name with a double quote or a
// backslash): the caller then reads the JSON whole.
func (db *DB) dataColumnsSQL(columns []string) (string, []any) {
	var parts []string
	var args []any
	for _, c := range columns {
		if db.Dialect == Postgres {
			parts = append(parts, "data::jsonb ->> ?")
			args = append(args, c)
			continue
		}
		if strings.ContainsAny(c, `"\`) {
			return "", nil
		}
		parts = append(parts, "data ->> ?")
		args = append(args, `$."`+c+`"`)
	}
	return strings.Join(parts, ", "), args
}

// listCriterionRatingRows returns every row of the dataset in file order
// with its id, id in the file and, of its imported ratings, those a merge
// of crit's human ratings reads (MergeHumanRatingsOn, HumanRatings): the
// human column, the criterion's name, its explicit annotator columns and
// every "<column>@" key. Its texts are not read (SQL selects no data), and
// rows whose stored ratings are alike share one map: callers must not
// change it.
func (db *DB) listCriterionRatingRows(ctx context.Context, datasetID int64, crit evaluator.Criterion) ([]DatasetRow, error) {
	prefix := HumanKey(crit) + "@"
	keep := func(k string) bool {
		return k == crit.Name || k == crit.HumanColumn || strings.HasPrefix(k, prefix) ||
			(crit.HumanColumn != "" && strings.HasPrefix(k, crit.HumanColumn+"@")) || slices.Contains(crit.AnnotatorColumns, k)
	}
	n, err := db.CountDatasetRows(ctx, datasetID)
	if err != nil {
		return nil, err
	}
	rows, err := db.Reader(ctx).Model(&DatasetRow{}).Select("id, external_id, ratings").Where("dataset_id = ?", datasetID).Order("position").Rows()
	if err != nil {
		return nil, fmt.Errorf("read ratings of dataset %d: %w", datasetID, err)
	}
	defer rows.Close()
	out := make([]DatasetRow, 0, n)
	shared := ratingMaps{}
	var raw []byte
	for rows.Next() {
		r := DatasetRow{DatasetID: datasetID}
		if err := rows.Scan(&r.ID, &r.ExternalID, &raw); err != nil {
			return nil, fmt.Errorf("read ratings of dataset %d: %w", datasetID, err)
		}
		if len(raw) > 0 {
			if r.Ratings, err = shared.kept(raw, keep); err != nil {
				return nil, fmt.Errorf("read ratings of row %d: %w", r.ID, err)
			}
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// maxSharedRatings bounds the distinct ratings ratingMaps keeps to hand out
// again: ratings of a few values (1 to 5 on one or two columns) come back
// for many rows, and past this many distinct ones the ratings are likely
// continuous and each row's its own.
const maxSharedRatings = 1 << 14

// ratingMaps hands out one map per distinct stored ratings text
// (ListDatasetRowFigures), so that rows rated alike share it: a map of
// one rating is about 300 bytes a row, most of what a million-sample
// run's rows held while its figures were computed.
type ratingMaps map[string]map[string]*float64

// of is the decoded ratings of the stored text raw (as the rows' JSON
// serializer decodes it), shared with every row whose text is the same.
func (m ratingMaps) of(raw []byte) (map[string]*float64, error) {
	if r, ok := m[string(raw)]; ok {
		return r, nil
	}
	var r map[string]*float64
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	if len(m) < maxSharedRatings {
		m[string(raw)] = r
	}
	return r, nil
}

// kept is of's ratings with only the keys keep accepts (nil when none
// is), shared as of's are. A ratingMaps is used with one keep function.
func (m ratingMaps) kept(raw []byte, keep func(string) bool) (map[string]*float64, error) {
	if r, ok := m[string(raw)]; ok {
		return r, nil
	}
	var all map[string]*float64
	if err := json.Unmarshal(raw, &all); err != nil {
		return nil, err
	}
	var r map[string]*float64
	for k, v := range all {
		if keep(k) {
			if r == nil {
				r = make(map[string]*float64, 2)
			}
			r[k] = v
		}
	}
	if len(m) < maxSharedRatings {
		m[string(raw)] = r
	}
	return r, nil
}

// dataMaps hands out one map per distinct set of kept column values
// (ListDatasetRowFigures), so that rows of the same system share it.
type dataMaps map[string]map[string]string

// of is the shared map holding all's values of the keep columns; nil when
// all has none of them.
func (m dataMaps) of(keep []string, all map[string]string) map[string]string {
	var key []byte
	found := false
	for _, c := range keep {
		v, ok := all[c]
		if !ok {
			key = append(key, 0)
			continue
		}
		found = true
		key = append(key, 1)
		key = binary.AppendUvarint(key, uint64(len(v)))
		key = append(key, v...)
	}
	if !found {
		return nil
	}
	if d, ok := m[string(key)]; ok {
		return d
	}
	d := make(map[string]string, len(keep))
	for _, c := range keep {
		if v, ok := all[c]; ok {
			d[c] = v
		}
	}
	m[string(key)] = d
	return d
}
