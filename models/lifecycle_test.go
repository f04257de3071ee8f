package models_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/models/demo"
)

// world is a seeded workspace: the demo project with its dataset and
// rubric, the simulated judge, an experiment and two finished runs with
// batches and scores.
type world struct {
	db         *models.DB
	ws         models.Workspace
	project    models.Project
	dataset    models.Dataset
	rubric     models.Rubric
	judge      models.Judge
	experiment models.Experiment
	runs       []models.Run
}

func newWorld(t *testing.T, db *models.DB) *world {
	t.Helper()
	ctx := context.Background()
	w := &world{db: db}
	var err error
	if w.ws, err = db.EnsureDefaultWorkspace(ctx); err != nil {
		t.Fatal(err)
	}
	if w.project, err = demo.Seed(ctx, db, w.ws); err != nil {
		t.Fatal(err)
	}
	ds, err := db.ListDatasets(ctx, w.ws.ID, w.project.ID)
	if err != nil || len(ds) == 0 {
		t.Fatalf("demo datasets: %v", err)
	}
	w.dataset = ds[0]
	rs, err := db.ListRubrics(ctx, w.ws.ID, w.project.ID)
	if err != nil || len(rs) == 0 {
		t.Fatalf("demo rubrics: %v", err)
	}
	w.rubric = rs[0]
	if w.judge, err = db.EnsureSimulatedJudge(ctx, w.ws.ID); err != nil {
		t.Fatal(err)
	}
	w.experiment = models.Experiment{WorkspaceID: w.ws.ID, ProjectID: w.project.ID, DatasetID: w.dataset.ID, Name: "methods"}
	if err := db.CreateExperiment(ctx, &w.experiment); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		w.runs = append(w.runs, w.finishedRun(t, "run "+string(rune('A'+i))))
	}
	if err := db.SetRunExperiment(ctx, w.ws.ID, w.runs[0].ID, w.experiment.ID); err != nil {
		t.Fatal(err)
	}
	return w
}

// newRun stores a queued BatchEval run of the world's dataset, rubric and
// judge, without batches.
func (w *world) newRun(t *testing.T, name string) models.Run {
	t.Helper()
	r := models.Run{WorkspaceID: w.ws.ID, ProjectID: w.project.ID, DatasetID: w.dataset.ID, RubricID: &w.rubric.ID,
		JudgeID: &w.judge.ID, Name: name, Method: models.MethodBatchEval, RubricSnapshot: w.rubric.Evaluator(),
		JudgeSnapshot: w.judge.Snapshot(), CreatedAt: time.Now()}
	if err := w.db.CreateRun(context.Background(), &r, nil); err != nil {
		t.Fatal(err)
	}
	return r
}

// finishedRun stores a succeeded run with one batch and a score per row.
func (w *world) finishedRun(t *testing.T, name string) models.Run {
	t.Helper()
	ctx := context.Background()
	r := w.newRun(t, name)
	rows, err := w.db.ListDatasetRows(ctx, w.dataset.ID, 0, 3)
	if err != nil || len(rows) < 3 {
		t.Fatalf("rows: %v", err)
	}
	ids := []int64{rows[0].ID, rows[1].ID, rows[2].ID}
	bs, err := w.db.CreateRoundBatches(ctx, r.ID, 0, 0, [][]int64{ids})
	if err != nil {
		t.Fatal(err)
	}
	b := bs[0]
	b.Status = models.BatchDone
	var scores []models.RunScore
	for i, id := range ids {
		v := float64(i + 1)
		scores = append(scores, models.RunScore{RunID: r.ID, BatchID: b.ID, RowID: id, Label: i + 1, Score: &v})
	}
	if err := w.db.SaveBatchResult(ctx, models.BatchResult{Batch: b, Scores: scores}); err != nil {
		t.Fatal(err)
	}
	if err := w.db.FinishRun(ctx, r.ID, models.RunSucceeded, ""); err != nil {
		t.Fatal(err)
	}
	if r, err = w.db.FindRun(ctx, w.ws.ID, r.ID); err != nil {
		t.Fatal(err)
	}
	return r
}

