package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestAPIListsExperimentsDatasetsAndRubrics: experiments are listed a
// page at a time (GET /api/v1/experiments, ?project_id=), as a project's
// datasets and rubrics are (GET /api/v1/projects/{id}/datasets and
// .../rubrics); the project itself lists the first 200 of each and, past
// that, the address of the next page. There was no experiments list, and
// the project listed every dataset and rubric it had.
func TestAPIListsExperimentsDatasetsAndRubrics(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		a := newAPIClient(t, env)
		// A project of 203 rubrics and 3 datasets; two experiments there,
		// one in the demo project.
		proj := models.Project{WorkspaceID: env.ws.ID, Name: "big"}
		if err := env.db.CreateProject(ctx, &proj); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < apiMaxLimit+3; i++ {
			r := models.Rubric{WorkspaceID: env.ws.ID, ProjectID: proj.ID, Name: fmt.Sprintf("r%03d", i), Task: "t",
				Criteria: []evaluator.Criterion{{Name: "Q", Lo: 1, Hi: 5}}}
			if err := env.db.SaveRubric(ctx, &r); err != nil {
				t.Fatal(err)
			}
		}
		demo := *env
		demo.project = proj
		var datasets []int64
		for i := 0; i < 3; i++ {
			datasets = append(datasets, demo.ratedDataset(fmt.Sprintf("d%d", i), 2).ds.ID)
		}
		var exps []int64
		for _, pid := range []int64{proj.ID, env.project.ID, proj.ID} {
			e := models.Experiment{WorkspaceID: env.ws.ID, ProjectID: pid, DatasetID: datasets[0], Name: fmt.Sprintf("e in %d", pid)}
			if err := env.db.CreateExperiment(ctx, &e); err != nil {
				t.Fatal(err)
			}
			exps = append(exps, e.ID)
		}

		walk := func(first string) []int64 {
			var ids []int64
			next := first
			for pages := 0; next != "" && pages < 20; pages++ {
				pg := decode[Page[map[string]any]](t, a.get(next, ""), http.StatusOK)
				for _, it := range pg.Items {
					ids = append(ids, int64(it["id"].(float64)))
				}
				next = ""
				if pg.NextCursor != "" {
					sep := "?"
					if strings.Contains(first, "?") {
						sep = "&"
					}
					next = first + sep + "cursor=" + pg.NextCursor
				}
			}
			return ids
		}
		if got := walk(fmt.Sprintf("/api/v1/experiments?project_id=%d&limit=1", proj.ID)); fmt.Sprint(got) != fmt.Sprint([]int64{exps[0], exps[2]}) {
			t.Errorf("the project's experiments = %v, want %v", got, []int64{exps[0], exps[2]})
		}
		if got := walk("/api/v1/experiments?limit=2"); fmt.Sprint(got) != fmt.Sprint(exps) {
			t.Errorf("the workspace's experiments = %v, want %v", got, exps)
		}
		if rec := a.get("/api/v1/experiments?project_id=999999", ""); rec.Code != http.StatusNotFound {
			t.Errorf("experiments of no project: %d", rec.Code)
		}
		if got := walk(fmt.Sprintf("/api/v1/projects/%d/datasets?limit=2", proj.ID)); fmt.Sprint(got) != fmt.Sprint(datasets) {
			t.Errorf("datasets = %v, want %v", got, datasets)
		}
		if got := walk(fmt.Sprintf("/api/v1/projects/%d/rubrics?limit=200", proj.ID)); len(got) != apiMaxLimit+3 {
			t.Errorf("%d rubrics listed, want %d", len(got), apiMaxLimit+3)
		}

		detail := decode[APIProjectDetail](t, a.get(fmt.Sprintf("/api/v1/projects/%d", proj.ID), ""), http.StatusOK)
		if len(detail.Rubrics) != apiMaxLimit || len(detail.Datasets) != 3 || detail.DatasetsNext != "" {
			t.Fatalf("project: %d rubrics, %d datasets, datasets_next %q", len(detail.Rubrics), len(detail.Datasets), detail.DatasetsNext)
		}
		rest := decode[Page[APIRubric]](t, a.get(detail.RubricsNext, ""), http.StatusOK)
		if len(rest.Items) != 3 || rest.Items[0].ID != detail.Rubrics[apiMaxLimit-1].ID+1 || rest.NextCursor != "" {
			t.Errorf("rubrics_next %q gave %d rubrics", detail.RubricsNext, len(rest.Items))
		}
	})
}
