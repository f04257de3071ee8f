package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

var confirmed = url.Values{"confirm": {"yes"}}

// trashEntryOf finds the trash entry of an object.
func (env *testEnv) trashEntryOf(k models.Kind, id int64) models.TrashEntry {
	env.t.Helper()
	es, err := env.db.ListTrash(context.Background(), env.ws.ID)
	if err != nil {
		env.t.Fatal(err)
	}
	for _, e := range es {
		if e.Kind == k && e.ObjectID == id {
			return e
		}
	}
	env.t.Fatalf("%s %d is not in the trash (%d entries)", k, id, len(es))
	return models.TrashEntry{}
}

// TestDeleteProjectThenRestore: every page of a deleted project's contents
// answers 404 until the project is restored from the trash page.
func TestDeleteProjectThenRestore(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		runID := env.launch(d.launchForm("1", "10"))
		env.waitRun(runID, 60*time.Second)
		pages := []string{
			fmt.Sprintf("/projects/%d", env.project.ID),
			fmt.Sprintf("/datasets/%d", d.dataset.ID),
			fmt.Sprintf("/rubrics/%d/edit", d.rubric.ID),
			fmt.Sprintf("/runs/%d", runID),
			fmt.Sprintf("/runs/%d/export.csv", runID),
			fmt.Sprintf("/runs/%d/events", runID),
			fmt.Sprintf("/projects/%d/runs/new", env.project.ID),
		}
		for _, p := range pages {
			if rec := env.get(p); rec.Code != http.StatusOK {
				t.Fatalf("before: GET %s = %d", p, rec.Code)
			}
		}
		rec := env.postForm(fmt.Sprintf("/projects/%d/delete", env.project.ID), confirmed)
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/" {
			t.Fatalf("delete project: %d to %q", rec.Code, rec.Header().Get("Location"))
		}
		for _, p := range pages {
			if rec := env.get(p); rec.Code != http.StatusNotFound {
				t.Errorf("after delete: GET %s = %d, want 404", p, rec.Code)
			}
		}
		if body := env.get("/").Body.String(); strings.Contains(body, env.project.Name) {
			t.Errorf("the projects list still shows the deleted project")
		}
		if body := env.get("/runs?show=all").Body.String(); strings.Contains(body, fmt.Sprintf(`href="/runs/%d"`, runID)) {
			t.Errorf("the runs list still shows a run of the deleted project")
		}
		trash := env.get("/trash").Body.String()
		e := env.trashEntryOf(models.KindProject, env.project.ID)
		if !strings.Contains(trash, env.project.Name) || !strings.Contains(trash, "1 dataset") || !strings.Contains(trash, "1 run") {
			t.Errorf("trash page lacks the project and what went with it: %s", e.Detail)
		}
		rec = env.postForm(fmt.Sprintf("/trash/%d/restore", e.ID), nil)
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != pages[0] {
			t.Fatalf("restore: %d to %q", rec.Code, rec.Header().Get("Location"))
		}
		for _, p := range pages {
			if rec := env.get(p); rec.Code != http.StatusOK {
				t.Errorf("after restore: GET %s = %d, want 200", p, rec.Code)
			}
		}
		acts := env.auditActions()
		for _, want := range []string{models.AuditDeleted, models.AuditRestored} {
			if !hasAction(acts, want) {
				t.Errorf("audit log lacks %q: %v", want, acts)
			}
		}
	})
}