// count counts a table's rows matching a condition.
func count(t *testing.T, db *models.DB, table, cond string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.Gorm.Table(table).Where(cond, args...).Count(&n).Error; err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

var local = models.Actor{Label: "local user"}

func TestRenameValidation(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		tests := []struct {
			name    string
			kind    models.Kind
			id      int64
			newName string
			wantErr string // code
			want    string
		}{
			{"project", models.KindProject, w.project.ID, "  Dialogue study  ", "", "Dialogue study"},
			{"empty", models.KindProject, w.project.ID, "", models.EInvalid, ""},
			{"only spaces", models.KindRubric, w.rubric.ID, "   \t ", models.EInvalid, ""},
			{"typed name too long", models.KindJudge, w.judge.ID, strings.Repeat("j", 201), models.EInvalid, ""},
			{"typed name at the limit", models.KindJudge, w.judge.ID, strings.Repeat("j", 200), "", strings.Repeat("j", 200)},
			{"composed name may be longer", models.KindRun, w.runs[0].ID, strings.Repeat("r", 2000), "", strings.Repeat("r", 2000)},
			{"composed name too long", models.KindDataset, w.dataset.ID, strings.Repeat("d", 2001), models.EInvalid, ""},
			{"not in this workspace", models.KindExperiment, w.experiment.ID + 1000, "x", models.ENotFound, ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := db.Rename(ctx, w.ws.ID, tt.kind, tt.id, tt.newName)
				if got := models.ErrorCode(err); got != tt.wantErr {
					t.Fatalf("Rename error code = %q (%v), want %q", got, err, tt.wantErr)
				}
				if tt.wantErr != "" {
					return
				}
				var names []string
				db.Gorm.Table(string(tt.kind)+"s").Where("id = ?", tt.id).Pluck("name", &names)
				if len(names) != 1 || names[0] != tt.want {
					t.Errorf("stored name = %.40q, want %.40q", names, tt.want)
				}
			})
		}
		// A trashed object can't be renamed.
		if _, _, err := db.Trash(ctx, w.ws.ID, models.KindRubric, w.rubric.ID, local); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Rename(ctx, w.ws.ID, models.KindRubric, w.rubric.ID, "new"); models.ErrorCode(err) != models.ENotFound {
			t.Errorf("rename of a trashed rubric: %v, want not found", err)
		}
	})
}

func TestArchiveHidesFromDefaultLists(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		if _, err := db.SetArchived(ctx, w.ws.ID, models.KindRun, w.runs[1].ID, true); err != nil {
			t.Fatal(err)
		}
		ids := func(rs []models.Run) []int64 {
			var out []int64
			for _, r := range rs {
				out = append(out, r.ID)
			}
			return out
		}
		tests := []struct {
			name string
			opts []models.ListOption
			want []int64
		}{
			{"default", nil, []int64{w.runs[0].ID}},
			{"only archived", []models.ListOption{models.OnlyArchived()}, []int64{w.runs[1].ID}},
			{"both", []models.ListOption{models.WithArchived()}, []int64{w.runs[1].ID, w.runs[0].ID}},
		}
		for _, tt := range tests {
			rs, err := db.ListRuns(ctx, w.ws.ID, w.project.ID, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(rs); len(got) != len(tt.want) || (len(got) > 0 && (got[0] != tt.want[0] || got[len(got)-1] != tt.want[len(tt.want)-1])) {
				t.Errorf("%s: runs %v, want %v", tt.name, got, tt.want)
			}
		}
		// Still readable by its address; the archive is undone.
		r, err := db.FindRun(ctx, w.ws.ID, w.runs[1].ID)
		if err != nil || r.ArchivedAt == nil {
			t.Fatalf("archived run: %v, archived_at %v", err, r.ArchivedAt)
		}
		if _, err := db.SetArchived(ctx, w.ws.ID, models.KindRun, w.runs[1].ID, false); err != nil {
			t.Fatal(err)
		}
		if rs, _ := db.ListRuns(ctx, w.ws.ID, w.project.ID); len(rs) != 2 {
			t.Errorf("after unarchive: %d runs listed, want 2", len(rs))
		}
	})
}

