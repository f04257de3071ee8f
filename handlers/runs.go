package handlers

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/web"
)

// registerRunRoutes wires launching, following and reading runs.
func (h *Handlers) registerRunRoutes(e *echo.Echo) {
	e.GET("/projects/:id/runs/new", h.showLaunchForm)
	e.POST("/projects/:id/runs", h.launchRun)
	e.POST("/runs/estimate", h.estimateRun)
	e.GET("/runs", h.listRuns)
	e.GET("/runs/:id", h.showRun)
	e.POST("/runs/:id/cancel", h.cancelRun)
	e.GET("/runs/:id/events", h.streamRunEvents)
	e.GET("/runs/:id/samples/:rowID", h.showRunSample)
	e.GET("/runs/:id/batches/:batchID", h.showRunBatch)
	e.GET("/runs/:id/export.csv", h.exportRunCSV)
	e.GET("/runs/:id/export.json", h.exportRunJSON)
}

// completionTokensPerSample is the estimate's assumption for the judge's
// answer: a two- or three-sentence analysis plus the score, per sample and
// round. Real answers vary with the judge and the procedure.
const completionTokensPerSample = 60

// samplesPerPage keeps the run page light on large datasets.
const samplesPerPage = 50

// ---- launch form ----

func runURL(id int64) string { return "/runs/" + strconv.FormatInt(id, 10) }

// ---- list and run page ----

func (h *Handlers) listRuns(c echo.Context) error {
	ctx := c.Request().Context()
	runs, err := h.DB.ListRuns(ctx, h.Workspace.ID, 0)
	if err != nil {
		return err
	}
	names := map[int64]string{}
	v := web.RunsView{Page: page(c, "Runs")}
	for _, r := range runs {
		name, ok := names[r.DatasetID]
		if !ok {
			name = "(deleted dataset)"
			if d, err := h.DB.FindDataset(ctx, h.Workspace.ID, r.DatasetID); err == nil {
				name = d.Name
			}
			names[r.DatasetID] = name
		}
		v.Runs = append(v.Runs, web.RunListItem{Run: r, DatasetName: name})
	}
	return render(c, http.StatusOK, web.RunsPage(v))
}

// findRun reads the :id parameter and the run it names.
func (h *Handlers) findRun(c echo.Context) (models.Run, error) {
	id, err := paramID(c, "id")
	if err != nil {
		return models.Run{}, err
	}
	return h.DB.FindRun(c.Request().Context(), h.Workspace.ID, id)
}

func (h *Handlers) showRun(c echo.Context) error {
	ctx := c.Request().Context()
	run, err := h.findRun(c)
	if err != nil {
		return err
	}
	v := web.RunView{Page: page(c, run.Name), Run: run, Progress: runProgress(run, time.Now()),
		ProjectURL: "/projects/" + strconv.FormatInt(run.ProjectID, 10), Project: "Project", Dataset: "(deleted dataset)", Rubric: "(deleted rubric)"}
	if p, err := h.DB.FindProject(ctx, h.Workspace.ID, run.ProjectID); err == nil {
		v.Project = p.Name
	}
	if d, err := h.DB.FindDataset(ctx, h.Workspace.ID, run.DatasetID); err == nil {
		v.Dataset = d.Name
	}
	if run.RubricID != nil {
		if r, err := h.DB.FindRubric(ctx, h.Workspace.ID, *run.RubricID); err == nil {
			v.Rubric = r.Name
		}
	}
	if run.BatchesDone > 0 {
		rep, err := report.Build(ctx, h.DB, h.Workspace.ID, run.ID)
		if err != nil {
			return err
		}
		v.Report = rep
		v.Table = sampleTable(rep, c.QueryParams())
	}
	return render(c, http.StatusOK, web.RunPage(v))
}

// sampleTable selects, filters, sorts and pages one criterion's samples as
// the query asks.
func sampleTable(rep *report.Report, q url.Values) web.RunSampleTable {
	t := web.RunSampleTable{RunID: rep.Run.ID, Rounds: rep.Run.Settings.Rounds, Q: strings.TrimSpace(q.Get("q")),
		OnlyMissing: q.Get("only") == "missing", Sort: q.Get("sort"), Dir: q.Get("dir")}
	for _, c := range rep.Criteria {
		t.Names = append(t.Names, c.Criterion.Name)
	}
	if len(rep.Criteria) == 0 {
		return t
	}
	if k, err := strconv.Atoi(q.Get("criterion")); err == nil && k >= 0 && k < len(rep.Criteria) {
		t.Criterion = k
	}
	switch t.Sort {
	case "score", "human", "diff", "missing", "position":
	default:
		t.Sort = "position"
	}
	if t.Dir != "asc" && t.Dir != "desc" {
		t.Dir = "asc"
	}
	all := rep.Criteria[t.Criterion].Samples
	t.Total = len(all)
	needle := strings.ToLower(t.Q)
	rows := make([]report.SampleResult, 0, len(all))
	for _, s := range all {
		if t.OnlyMissing && s.Missing == 0 {
			continue
		}
		if needle != "" && !sampleContains(s, needle) {
			continue
		}
		rows = append(rows, s)
	}
	report.SortSamples(rows, t.Sort, t.Dir == "desc")
	t.Matching = len(rows)
	t.Pages = max(1, (len(rows)+samplesPerPage-1)/samplesPerPage)
	t.Page = 1
	if p, err := strconv.Atoi(q.Get("page")); err == nil && p >= 1 {
		t.Page = min(p, t.Pages)
	}
	from := (t.Page - 1) * samplesPerPage
	t.Rows = rows[from:min(from+samplesPerPage, len(rows))]
	return t
}

func sampleContains(s report.SampleResult, lowerNeedle string) bool {
	if strings.Contains(strings.ToLower(s.ExternalID), lowerNeedle) {
		return true
	}
	for _, f := range s.Fields {
		if strings.Contains(strings.ToLower(f.Value), lowerNeedle) {
			return true
		}
	}
	return false
}

func (h *Handlers) cancelRun(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	if _, err := h.Runner.Cancel(c.Request().Context(), h.Workspace.ID, id); err != nil {
		if models.ErrorCode(err) != models.EConflict {
			return err
		}
		setFlash(c, "error", models.ErrorMessage(err))
		return c.Redirect(http.StatusSeeOther, runURL(id))
	}
	return redirect(c, runURL(id), "Run cancelled: no new calls are sent; answers already stored are kept.")
}
