package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// exportEnv is the environment of a command working on dsn (a SQLite
// file or a PostgreSQL URL), logging errors only.
func exportEnv(dsn string) func(string) string {
	env := map[string]string{"BATCHEVAL_LOG_LEVEL": "error"}
	if strings.HasPrefix(dsn, "postgres") {
		env["DATABASE_URL"] = dsn
	} else {
		env["BATCHEVAL_DB"] = dsn
	}
	return func(k string) string { return env[k] }
}

// humanRatedData writes a data file of n samples with a human rating
// (some texts a spreadsheet would read as formulas, one rating missing)
// and a rubric reading it.
func humanRatedData(t *testing.T, n int) (data, rubric string) {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	for i := 1; i <= n; i++ {
		human := fmt.Sprintf("%d", i%5+1)
		if i == 3 {
			human = `""` // unrated: missing in both exports, never 0
		} else {
			human = `"` + human + `"`
		}
		text := fmt.Sprintf("Sample %d: the answer is %s.", i, strings.Repeat("good ", i%4+1))
		if i%4 == 0 {
			text = fmt.Sprintf("=HYPERLINK(\\\"http://x\\\",\\\"%d\\\")", i)
		}
		fmt.Fprintf(&b, `{"id":"r%d","text":"%s","human":%s}`+"\n", i, text, human)
	}
	data = filepath.Join(dir, "data.jsonl")
	rubric = filepath.Join(dir, "rubric.yaml")
	const rub = `task: a short answer
fields:
  - {column: text, label: Answer}
criteria:
  - name: Helpful
    description: Does the answer help?
    lo: 1
    hi: 5
    levels: {low: useless, middle: somewhat, high: very}
    human_column: human
`
	if err := os.WriteFile(data, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rubric, []byte(rub), 0o644); err != nil {
		t.Fatal(err)
	}
	return data, rubric
}

// elapsedSeconds is the JSON export's elapsed time of its run.
var elapsedSeconds = regexp.MustCompile(`"elapsed_seconds": [0-9.]+`)

// webExport is what the dashboard's export of run id in format sends.
func webExport(t *testing.T, base string, id int64, format string) []byte {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("%s/runs/%d/export.%s", base, id, format))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET export.%s of run %d: %s\n%.400s", format, id, resp.Status, b)
	}
	return b
}