// TestTrashProjectAndRestore: a project's contents go with it, every
// lookup then says not found, and restore brings all of it back.
func TestTrashProjectAndRestore(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		lookups := map[string]func() error{
			"project":    func() error { _, err := db.FindProject(ctx, w.ws.ID, w.project.ID); return err },
			"dataset":    func() error { _, err := db.FindDataset(ctx, w.ws.ID, w.dataset.ID); return err },
			"rubric":     func() error { _, err := db.FindRubric(ctx, w.ws.ID, w.rubric.ID); return err },
			"experiment": func() error { _, err := db.FindExperiment(ctx, w.ws.ID, w.experiment.ID); return err },
			"run":        func() error { _, err := db.FindRun(ctx, w.ws.ID, w.runs[1].ID); return err },
		}
		e, plan, err := db.Trash(ctx, w.ws.ID, models.KindProject, w.project.ID, local)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := plan.Summary(), "1 dataset, 1 rubric, 2 runs, 1 experiment"; got != want {
			t.Errorf("summary %q, want %q", got, want)
		}
		for what, find := range lookups {
			if models.ErrorCode(find()) != models.ENotFound {
				t.Errorf("%s of a trashed project is still found", what)
			}
		}
		if ps, _ := db.ListProjects(ctx, w.ws.ID, models.WithArchived()); len(ps) != 0 {
			t.Errorf("trashed project listed: %v", ps)
		}
		if rs, _ := db.ListRuns(ctx, w.ws.ID, 0, models.WithArchived()); len(rs) != 0 {
			t.Errorf("runs of a trashed project listed: %d", len(rs))
		}
		trash, err := db.ListTrash(ctx, w.ws.ID)
		if err != nil || len(trash) != 1 || trash[0].ID != e.ID || trash[0].Name != w.project.Name {
			t.Fatalf("trash = %+v (%v)", trash, err)
		}
		if _, err := db.Restore(ctx, w.ws.ID, e.ID); err != nil {
			t.Fatal(err)
		}
		for what, find := range lookups {
			if err := find(); err != nil {
				t.Errorf("%s after restore: %v", what, err)
			}
		}
		if rs, _ := db.ListExperimentRuns(ctx, w.ws.ID, w.experiment.ID); len(rs) != 1 {
			t.Errorf("experiment runs after restore: %d, want 1", len(rs))
		}
		if trash, _ := db.ListTrash(ctx, w.ws.ID); len(trash) != 0 {
			t.Errorf("trash after restore: %v", trash)
		}
	})
}

// TestTrashInsideTrash: an object deleted on its own before its project
// stays in the trash when the project comes back, and can't come back
// into a project that is still in the trash.
func TestTrashInsideTrash(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		runEntry, _, err := db.Trash(ctx, w.ws.ID, models.KindRun, w.runs[1].ID, local)
		if err != nil {
			t.Fatal(err)
		}
		projEntry, plan, err := db.Trash(ctx, w.ws.ID, models.KindProject, w.project.ID, local)
		if err != nil {
			t.Fatal(err)
		}
		if len(plan.Runs()) != 1 {
			t.Errorf("project took %d runs, want the one still live", len(plan.Runs()))
		}
		_, err = db.Restore(ctx, w.ws.ID, runEntry.ID)
		if models.ErrorCode(err) != models.EConflict || !strings.Contains(err.Error(), w.project.Name) {
			t.Fatalf("restore a run into a trashed project: %v, want a conflict naming the project", err)
		}
		if _, err := db.Restore(ctx, w.ws.ID, projEntry.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.FindRun(ctx, w.ws.ID, w.runs[1].ID); models.ErrorCode(err) != models.ENotFound {
			t.Errorf("run deleted on its own came back with its project: %v", err)
		}
		if _, err := db.Restore(ctx, w.ws.ID, runEntry.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.FindRun(ctx, w.ws.ID, w.runs[1].ID); err != nil {
			t.Errorf("run after its own restore: %v", err)
		}
	})
}

