package models_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/models/demo"
)

// TestFieldLengthLimits: every stored text has a bound, and the refusal
// names the field, its length and the limit; nothing is stored.
func TestFieldLengthLimits(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		ws, _ := db.EnsureDefaultWorkspace(ctx)
		long := func(n int) string { return strings.Repeat("x", n) }
		p := models.Project{WorkspaceID: ws.ID, Name: "p"}
		if err := db.CreateProject(ctx, &p); err != nil {
			t.Fatal(err)
		}
		crit := func(desc string) []evaluator.Criterion {
			return []evaluator.Criterion{{Name: "Q", Description: desc, Lo: 1, Hi: 5}}
		}
		for _, tc := range []struct {
			name string
			save func() error
			want string
		}{
			{"project name", func() error {
				return db.CreateProject(ctx, &models.Project{WorkspaceID: ws.ID, Name: long(9 << 20)})
			}, "the project name is 9437184 characters long; the limit is 200"},
			{"rubric task", func() error {
				return db.SaveRubric(ctx, &models.Rubric{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "r", Task: long(20001), Criteria: crit("d")})
			}, "the rubric task is 20001 characters long; the limit is 20000"},
			{"criterion description", func() error {
				return db.SaveRubric(ctx, &models.Rubric{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "r", Task: "t", Criteria: crit(long(5001))})
			}, "the criterion 1 description is 5001 characters long; the limit is 5000"},
			{"judge name", func() error {
				return db.SaveJudge(ctx, &models.Judge{WorkspaceID: ws.ID, Name: long(201), BaseURL: "http://x/v1", Model: "m"})
			}, "the judge name is 201 characters long"},
			{"base URL", func() error {
				return db.SaveJudge(ctx, &models.Judge{WorkspaceID: ws.ID, Name: "j", BaseURL: "http://x/" + long(2000), Model: "m"})
			}, "the base URL is 2009 characters long; the limit is 2000"},
			{"experiment name", func() error {
				return db.CreateExperiment(ctx, &models.Experiment{WorkspaceID: ws.ID, ProjectID: p.ID, Name: long(2001)})
			}, "the experiment name is 2001 characters long; the limit is 2000"},
			// Texts without a bound before: a labelled example's, G-Eval
			// steps sent with every call.
			{"example text", func() error {
				c := crit("d")
				c[0].Examples = []evaluator.Example{{Score: 3, Fields: []evaluator.Text{{Label: "Reply", Value: long(20001)}}}}
				return db.SaveRubric(ctx, &models.Rubric{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "r", Task: "t", Criteria: c})
			}, "the criterion 1 example 1 text of field 1 is 20001 characters long; the limit is 20000"},
			{"example label", func() error {
				c := crit("d")
				c[0].Examples = []evaluator.Example{{Score: 3, Fields: []evaluator.Text{{Label: long(201), Value: "v"}}}}
				return db.SaveRubric(ctx, &models.Rubric{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "r", Task: "t", Criteria: c})
			}, "the criterion 1 example 1 label of field 1 is 201 characters long; the limit is 200"},
			{"G-Eval steps", func() error {
				run := models.Run{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "r",
					MethodSettings: evaluator.MethodSettings{GEvalSteps: map[string]string{"Q": long(20001)}}}
				return db.CreateRun(ctx, &run, nil)
			}, `the text of the G-Eval steps of criterion "Q" is 20001 characters long; the limit is 20000`},
			// Limits counted in characters, not bytes (a name in Chinese
			// was refused at 67 characters).
			{"share label", func() error {
				_, _, err := db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: ws.ID, Kind: models.ShareRun, RunID: 1, Label: strings.Repeat("标", 201)})
				return err
			}, "the label is 201 characters long; the limit is 200"},
			{"workspace name", func() error {
				_, err := db.CreateWorkspace(ctx, strings.Repeat("标", 201), 1)
				return err
			}, "the workspace name is 201 characters long; the limit is 200"},
			{"person's name", func() error {
				_, err := db.CreateUser(ctx, ws.ID, models.RoleEditor, models.NewUser{Email: "a@b.test", Name: strings.Repeat("标", 201), Password: "a long enough password"})
				return err
			}, "the name is 201 characters long; the limit is 200"},
		} {
			err := tc.save()
			if models.ErrorCode(err) != models.EInvalid || models.ErrorMessage(err) != tc.want && !strings.Contains(models.ErrorMessage(err), tc.want) {
				t.Errorf("%s: %v, want an invalid error saying %q", tc.name, err, tc.want)
			}
		}
		// Up to the limit, in characters, is accepted.
		u, err := db.CreateUser(ctx, ws.ID, models.RoleEditor, models.NewUser{Email: "cjk@b.test", Name: strings.Repeat("标", 200), Password: "a long enough password"})
		if err != nil {
			t.Fatalf("a name of 200 Chinese characters: %v", err)
		}
		if _, err := db.CreateWorkspace(ctx, strings.Repeat("标", 200), u.ID); err != nil {
			t.Errorf("a workspace name of 200 Chinese characters: %v", err)
		}
		if ps, _ := db.ListProjects(ctx, ws.ID); len(ps) != 1 {
			t.Errorf("%d projects stored, want 1", len(ps))
		}
		if rs, _ := db.ListRubrics(ctx, ws.ID, p.ID); len(rs) != 0 {
			t.Errorf("%d rubrics stored, want 0", len(rs))
		}
		// The workspace's built-in simulated judge is not one of them.
		if js, _ := db.ListJudges(ctx, ws.ID); len(js) != 1 || !js[0].Simulated {
			t.Errorf("judges stored: %+v, want only the simulated judge", js)
		}
	})
}

