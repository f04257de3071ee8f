package main

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestRunOutIsTheExport: `batcheval run --out` writes the bytes
// `batcheval export` (and so the run page's Export buttons) writes for the
// same run: JSON for a name ending in .json or in anything but .csv, CSV
// for a .csv name. It wrote its own JSON from the report it had just
// built, which differed from the export of the same run, and a .csv name
// got that JSON too. On SQLite and PostgreSQL.
func TestRunOutIsTheExport(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			dsn := dbtest.DSN(t, d)
			env := exportEnv(dsn)
			ctx := context.Background()
			data, rubric := humanRatedData(t, 14)
			dir := t.TempDir()
			for i, tc := range []struct {
				file, format string
			}{
				{"result.json", "json"},
				{"result.csv", "csv"},
				{"result.CSV", "csv"},
				{"result.txt", "json"}, // the documented default: JSON
			} {
				t.Run(tc.file, func(t *testing.T) {
					out := filepath.Join(dir, tc.file)
					var errOut bytes.Buffer
					if err := run(ctx, []string{"run", "--data", data, "--rubric", rubric, "--simulated",
						"--rounds", "2", "--batch-size", "4", "--seed", fmt.Sprint(5 + i), "--out", out}, env, io.Discard, &errOut); err != nil {
						t.Fatalf("batcheval run: %v\n%s", err, errOut.String())
					}
					got, err := os.ReadFile(out)
					if err != nil {
						t.Fatal(err)
					}
					db := openDSN(t, dsn)
					var last models.Run
					if err := db.Gorm.Order("id desc").First(&last).Error; err != nil {
						t.Fatal(err)
					}
					var want bytes.Buffer
					if err := run(ctx, []string{"export", "--format", tc.format, fmt.Sprint(last.ID)}, env, &want, &errOut); err != nil {
						t.Fatalf("batcheval export: %v\n%s", err, errOut.String())
					}
					if !bytes.Equal(got, want.Bytes()) {
						t.Errorf("run --out %s wrote %d bytes, batcheval export --format %s %d bytes; they differ:\nout:    %.600s\nexport: %.600s",
							tc.file, len(got), tc.format, len(want.Bytes()), got, want.Bytes())
					}
					// Not empty nor a header alone: every sample is there.
					switch tc.format {
					case "csv":
						if lines := bytes.Count(got, []byte("\n")); lines < 14 {
							t.Errorf("the CSV holds %d lines, want a header and every sample", lines)
						}
					case "json":
						if !bytes.Contains(got, []byte(`"samples"`)) {
							t.Errorf("the JSON holds no samples: %.300s", got)
						}
					}
					if leftovers, _ := filepath.Glob(filepath.Join(dir, ".*part*")); len(leftovers) > 0 {
						t.Errorf("temporary files left beside the result: %v", leftovers)
					}
				})
			}
		})
	}
}

// pageReading is the reading sentence under a run page's correlations.
var pageReading = regexp.MustCompile(`(?s)data-testid="reading">(.*?)</p>`)

// TestRunReadingIsThePagesReading: the line `batcheval run` prints under
// its table for a coefficient its samples cannot tell from chance is the
// sentence the run page shows for that criterion (the report's one
// reading, which names its coefficient), not a second wording of it. The
// page writes its minus signs as the true minus; the terminal, like the
// table's columns, as the hyphen-minus. On SQLite and PostgreSQL.
func TestRunReadingIsThePagesReading(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			dsn := dbtest.DSN(t, d)
			env := exportEnv(dsn)
			// Four samples, one unrated: three pairs, too few to tell.
			data, rubric := humanRatedData(t, 4)
			var out, errOut bytes.Buffer
			if err := run(context.Background(), []string{"run", "--data", data, "--rubric", rubric, "--simulated",
				"--rounds", "2", "--batch-size", "2", "--seed", "5"}, env, &out, &errOut); err != nil {
				t.Fatalf("batcheval run: %v\n%s", err, errOut.String())
			}
			const prefix = "too few samples for Helpful: "
			var cli string
			for _, line := range strings.Split(out.String(), "\n") {
				if s, ok := strings.CutPrefix(line, prefix); ok {
					cli = s
				}
			}
			if cli == "" {
				t.Fatalf("the table has no %q line:\n%s", prefix, out.String())
			}
			if !strings.HasPrefix(cli, "Too few samples to tell (3 samples; Pearson r = ") {
				t.Errorf("the reading %q does not say the three samples and name its coefficient", cli)
			}

			db := openDSN(t, dsn)
			r := theRun(t, db, 0, models.Run.Finished)
			base := startServerAt(t, dsn, "--no-worker")
			resp, err := http.Get(fmt.Sprintf("%s/runs/%d", base, r.ID))
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("GET /runs/%d: %v %s", r.ID, err, resp.Status)
			}
			m := pageReading.FindSubmatch(body)
			if m == nil {
				t.Fatalf("the run page has no reading")
			}
			page := strings.ReplaceAll(html.UnescapeString(string(m[1])), "\u2212", "-")
			if cli != page {
				t.Errorf("batcheval run reads\n  %q\nthe run page\n  %q", cli, page)
			}
		})
	}
}