func TestDatasetPlanListsItsRuns(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		w := newWorld(t, db)
		plan, err := db.PlanTrash(context.Background(), w.ws.ID, models.KindDataset, w.dataset.ID)
		if err != nil {
			t.Fatal(err)
		}
		runs := plan.Runs()
		if len(runs) != 2 || runs[0].ID != w.runs[0].ID || runs[1].ID != w.runs[1].ID || runs[0].Name != "run A" {
			t.Errorf("runs using the dataset: %+v, want runs %d and %d", runs, w.runs[0].ID, w.runs[1].ID)
		}
		// A rubric's deletion takes nothing: runs keep their copy.
		plan, err = db.PlanTrash(context.Background(), w.ws.ID, models.KindRubric, w.rubric.ID)
		if err != nil || len(plan.With) != 0 {
			t.Errorf("rubric plan: %+v (%v), want nothing with it", plan.With, err)
		}
	})
}

// TestTrashRefusesWhatIsRunning: unfinished runs must be cancelled first,
// and a judge that a running run calls stays.
func TestTrashRefusesWhatIsRunning(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		r := models.Run{WorkspaceID: w.ws.ID, ProjectID: w.project.ID, DatasetID: w.dataset.ID, JudgeID: &w.judge.ID,
			Name: "going", Method: models.MethodBatchEval, CreatedAt: time.Now()}
		if err := db.CreateRun(ctx, &r, nil); err != nil {
			t.Fatal(err)
		}
		for _, k := range []struct {
			kind models.Kind
			id   int64
		}{{models.KindRun, r.ID}, {models.KindDataset, w.dataset.ID}, {models.KindProject, w.project.ID}, {models.KindJudge, w.judge.ID}} {
			if _, _, err := db.Trash(ctx, w.ws.ID, k.kind, k.id, local); models.ErrorCode(err) != models.EConflict {
				t.Errorf("trash %s with run %d queued: %v, want a conflict", k.kind, r.ID, err)
			}
		}
		if _, err := db.RequestCancel(ctx, w.ws.ID, r.ID); err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.Trash(ctx, w.ws.ID, models.KindJudge, w.judge.ID, local); err != nil {
			t.Errorf("trash judge after cancel: %v", err)
		}
		// The runs keep their judge's copy.
		got, err := db.FindRun(ctx, w.ws.ID, w.runs[0].ID)
		if err != nil || got.JudgeSnapshot.Name != w.judge.Name {
			t.Errorf("run after its judge went to the trash: %v, snapshot %q", err, got.JudgeSnapshot.Name)
		}
	})
}

// TestPurgeRemovesRows: a purge deletes the rows for real, including the
// runs' batches and scores and the dataset's rows.
func TestPurgeRemovesRows(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		runID := w.runs[1].ID
		if n := count(t, db, "run_scores", "run_id = ?", runID); n != 3 {
			t.Fatalf("fixture: %d scores", n)
		}
		// A run on its own, then the dataset (with the other run).
		runEntry, _, err := db.Trash(ctx, w.ws.ID, models.KindRun, runID, local)
		if err != nil {
			t.Fatal(err)
		}
		if _, n, err := db.Purge(ctx, w.ws.ID, runEntry.ID); err != nil || n.Runs != 1 || n.Scores != 3 || n.Batches != 1 {
			t.Fatalf("purge run: %+v (%v)", n, err)
		}
		for table, col := range map[string]string{"runs": "id", "run_batches": "run_id", "run_scores": "run_id"} {
			if n := count(t, db, table, col+" = ?", runID); n != 0 {
				t.Errorf("%s: %d rows of the purged run remain", table, n)
			}
		}
		if n := count(t, db, "run_scores", "run_id = ?", w.runs[0].ID); n != 3 {
			t.Errorf("the other run lost scores: %d left", n)
		}
		rows := count(t, db, "dataset_rows", "dataset_id = ?", w.dataset.ID)
		dsEntry, _, err := db.Trash(ctx, w.ws.ID, models.KindDataset, w.dataset.ID, local)
		if err != nil {
			t.Fatal(err)
		}
		// The project goes too: its purge takes the dataset's entry with it.
		projEntry, _, err := db.Trash(ctx, w.ws.ID, models.KindProject, w.project.ID, local)
		if err != nil {
			t.Fatal(err)
		}
		_, n, err := db.Purge(ctx, w.ws.ID, projEntry.ID)
		if err != nil {
			t.Fatal(err)
		}
		if n.Rows != rows || n.Datasets != 1 || n.Runs != 1 || n.Experiments != 1 || n.Rubrics != 1 {
			t.Errorf("purge project counts %+v, want %d rows, 1 dataset, run, experiment, rubric", n, rows)
		}
		for table, cond := range map[string]string{
			"projects": "id = ?", "datasets": "project_id = ?", "rubrics": "project_id = ?", "runs": "project_id = ?", "experiments": "project_id = ?",
		} {
			if n := count(t, db, table, cond, w.project.ID); n != 0 {
				t.Errorf("%s: %d rows remain", table, n)
			}
		}
		if n := count(t, db, "dataset_rows", "dataset_id = ?", w.dataset.ID); n != 0 {
			t.Errorf("dataset rows remain: %d", n)
		}
		if n := count(t, db, "run_scores", "run_id = ?", w.runs[0].ID); n != 0 {
			t.Errorf("scores remain: %d", n)
		}
		if _, err := db.FindTrashEntry(ctx, w.ws.ID, dsEntry.ID); models.ErrorCode(err) != models.ENotFound {
			t.Errorf("the dataset's entry outlived the purge of its project: %v", err)
		}
		if n := count(t, db, "judges", "id = ?", w.judge.ID); n != 1 {
			t.Errorf("the workspace's judge went with the project")
		}
	})
}