// TestExportMatchesTheWebExport: `batcheval export` writes the bytes the
// dashboard's Export CSV and Export JSON buttons download for the same
// run, to stdout or to --out (the format from --format or from --out's
// extension), for a finished run with human ratings and for a run
// interrupted part way, which exports the scores stored so far, as the
// web does, and says so on stderr. On SQLite and PostgreSQL.
func TestExportMatchesTheWebExport(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			dsn := dbtest.DSN(t, d)
			env := exportEnv(dsn)
			ctx := context.Background()

			// A finished run, judged by the simulated judge.
			data, rubric := humanRatedData(t, 14)
			var errOut bytes.Buffer
			if err := run(ctx, []string{"run", "--data", data, "--rubric", rubric, "--simulated",
				"--rounds", "2", "--batch-size", "4", "--seed", "5"}, env, io.Discard, &errOut); err != nil {
				t.Fatalf("batcheval run: %v\n%s", err, errOut.String())
			}
			db := openDSN(t, dsn)
			finished := theRun(t, db, 0, models.Run.Finished)

			// A run interrupted once a batch is answered: handed over,
			// not finished (the server below does not work runs).
			fj := newFaultJudge(t, nil)
			rctx, cancel := context.WithCancel(ctx)
			ended := make(chan error, 1)
			go func() { ended <- run(rctx, runArgs(t, fj.URL(), "--concurrency", "1"), env, io.Discard, io.Discard) }()
			var stopped models.Run
			deadline := time.Now().Add(60 * time.Second)
			for stopped.BatchesDone == 0 {
				var runs []models.Run
				if err := db.Gorm.Order("id").Find(&runs).Error; err != nil {
					t.Fatal(err)
				}
				if len(runs) == 2 {
					stopped = runs[1]
				}
				if time.Now().After(deadline) {
					t.Fatal("the second run answered no batch within 60s")
				}
				time.Sleep(20 * time.Millisecond)
			}
			cancel()
			if err := <-ended; err == nil || !strings.Contains(err.Error(), "interrupted") {
				t.Fatalf("the second run: %v, want interrupted", err)
			}
			if stopped, _ = db.FindRun(ctx, finished.WorkspaceID, stopped.ID); stopped.Finished() || stopped.BatchesDone == 0 {
				t.Fatalf("the interrupted run is %s with %d batches: want unfinished, part way", stopped.Status, stopped.BatchesDone)
			}

			base := startServerAt(t, dsn, "--no-worker")
			dir := t.TempDir()
			for _, tc := range []struct {
				name   string
				run    models.Run
				format string
				args   []string // "" for --out: the file of the case
			}{
				{"finished csv to stdout", finished, "csv", []string{"--format", "csv"}},
				{"finished json to stdout", finished, "json", []string{"--format=json"}},
				{"finished csv to --out by its extension", finished, "csv", []string{"--out", ""}},
				{"finished json to --out by its extension", finished, "json", []string{"--out", ""}},
				{"finished json to --out named otherwise", finished, "json", []string{"--format", "json", "--out", ""}},
				{"unfinished csv to stdout", stopped, "csv", []string{"--format", "csv"}},
				{"unfinished json to --out", stopped, "json", []string{"--out", ""}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					file := ""
					args := append([]string(nil), tc.args...)
					for i, a := range args {
						if a == "" {
							file = filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+"."+tc.format)
							if strings.Contains(tc.name, "otherwise") {
								file = filepath.Join(dir, "results.txt")
							}
							args[i] = file
						}
					}
					if file != "" {
						// An older, longer file there is replaced whole.
						if err := os.WriteFile(file, bytes.Repeat([]byte("old "), 1<<16), 0o644); err != nil {
							t.Fatal(err)
						}
					}
					var out, errOut bytes.Buffer
					args = append(append([]string{"export"}, args...), fmt.Sprint(tc.run.ID))
					if err := run(ctx, args, env, &out, &errOut); err != nil {
						t.Fatalf("batcheval %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
					}
					got := out.Bytes()
					if file != "" {
						if out.Len() != 0 {
							t.Errorf("with --out, stdout got %.200q", out.String())
						}
						var err error
						if got, err = os.ReadFile(file); err != nil {
							t.Fatal(err)
						}
					}
					want := webExport(t, base, tc.run.ID, tc.format)
					if !tc.run.Finished() && tc.format == "json" {
						// A run not finished has been running until now:
						// its elapsed time grows between any two exports,
						// the web's own included. The rest is the same.
						got = elapsedSeconds.ReplaceAll(got, []byte(`"elapsed_seconds": X`))
						want = elapsedSeconds.ReplaceAll(want, []byte(`"elapsed_seconds": X`))
					}
					if !bytes.Equal(got, want) {
						t.Errorf("batcheval export wrote %d bytes, the web export %d; they differ:\ncli: %.600s\nweb: %.600s", len(got), len(want), got, want)
					}
					// Not empty nor a header alone: every sample is there.
					if tc.format == "csv" {
						if lines := bytes.Count(want, []byte("\n")); lines < 14 {
							t.Errorf("the CSV export holds %d lines, want a header and every sample", lines)
						}
					} else if !bytes.Contains(want, []byte(`"samples"`)) {
						t.Errorf("the JSON export holds no samples: %.300s", want)
					}
					note := "the export holds the scores stored so far"
					switch {
					case tc.run.Finished() && errOut.Len() != 0:
						t.Errorf("a finished run's export wrote to stderr: %q", errOut.String())
					case !tc.run.Finished() && !strings.Contains(errOut.String(), fmt.Sprintf("run %d is %s with %d of %d batches answered: %s",
						tc.run.ID, tc.run.Status, tc.run.BatchesDone-tc.run.BatchesFailed, tc.run.BatchesTotal, note)):
						t.Errorf("an unfinished run's export said %q, want how far it got and %q", errOut.String(), note)
					}
				})
			}
			if leftovers, _ := filepath.Glob(filepath.Join(dir, ".*part*")); len(leftovers) > 0 {
				t.Errorf("temporary files left beside the exports: %v", leftovers)
			}
		})
	}
}

