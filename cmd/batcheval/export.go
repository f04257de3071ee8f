package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/batcheval/batcheval/handlers"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/runner"
)

const exportUsage = `Usage: batcheval export [flags] RUN_ID

Writes a run's results, the same file the run page's Export CSV and
Export JSON buttons download: CSV is one line per sample with every
round's score; JSON is the whole report with its statistics
(docs/export-schema.md). The format is --format's, or else --out's
extension (.csv or .json). Without --out the export goes to stdout.

A run not finished yet exports the scores stored so far, as the
dashboard's export does, and says so on stderr.

Flags:
`

// exportFormats are the formats --format takes.
var exportFormats = []string{handlers.ExportCSV, handlers.ExportJSON}

// exportCmd implements `batcheval export`.
func exportCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, c := newCommand("export", getenv, stderr)
	fs.Usage = func() { fmt.Fprint(stderr, exportUsage); printFlags(stderr, fs) }
	format := enumFlag(fs, "format", "", exportFormats, "the export's format (absent: from --out's extension)")
	out := fs.String("out", "", "write the export to this `FILE` (absent: to stdout)")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if later := flagsAmong(fs.Args()); fs.NArg() > 1 && len(later) > 0 {
		return fmt.Errorf("put the flags before the run id: batcheval export %s %s (the flags after it, %s, were not read)",
			strings.Join(fs.Args()[1:], " "), fs.Arg(0), strings.Join(later, " "))
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("give the id of the run to export, e.g. batcheval export --format csv 12")
	}
	runID, err := strconv.ParseInt(fs.Arg(0), 10, 64)
	if err != nil || runID <= 0 {
		return fmt.Errorf("%q is not a run id: give the run's number, as its page and the run list show it (e.g. batcheval export --format csv 12)", fs.Arg(0))
	}
	chosen, err := exportFormat(*format, *out)
	if err != nil {
		return err
	}
	if err := checkExportOut(*out); err != nil {
		return err
	}
	if dsn := c.DSN(); !models.IsPostgresURL(dsn) && !strings.HasPrefix(dsn, "file:") && !strings.ContainsAny(dsn, "?") && dsn != ":memory:" {
		// Opening a SQLite file that is not there makes an empty
		// database (migrated, logged at length) with no run to export.
		if _, err := os.Stat(dsn); os.IsNotExist(err) {
			return fmt.Errorf("--db %s: no such file, so no run to export: give the SQLite file the run is in (--db or BATCHEVAL_DB), or a PostgreSQL URL (--database-url or DATABASE_URL)", dsn)
		}
	}

	log := c.logger(stderr)
	db, ws, err := openWorkspace(ctx, c, log)
	if err != nil {
		return err
	}
	defer db.Close()
	run, err := db.FindRun(ctx, ws.ID, runID)
	if err != nil {
		if models.ErrorCode(err) != models.ENotFound {
			return err
		}
		if _, terr := db.FindTrashedRun(ctx, ws.ID, runID); terr == nil {
			return fmt.Errorf("run %d is in the trash: restore it from the Trash page first, then export it", runID)
		}
		return fmt.Errorf("%w, in %s", err, c.databaseShown())
	}
	h, err := exportHandlers(db, ws, log, getenv)
	if err != nil {
		return err
	}
	if !run.Finished() {
		fmt.Fprintf(stderr, "run %d is %s with %d of %d batches answered: the export holds the scores stored so far (export it again once the run has finished)\n",
			run.ID, models.RunStatusLabel(run.Status), run.BatchesDone-run.BatchesFailed, run.BatchesTotal)
	}
	if *out == "" {
		return h.WriteRunExport(ctx, ws, run.ID, chosen, stdout)
	}
	return writeFileAtomically(*out, func(w io.Writer) error { return h.WriteRunExport(ctx, ws, run.ID, chosen, w) })
}

// exportHandlers are the handlers whose export writer (WriteRunExport)
// `batcheval export` and `batcheval run --out` write through, so that both
// write the bytes the run page's Export buttons download. They need a
// runner; this one is never started (it only answers that it stores no
// run's statistics).
func exportHandlers(db *models.DB, ws models.Workspace, log *slog.Logger, getenv func(string) string) (*handlers.Handlers, error) {
	r, err := runner.New(runner.Config{DB: db, Log: log, Getenv: getenv})
	if err != nil {
		return nil, err
	}
	return handlers.New(db, r, log, ws)
}

// runOutFormat is the export format `batcheval run --out` writes to out:
// CSV for a name ending in .csv (in any case), else JSON, which --out
// wrote before it took CSV and still writes for any other name.
func runOutFormat(out string) string {
	if strings.EqualFold(filepath.Ext(out), "."+handlers.ExportCSV) {
		return handlers.ExportCSV
	}
	return handlers.ExportJSON
}

// exportFormat is the format asked for: --format, or else --out's
// extension; refused when neither says, or when they disagree.
func exportFormat(format, out string) (string, error) {
	ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(out)), ".")
	byExt := ""
	for _, f := range exportFormats {
		if ext == f {
			byExt = f
		}
	}
	switch {
	case format != "" && byExt != "" && format != byExt:
		return "", fmt.Errorf("--format %s and --out %s disagree: give the file a .%s name, or leave --format out to write %s", format, out, format, byExt)
	case format != "":
		return format, nil
	case byExt != "":
		return byExt, nil
	case out == "":
		return "", errors.New("--format is missing: give --format csv or --format json (or --out with a .csv or .json name)")
	}
	return "", fmt.Errorf("--out %s does not say the format (its name ends neither in .csv nor in .json): add --format csv or --format json", out)
}

// checkExportOut refuses, before the database is opened, an --out that
// cannot be written: a folder, or a file in a folder that does not exist.
func checkExportOut(out string) error {
	if out == "" {
		return nil
	}
	if fi, err := os.Stat(out); err == nil && fi.IsDir() {
		return fmt.Errorf("--out %s is a folder: give a file's path, e.g. %s", out, filepath.Join(out, "run.csv"))
	}
	dir := filepath.Dir(out)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("--out %s: the folder %s does not exist: create it, or choose another path", out, dir)
	}
	return nil
}

// writeFileAtomically writes path through write: into a new file beside
// it, renamed to path once complete, so an export that fails part way
// leaves no half-written file (and an older file there as it was).
func writeFileAtomically(path string, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".part-*")
	if err != nil {
		return fmt.Errorf("--out %s: the folder %s cannot be written to (%v): choose another path", path, dir, err)
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--out %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		done = true
		return fmt.Errorf("--out %s: %w", path, err)
	}
	done = true
	return nil
}