// TestSweepTrash: only entries older than TrashRetention are purged; the
// clock is the argument.
func TestSweepTrash(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		now := time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)
		tests := []struct {
			kind      models.Kind
			id        int64
			age       time.Duration
			wantPurge bool
		}{
			{models.KindRun, w.runs[0].ID, models.TrashRetention + time.Second, true},
			{models.KindRun, w.runs[1].ID, models.TrashRetention - time.Second, false},
			{models.KindRubric, w.rubric.ID, 40 * 24 * time.Hour, true},
			{models.KindJudge, w.judge.ID, time.Hour, false},
		}
		entries := make([]models.TrashEntry, len(tests))
		for i, tt := range tests {
			e, _, err := db.Trash(ctx, w.ws.ID, tt.kind, tt.id, local)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Gorm.Model(&models.TrashEntry{}).Where("id = ?", e.ID).Update("deleted_at", now.Add(-tt.age)).Error; err != nil {
				t.Fatal(err)
			}
			entries[i] = e
		}
		purged, err := db.SweepTrash(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		if len(purged) != 2 {
			t.Errorf("swept %d entries, want 2", len(purged))
		}
		for i, tt := range tests {
			_, err := db.FindTrashEntry(ctx, w.ws.ID, entries[i].ID)
			gone := models.ErrorCode(err) == models.ENotFound
			rows := count(t, db, string(tt.kind)+"s", "id = ?", tt.id)
			if gone != tt.wantPurge || (rows == 0) != tt.wantPurge {
				t.Errorf("%s %d deleted %v ago: entry gone %v, row gone %v, want purged %v", tt.kind, tt.id, tt.age, gone, rows == 0, tt.wantPurge)
			}
		}
	})
}

// TestTrashSweeperLoop: the server's loop purges what is due at start and
// writes each purge to the workspace's audit log.
func TestTrashSweeperLoop(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		w := newWorld(t, db)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		e, _, err := db.Trash(ctx, w.ws.ID, models.KindRun, w.runs[0].ID, local)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().Add(models.TrashRetention + time.Minute)
		done := make(chan struct{})
		go func() {
			defer close(done)
			db.RunTrashSweeper(ctx, time.Hour, func() time.Time { return now }, slog.New(slog.DiscardHandler))
		}()
		deadline := time.Now().Add(10 * time.Second)
		for {
			evs, err := db.ListAudit(context.Background(), w.ws.ID, 0, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) > 0 {
				if evs[0].Action != models.AuditPurged || evs[0].Actor != "trash sweeper" {
					t.Errorf("audit event %+v, want a purge by the sweeper", evs[0])
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the sweeper wrote no audit event")
			}
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
		<-done
		if _, err := db.FindTrashEntry(context.Background(), w.ws.ID, e.ID); models.ErrorCode(err) != models.ENotFound {
			t.Errorf("entry after the sweep: %v", err)
		}
	})
}