// TestDeleteDatasetInUseAsks: the confirmation page names the runs that
// use the dataset, and a post without confirmation deletes nothing.
func TestDeleteDatasetInUseAsks(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		var runs []models.Run
		for range 2 {
			runs = append(runs, env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second))
		}
		if _, err := env.db.Rename(ctx, env.ws.ID, models.KindRun, runs[1].ID, "second <look>"); err != nil {
			t.Fatal(err)
		}
		path := fmt.Sprintf("/datasets/%d/delete", d.dataset.ID)
		rec := env.get(path)
		body := rec.Body.String()
		if rec.Code != http.StatusOK || !strings.Contains(body, `data-testid="runs-going"`) {
			t.Fatalf("confirm page: %d, no list of runs", rec.Code)
		}
		for _, r := range runs {
			if !strings.Contains(body, fmt.Sprintf(`href="/runs/%d"`, r.ID)) {
				t.Errorf("confirm page does not name run %d", r.ID)
			}
		}
		if !strings.Contains(body, "2 runs go to the trash with it") || !strings.Contains(body, "second &lt;look&gt;") {
			t.Errorf("confirm page does not say that 2 runs go, by name")
		}
		if !strings.Contains(body, `name="confirm" value="yes"`) || strings.Contains(body, "<script>") {
			t.Errorf("the confirmation must be a plain form")
		}
		rec = env.postForm(path, nil)
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != path {
			t.Errorf("unconfirmed delete: %d to %q, want 303 to the confirm page", rec.Code, rec.Header().Get("Location"))
		}
		if _, err := env.db.FindDataset(ctx, env.ws.ID, d.dataset.ID); err != nil {
			t.Fatalf("an unconfirmed post deleted the dataset: %v", err)
		}
		if rec := env.postForm(path, confirmed); rec.Code != http.StatusSeeOther {
			t.Fatalf("confirmed delete: %d", rec.Code)
		}
		for _, r := range runs {
			if rec := env.get(fmt.Sprintf("/runs/%d", r.ID)); rec.Code != http.StatusNotFound {
				t.Errorf("run %d of a deleted dataset: %d, want 404", r.ID, rec.Code)
			}
		}
	})
}

// TestDeleteRubricAndJudgeKeepRunPages: runs keep their copies, so their
// pages and exports work with the rubric and judge in the trash.
func TestDeleteRubricAndJudgeKeepRunPages(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		runID := env.launch(d.launchForm("1", "10"))
		env.waitRun(runID, 60*time.Second)
		bs, err := env.db.ListBatches(ctx, runID)
		if err != nil || len(bs) == 0 {
			t.Fatalf("batches: %v", err)
		}
		for _, p := range []string{fmt.Sprintf("/rubrics/%d/delete", d.rubric.ID), fmt.Sprintf("/judges/%d/delete", d.judge.ID)} {
			if rec := env.postForm(p, confirmed); rec.Code != http.StatusSeeOther {
				t.Fatalf("POST %s: %d %s", p, rec.Code, rec.Body.String())
			}
		}
		for _, p := range []string{
			fmt.Sprintf("/runs/%d", runID),
			fmt.Sprintf("/runs/%d/samples/%d", runID, bs[0].RowIDs[0]),
			fmt.Sprintf("/runs/%d/batches/%d", runID, bs[0].ID),
			fmt.Sprintf("/runs/%d/export.csv", runID),
			fmt.Sprintf("/runs/%d/export.json", runID),
			fmt.Sprintf("/runs/%d/variants", runID),
			"/runs",
			fmt.Sprintf("/projects/%d", env.project.ID),
		} {
			if rec := env.get(p); rec.Code != http.StatusOK {
				t.Errorf("GET %s with rubric and judge in the trash: %d", p, rec.Code)
			}
		}
		if rec := env.get(fmt.Sprintf("/judges/%d/edit", d.judge.ID)); rec.Code != http.StatusNotFound {
			t.Errorf("trashed judge's page: %d, want 404", rec.Code)
		}
		if body := env.get("/judges").Body.String(); strings.Contains(body, d.judge.Name) {
			t.Errorf("judges list shows the trashed judge")
		}
	})
}

// TestDeleteRunningRunCancelsIt: a run in the trash must not go on
// calling the judge.
func TestDeleteRunningRunCancelsIt(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		// 50 rounds of one-sample batches: far too long to finish first.
		runID := env.launch(env.demo().launchForm("50", "1"))
		body := env.get(fmt.Sprintf("/runs/%d/delete", runID)).Body.String()
		if !strings.Contains(body, `data-testid="will-cancel"`) {
			t.Errorf("confirm page does not say the run is cancelled first")
		}
		if rec := env.postForm(fmt.Sprintf("/runs/%d/delete", runID), confirmed); rec.Code != http.StatusSeeOther {
			t.Fatalf("delete running run: %d %s", rec.Code, rec.Body.String())
		}
		run, err := env.db.GetRun(ctx, runID)
		if err != nil {
			t.Fatal(err)
		}
		if run.Status != models.RunCancelled || !run.CancelRequested || run.TrashID == nil {
			t.Errorf("run after delete: status %s, cancel requested %v, trash %v; want cancelled and in the trash", run.Status, run.CancelRequested, run.TrashID)
		}
		acts := env.auditActions()
		if !hasAction(acts, models.AuditRunCancelled) || !hasAction(acts, models.AuditDeleted) {
			t.Errorf("audit log %v lacks the cancel or the deletion", acts)
		}
	})
}