// TestExportRefusesBadFlags: `batcheval export` refuses what it cannot
// do, naming the flag or the argument and what to write instead, before
// it opens the database (nothing is created, not even the SQLite file a
// mistyped --db names) for everything but the run itself; a run the
// database does not hold, or holds in the trash, is said to be so.
func TestExportRefusesBadFlags(t *testing.T) {
	dir := t.TempDir()
	unopened := filepath.Join(dir, "never.db")
	noDB := exportEnv(unopened)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no run id", []string{"--format", "csv"}, "give the id of the run to export, e.g. batcheval export --format csv 12"},
		{"two run ids", []string{"--format", "csv", "1", "2"}, "give the id of the run to export"},
		{"a word for an id", []string{"--format", "csv", "last"}, `"last" is not a run id: give the run's number, as its page and the run list show it`},
		{"zero", []string{"--format", "csv", "0"}, `"0" is not a run id`},
		{"no format", []string{"4"}, "--format is missing: give --format csv or --format json (or --out with a .csv or .json name)"},
		{"an unknown format", []string{"--format", "xlsx", "4"}, `--format="xlsx" cannot be used: write csv or json`},
		{"an --out of no known extension", []string{"--out", filepath.Join(dir, "r.txt"), "4"}, "does not say the format (its name ends neither in .csv nor in .json): add --format csv or --format json"},
		{"--format and --out disagree", []string{"--format", "json", "--out", filepath.Join(dir, "r.csv"), "4"}, "--format json and --out " + filepath.Join(dir, "r.csv") + " disagree: give the file a .json name, or leave --format out to write csv"},
		{"--out in no folder", []string{"--out", filepath.Join(dir, "nowhere", "r.csv"), "4"}, "the folder " + filepath.Join(dir, "nowhere") + " does not exist: create it, or choose another path"},
		{"--out a folder", []string{"--format", "csv", "--out", dir, "4"}, "--out " + dir + " is a folder: give a file's path"},
		{"flags after the id", []string{"4", "--format", "csv"}, "put the flags before the run id: batcheval export --format csv 4 (the flags after it, --format, were not read)"},
		{"a misspelt flag", []string{"--fromat", "csv", "4"}, `batcheval export has no flag --fromat: "batcheval export --help" lists its flags`},
		{"--out without its value", []string{"4", "--out"}, "put the flags before the run id"},
		{"--out last, without its value", []string{"--out"}, "--out needs a value, as --out=VALUE or --out VALUE"},
		// Every flag good, but no database there: an export makes none.
		{"a SQLite file that is not there", []string{"--format", "csv", "4"}, "--db " + unopened + ": no such file, so no run to export: give the SQLite file the run is in (--db or BATCHEVAL_DB), or a PostgreSQL URL (--database-url or DATABASE_URL)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := run(context.Background(), append([]string{"export"}, tc.args...), noDB, &out, &errOut)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("export %v: %v\nwant %q", tc.args, err, tc.want)
			}
			if out.Len() != 0 {
				t.Errorf("a refused export wrote to stdout: %.200q", out.String())
			}
		})
	}
	if _, err := os.Stat(unopened); !os.IsNotExist(err) {
		t.Errorf("a refused export opened (made) the database %s: %v", unopened, err)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.*")); len(files) > 0 {
		t.Errorf("refused exports left files: %v", files)
	}

	// The run itself, on each database: none of that number, or one in
	// the trash; nothing is written to --out.
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			dsn := dbtest.DSN(t, d)
			env := exportEnv(dsn)
			data, rubric := humanRatedData(t, 6)
			ctx := context.Background()
			if err := run(ctx, []string{"run", "--data", data, "--rubric", rubric, "--simulated",
				"--rounds", "1", "--batch-size", "3"}, env, io.Discard, io.Discard); err != nil {
				t.Fatal(err)
			}
			db := openDSN(t, dsn)
			r := theRun(t, db, 0, models.Run.Finished)
			outFile := filepath.Join(t.TempDir(), "r.csv")
			shown := "in the SQLite file " + dsn + " (--db or BATCHEVAL_DB; DATABASE_URL for PostgreSQL)"
			if d == models.Postgres {
				shown = "in the PostgreSQL database"
			}
			err := run(ctx, []string{"export", "--out", outFile, fmt.Sprint(r.ID + 100)}, env, io.Discard, io.Discard)
			if want := fmt.Sprintf("run %d does not exist (or is not in this workspace), %s", r.ID+100, shown); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("export of no run: %v\nwant %q", err, want)
			}
			if _, _, err := db.Trash(ctx, r.WorkspaceID, models.KindRun, r.ID, models.Actor{Label: "test"}); err != nil {
				t.Fatal(err)
			}
			err = run(ctx, []string{"export", "--out", outFile, fmt.Sprint(r.ID)}, env, io.Discard, io.Discard)
			if want := fmt.Sprintf("run %d is in the trash: restore it from the Trash page first, then export it", r.ID); err == nil || err.Error() != want {
				t.Errorf("export of a trashed run: %v\nwant %q", err, want)
			}
			if _, err := os.Stat(outFile); !os.IsNotExist(err) {
				t.Errorf("a refused export wrote --out: %v", err)
			}
		})
	}
}