// TestUploadQuotaAndExpiry: a workspace's pending uploads are bounded by
// the quota (other workspaces are not affected); an expired upload is not
// found and the sweep deletes it.
func TestUploadQuotaAndExpiry(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		ws, _ := db.EnsureDefaultWorkspace(ctx)
		other := models.Workspace{Slug: "other", Name: "Other", CreatedAt: time.Now()}
		if err := db.Gorm.Create(&other).Error; err != nil {
			t.Fatal(err)
		}
		file := func(wsID int64, n int) *models.PendingUpload {
			return &models.PendingUpload{WorkspaceID: wsID, Filename: "f.csv", Format: "csv", Content: []byte(strings.Repeat("a", n))}
		}
		const quota = 1000
		first := file(ws.ID, 600)
		if err := db.SavePendingUpload(ctx, first, quota); err != nil {
			t.Fatal(err)
		}
		err := db.SavePendingUpload(ctx, file(ws.ID, 500), quota)
		if models.ErrorCode(err) != models.EConflict || !strings.Contains(models.ErrorMessage(err), "quota") {
			t.Fatalf("over the quota: %v, want a conflict mentioning the quota", err)
		}
		if err := db.SavePendingUpload(ctx, file(ws.ID, 400), quota); err != nil {
			t.Errorf("exactly at the quota: %v", err)
		}
		if err := db.SavePendingUpload(ctx, file(other.ID, 900), quota); err != nil {
			t.Errorf("another workspace: %v", err)
		}
		// Importing (deleting) an upload frees its room.
		if err := db.DeletePendingUpload(ctx, first.ID); err != nil {
			t.Fatal(err)
		}
		if err := db.SavePendingUpload(ctx, file(ws.ID, 500), quota); err != nil {
			t.Errorf("after an import freed room: %v", err)
		}

		// Expiry: an upload older than the TTL is not found, then swept.
		old := file(ws.ID, 10)
		if err := db.SavePendingUpload(ctx, old, 0); err != nil {
			t.Fatal(err)
		}
		db.Gorm.Model(&models.PendingUpload{}).Where("id = ?", old.ID).Update("created_at", time.Now().UTC().Add(-models.UploadTTL-time.Minute))
		if _, err := db.FindPendingUpload(ctx, ws.ID, old.Token); models.ErrorCode(err) != models.ENotFound {
			t.Errorf("an expired upload was found: %v", err)
		}
		n, err := db.PurgeExpiredUploads(ctx, time.Now())
		if err != nil || n != 1 {
			t.Errorf("PurgeExpiredUploads = %d, %v; want 1", n, err)
		}
		var left int64
		db.Gorm.Model(&models.PendingUpload{}).Count(&left)
		if left != 3 {
			t.Errorf("%d uploads left, want 3", left)
		}
	})
}