func TestRenameForm(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		tests := []struct {
			name      string
			path      string
			newName   string
			wantCode  int
			wantInBod string
		}{
			{"empty", fmt.Sprintf("/projects/%d/rename", env.project.ID), "   ", http.StatusUnprocessableEntity, "Give the project a name, then press Rename again."},
			{"too long", fmt.Sprintf("/rubrics/%d/rename", d.rubric.ID), strings.Repeat("x", 201), http.StatusUnprocessableEntity, "201 characters long; the limit is 200"},
			{"huge", fmt.Sprintf("/datasets/%d/rename", d.dataset.ID), strings.Repeat("y", 1<<19), http.StatusUnprocessableEntity, "the limit is 2000"},
			// Past the form body limit the request is refused before the
			// handler, naming the field.
			{"larger than a form", fmt.Sprintf("/datasets/%d/rename", d.dataset.ID), strings.Repeat("y", 1<<20), http.StatusRequestEntityTooLarge, "The field “name” is too long"},
			{"no such object", "/experiments/999999/rename", "fine", http.StatusNotFound, ""},
			{"good", fmt.Sprintf("/projects/%d/rename", env.project.ID), "Renamed <study>", http.StatusSeeOther, ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				rec := env.postForm(tt.path, url.Values{"name": {tt.newName}})
				if rec.Code != tt.wantCode || !strings.Contains(rec.Body.String(), tt.wantInBod) {
					t.Errorf("status %d, want %d with %q; body %.300s", rec.Code, tt.wantCode, tt.wantInBod, rec.Body.String())
				}
				if rec.Code == http.StatusUnprocessableEntity && rec.Body.Len() > 100_000 {
					t.Errorf("the refusal page echoes the huge name back: %d bytes", rec.Body.Len())
				}
			})
		}
		p, err := env.db.FindProject(ctx, env.ws.ID, env.project.ID)
		if err != nil || p.Name != "Renamed <study>" {
			t.Errorf("project name %q (%v)", p.Name, err)
		}
		if r, _ := env.db.FindRubric(ctx, env.ws.ID, d.rubric.ID); r.Name != d.rubric.Name {
			t.Errorf("a refused rename changed the rubric's name to %.40q", r.Name)
		}
		if !hasAction(env.auditActions(), models.AuditRenamed) {
			t.Errorf("no rename in the audit log")
		}
	})
}

func TestArchiveAndFilter(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		runID := env.launch(env.demo().launchForm("1", "10"))
		env.waitRun(runID, 60*time.Second)
		link := fmt.Sprintf(`href="/runs/%d"`, runID)
		if rec := env.postForm(fmt.Sprintf("/runs/%d/archive", runID), nil); rec.Code != http.StatusSeeOther {
			t.Fatalf("archive: %d", rec.Code)
		}
		tests := []struct {
			path   string
			listed bool
		}{
			{"/runs", false},
			{"/runs?show=archived", true},
			{"/runs?show=all", true},
			{fmt.Sprintf("/projects/%d", env.project.ID), false},
			{fmt.Sprintf("/projects/%d?show=archived", env.project.ID), true},
		}
		for _, tt := range tests {
			if got := strings.Contains(env.get(tt.path).Body.String(), link); got != tt.listed {
				t.Errorf("GET %s lists the archived run: %v, want %v", tt.path, got, tt.listed)
			}
		}
		rec := env.get(fmt.Sprintf("/runs/%d", runID))
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `data-testid="archived-notice"`) {
			t.Errorf("archived run's page: %d, notice shown %v", rec.Code, strings.Contains(rec.Body.String(), "archived-notice"))
		}
		if rec := env.postForm(fmt.Sprintf("/runs/%d/unarchive", runID), nil); rec.Code != http.StatusSeeOther {
			t.Fatalf("unarchive: %d", rec.Code)
		}
		if !strings.Contains(env.get("/runs").Body.String(), link) {
			t.Errorf("the run is not listed after unarchive")
		}
		acts := env.auditActions()
		if !hasAction(acts, models.AuditArchived) || !hasAction(acts, models.AuditUnarchived) {
			t.Errorf("audit log %v lacks archive or unarchive", acts)
		}
	})
}

// TestLifecycleRoles: viewers can't delete, editors can't delete or
// restore judges, only owners purge; purge removes the rows.
func TestLifecycleRoles(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		runID := env.launch(d.launchForm("1", "10"))
		env.waitRun(runID, 60*time.Second)
		viewer := env.sessionCookie(env.createUser(env.ws.ID, "viewer@a.test", models.RoleViewer))
		editor := env.sessionCookie(env.createUser(env.ws.ID, "editor@a.test", models.RoleEditor))
		owner := env.sessionCookie(env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner))
		i := func(n int64) string { return fmt.Sprint(n) }
		entry := func(k models.Kind, id int64) string { return i(env.trashEntryOf(k, id).ID) }
		steps := []struct {
			name   string
			who    *http.Cookie
			method string
			path   func() string
			form   url.Values
			want   int
		}{
			{"viewer deletes a run", viewer, http.MethodPost, func() string { return "/runs/" + i(runID) + "/delete" }, confirmed, http.StatusForbidden},
			{"viewer renames a dataset", viewer, http.MethodPost, func() string { return "/datasets/" + i(d.dataset.ID) + "/rename" }, url.Values{"name": {"x"}}, http.StatusForbidden},
			{"viewer archives a project", viewer, http.MethodPost, func() string { return "/projects/" + i(env.project.ID) + "/archive" }, nil, http.StatusForbidden},
			{"viewer opens the delete page", viewer, http.MethodGet, func() string { return "/runs/" + i(runID) + "/delete" }, nil, http.StatusForbidden},
			{"editor deletes a judge", editor, http.MethodPost, func() string { return "/judges/" + i(d.judge.ID) + "/delete" }, confirmed, http.StatusForbidden},
			{"editor deletes a run", editor, http.MethodPost, func() string { return "/runs/" + i(runID) + "/delete" }, confirmed, http.StatusSeeOther},
			{"viewer sees the trash", viewer, http.MethodGet, func() string { return "/trash" }, nil, http.StatusOK},
			{"viewer restores", viewer, http.MethodPost, func() string { return "/trash/" + entry(models.KindRun, runID) + "/restore" }, nil, http.StatusForbidden},
			{"editor purges", editor, http.MethodPost, func() string { return "/trash/" + entry(models.KindRun, runID) + "/purge" }, nil, http.StatusForbidden},
			{"owner deletes the judge", owner, http.MethodPost, func() string { return "/judges/" + i(d.judge.ID) + "/delete" }, confirmed, http.StatusSeeOther},
			{"editor restores the judge", editor, http.MethodPost, func() string { return "/trash/" + entry(models.KindJudge, d.judge.ID) + "/restore" }, nil, http.StatusForbidden},
			{"owner restores the judge", owner, http.MethodPost, func() string { return "/trash/" + entry(models.KindJudge, d.judge.ID) + "/restore" }, nil, http.StatusSeeOther},
			{"owner asked before purging", owner, http.MethodPost, func() string { return "/trash/" + entry(models.KindRun, runID) + "/purge" }, nil, http.StatusOK},
			{"owner purges the run", owner, http.MethodPost, func() string { return "/trash/" + entry(models.KindRun, runID) + "/purge" }, confirmed, http.StatusSeeOther},
		}
		for _, s := range steps {
			rec := env.send(s.method, s.path(), s.form, "", s.who)
			if rec.Code != s.want {
				t.Errorf("%s: %d, want %d (%.200s)", s.name, rec.Code, s.want, rec.Body.String())
			}
		}
		if body := env.send(http.MethodGet, "/trash", nil, "", viewer).Body.String(); strings.Contains(body, `data-testid="restore"`) || strings.Contains(body, `data-testid="purge"`) {
			t.Errorf("the viewer's trash page offers restore or purge")
		}
		if _, err := env.db.FindJudge(ctx, env.ws.ID, d.judge.ID); err != nil {
			t.Errorf("judge after the owner restored it: %v", err)
		}
		var n int64
		for _, table := range []string{"runs", "run_batches", "run_scores"} {
			col := "run_id"
			if table == "runs" {
				col = "id"
			}
			env.db.Gorm.Table(table).Where(col+" = ?", runID).Count(&n)
			if n != 0 {
				t.Errorf("%s: %d rows of the purged run remain", table, n)
			}
		}
		if !hasAction(env.auditActions(), models.AuditPurged) {
			t.Errorf("no purge in the audit log")
		}
	})
}