// TestRunsPerWorkspaceLimit: past the limit of runs queued or running at
// once a launch is refused with a message; finished runs do not count.
func TestRunsPerWorkspaceLimit(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		ws, _ := db.EnsureDefaultWorkspace(ctx)
		p, err := demo.Seed(ctx, db, ws)
		if err != nil {
			t.Fatal(err)
		}
		ds, _ := db.ListDatasets(ctx, ws.ID, p.ID)
		db.MaxActiveRunsPerWorkspace = 2
		newRun := func() *models.Run {
			return &models.Run{WorkspaceID: ws.ID, ProjectID: p.ID, DatasetID: ds[0].ID, Name: "r", Method: "batcheval"}
		}
		var runs []*models.Run
		for range 2 {
			r := newRun()
			if err := db.CreateRun(ctx, r, nil); err != nil {
				t.Fatal(err)
			}
			runs = append(runs, r)
		}
		err = db.CreateRun(ctx, newRun(), nil)
		if models.ErrorCode(err) != models.EConflict || !strings.Contains(models.ErrorMessage(err), "BATCHEVAL_MAX_RUNS_PER_WORKSPACE") {
			t.Fatalf("a third run: %v, want a conflict naming the setting", err)
		}
		if err := db.CheckRunCapacity(ctx, ws.ID, 1); err == nil {
			t.Error("CheckRunCapacity allowed one more")
		}
		// A finished run frees its place.
		db.Gorm.Model(runs[0]).Update("status", models.RunSucceeded)
		if err := db.CheckRunCapacity(ctx, ws.ID, 2); err == nil || !strings.Contains(models.ErrorMessage(err), "these 2") {
			t.Errorf("CheckRunCapacity(2) with one place = %v", err)
		}
		if err := db.CreateRun(ctx, newRun(), nil); err != nil {
			t.Errorf("after a run finished: %v", err)
		}
		db.MaxActiveRunsPerWorkspace = 0
		if err := db.CreateRun(ctx, newRun(), nil); err != nil {
			t.Errorf("without a limit: %v", err)
		}
	})
}

// TestRenameUsesCreationLimits: renaming an object takes the same bound
// and gives the same refusal as creating it (one set of limits).
func TestRenameUsesCreationLimits(t *testing.T) {
	for _, tc := range []struct {
		kind  models.Kind
		limit int
	}{
		{models.KindProject, models.MaxNameLength},
		{models.KindRubric, models.MaxNameLength},
		{models.KindJudge, models.MaxNameLength},
		{models.KindDataset, models.MaxComposedNameLength},
		{models.KindRun, models.MaxComposedNameLength},
		{models.KindExperiment, models.MaxComposedNameLength},
	} {
		if got := models.MaxNameFor(tc.kind); got != tc.limit {
			t.Errorf("%s: rename limit %d, creation limit %d", tc.kind, got, tc.limit)
		}
		if name, err := models.CheckNewName(tc.kind, " "+strings.Repeat("é", tc.limit)+" "); err != nil || len([]rune(name)) != tc.limit {
			t.Errorf("%s: a name at the limit: %v", tc.kind, err)
		}
		_, err := models.CheckNewName(tc.kind, strings.Repeat("x", tc.limit+1))
		create := models.CheckLength(string(tc.kind)+" name", strings.Repeat("x", tc.limit+1), tc.limit)
		if err == nil || create == nil || models.ErrorMessage(err) != models.ErrorMessage(create) {
			t.Errorf("%s: rename refusal %v, creation refusal %v: want the same", tc.kind, err, create)
		}
	}
	if _, err := models.CheckNewName(models.KindRun, "  "); models.ErrorCode(err) != models.EInvalid {
		t.Errorf("blank name: %v, want invalid", err)
	}
}
