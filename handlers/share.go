package handlers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/evaluator/methods"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/web"
)

// shareBase is the address every page of a share link lives under.
func shareBase(token string) string { return "/s/" + token }

// asShareVisitor runs next as the visitor of the share link named by the
// route's :token, whatever session the request carries: the page shows the
// shared report and nothing of the signed-in person's workspace.
func (h *Handlers) asShareVisitor(c echo.Context, next echo.HandlerFunc) error {
	keepShareAddressPrivate(c.Response().Header())
	req := c.Request()
	link, err := h.DB.OpenShareLink(req.Context(), c.Param("token"))
	if models.ErrorCode(err) == models.ENotFound {
		return h.showClosedShare(c, c.Param("token"))
	}
	if err != nil {
		return h.sharedError(c, err)
	}
	p := Principal{Kind: ShareVisitor, Workspace: models.Workspace{ID: link.WorkspaceID}, Share: &link}
	c.SetRequest(req.WithContext(context.WithValue(req.Context(), principalKey{}, p)))
	if err := next(c); err != nil {
		return h.sharedError(c, err)
	}
	return nil
}

// showClosedShare answers a share link that opens nothing (404) with what
// its visitor may learn and what they can do (web.SharedLinkClosedView):
// a revoked link and an address that never was one read alike; an expired
// link says when it expired, which its pages said while it was open; a
// member of the link's workspace (the request's own principal, signed in
// or the local user) also reads whether it was revoked and the way to the
// report on the dashboard.
func (h *Handlers) showClosedShare(c echo.Context, token string) error {
	ctx := c.Request().Context()
	p := principalOf(ctx)
	v := web.SharedLinkClosedView{SignIn: p.Kind == Anonymous}
	l, err := h.DB.FindShareLinkByToken(ctx, token)
	if models.ErrorCode(err) == models.ENotFound {
		return render(c, http.StatusNotFound, web.SharedLinkClosedPage(v))
	}
	if err != nil {
		return h.sharedError(c, err)
	}
	if l.ExpiresAt != nil && !time.Now().Before(*l.ExpiresAt) {
		v.ExpiredAt = l.ExpiresAt
	}
	if p.Kind == Account || p.Kind == LocalUser {
		for _, w := range p.Workspaces {
			if w.Workspace.ID != l.WorkspaceID {
				continue
			}
			what, target := closedShareTarget(l)
			v.Member = &web.SharedLinkMember{Workspace: w.Workspace.Name, Elsewhere: p.Workspace.ID != l.WorkspaceID,
				RevokedAt: l.RevokedAt, What: what, URL: target, CanShare: w.Role.AtLeast(models.RoleEditor)}
		}
	}
	return render(c, http.StatusNotFound, web.SharedLinkClosedPage(v))
}

// closedShareTarget names what link l showed and its dashboard page.
func closedShareTarget(l models.ShareLink) (what, target string) {
	i := func(p *int64) string { return strconv.FormatInt(id64(p), 10) }
	switch l.Kind {
	case models.ShareExperiment:
		return "experiment " + i(l.ExperimentID), "/experiments/" + i(l.ExperimentID)
	case models.ShareCompare:
		return "the comparison of runs " + i(l.RunID) + " and " + i(l.OtherRunID), "/compare?a=" + i(l.RunID) + "&b=" + i(l.OtherRunID)
	}
	return "run " + i(l.RunID), "/runs/" + i(l.RunID)
}

// keepShareAddressPrivate sets the headers of an answer whose address
// holds a token (a share link's, an invite's, a password reset's:
// tokenInAddress): keep it out of Referer headers, shared caches and
// search engines.
func keepShareAddressPrivate(hd http.Header) {
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "private, no-store")
	hd.Set("X-Robots-Tag", "noindex, nofollow")
}

// sharedError answers an error under a share link with a page that has
// no way into the dashboard; server errors go to the log, not the page.
func (h *Handlers) sharedError(c echo.Context, err error) error {
	if c.Response().Committed {
		return err
	}
	status, msg := http.StatusInternalServerError, "Something went wrong on the server; try again later."
	var he *echo.HTTPError
	switch {
	case errors.As(err, &he):
		status = he.Code
		msg = http.StatusText(status)
	case models.ErrorCode(err) == models.ENotFound:
		status, msg = http.StatusNotFound, models.ErrorMessage(err)
	case models.ErrorCode(err) == models.EInvalid:
		status, msg = http.StatusUnprocessableEntity, models.ErrorMessage(err)
	}
	if status >= 500 {
		h.Log.Error("shared page failed", "path", c.Request().URL.Path, "err", err)
	}
	return render(c, status, web.SharedErrorPage(http.StatusText(status), msg))
}

// shareOf is the link of a Shared route's request.
func shareOf(c echo.Context) (models.ShareLink, web.SharedPage) {
	l := principalOf(c.Request().Context()).Share
	if l == nil {
		// require(Shared) always sets it; a route registered without that
		// rule must not fall through to any workspace data.
		panic("share route without the Shared rule")
	}
	return *l, web.SharedPage{Base: shareBase(c.Param("token")), Expires: l.ExpiresAt}
}

// sharedReportGone words for a share link's visitor a report whose run,
// experiment or compared run was deleted (in the trash, or purged since):
// the model's "run 7 does not exist (or is not in this workspace)" speaks
// of a workspace the visitor knows nothing of and says nothing to do.
// Other errors pass as they are.
func sharedReportGone(err error, what string) error {
	if models.ErrorCode(err) != models.ENotFound {
		return err
	}
	return models.Errorf(models.ENotFound, "this shared report opens nothing now: %s was deleted. Ask the person who sent you the link to restore it or send a new link", what)
}

func id64(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// showShared shows the report a share link opens.
func (h *Handlers) showShared(c echo.Context) error {
	ctx := c.Request().Context()
	link, sp := shareOf(c)
	switch link.Kind {
	case models.ShareRun:
		run, err := h.DB.FindRun(ctx, link.WorkspaceID, id64(link.RunID))
		if err != nil {
			return sharedReportGone(err, "the run it shows")
		}
		facts, err := h.reportFacts(ctx, run)
		if err != nil {
			return err
		}
		pageNum, _ := strconv.Atoi(c.QueryParam("page"))
		v, err := h.sharedRunView(ctx, run, max(pageNum, 1))
		if p := preparingOf(err); p != nil {
			v, err = web.SharedRunView{Preparing: preparingView(p)}, nil
		}
		if err != nil {
			return err
		}
		v.SharedPage, v.ReportFacts = sp, facts
		// A missing value in the samples table says why.
		if v.Missing, err = h.sayWhyReportSamplesMissing(ctx, run, v.Report); err != nil {
			return err
		}
		v.Title = run.Name
		return render(c, http.StatusOK, web.SharedRunPage(v))
	case models.ShareExperiment:
		e, err := h.DB.FindExperiment(ctx, link.WorkspaceID, id64(link.ExperimentID))
		if err != nil {
			return sharedReportGone(err, "the experiment it shows")
		}
		v, err := h.experimentView(c, e, false)
		if err != nil {
			return err
		}
		// The chart's points open runs on the dashboard: point them at the
		// runs' rows of the table instead.
		v.Chart = rowAnchors(v.Chart)
		sp.Title = e.Name
		return render(c, http.StatusOK, web.SharedExperimentPage(web.SharedExperimentView{SharedPage: sp, Experiment: v}))
	case models.ShareCompare:
		cmp, err := h.comparisonOf(c, [2]int64{id64(link.RunID), id64(link.OtherRunID)})
		if err != nil {
			return sharedReportGone(err, "a run it compares")
		}
		v, err := h.compareView(c.Request().Context(), cmp, 0, compareRowsShown, false)
		if p := preparingOf(err); p != nil {
			v, err = compareShell(cmp), nil
			v.Preparing = preparingView(p)
		}
		if err != nil {
			return err
		}
		if err := h.sayWhyCompareRowsMissing(ctx, cmp, &v, readerOutside); err != nil {
			return err
		}
		sp.Title = cmp.a.Name + " and " + cmp.b.Name
		return render(c, http.StatusOK, web.SharedComparePage(web.SharedCompareView{SharedPage: sp, Compare: v}))
	}
	return models.Errorf(models.ENotFound, "this share link opens nothing")
}

// rowAnchors points each experiment chart point, which links to its run
// on the dashboard (/runs/<id>), at that run's row of the table.
func rowAnchors(ch web.ScatterChart) web.ScatterChart {
	for i, pt := range ch.Points {
		id, ok := strings.CutPrefix(string(pt.Href), "/runs/")
		if _, err := strconv.ParseInt(id, 10, 64); !ok || err != nil {
			id = ""
		}
		ch.Points[i].Href = templ.SafeURL("#run-" + id)
		if id == "" {
			ch.Points[i].Href = "#experiment-table"
		}
	}
	return ch
}

// showSharedSample shows one sample of a shared run or comparison. Only
// samples of the shared runs' datasets exist here.
func (h *Handlers) showSharedSample(c echo.Context) error {
	ctx := c.Request().Context()
	link, sp := shareOf(c)
	rowID, err := paramID(c, "rowID")
	if err != nil {
		return err
	}
	switch link.Kind {
	case models.ShareRun:
		run, err := h.DB.FindRun(ctx, link.WorkspaceID, id64(link.RunID))
		if err != nil {
			return sharedReportGone(err, "the run it shows")
		}
		v, err := h.runSampleView(c, run, rowID, true)
		if err != nil {
			return err
		}
		if err := h.sayWhyHumansMissing(ctx, run, rowID, &v); err != nil {
			return err
		}
		sp.Title = "Sample " + v.ExternalID
		return render(c, http.StatusOK, web.SharedSamplePage(web.SharedSampleView{SharedPage: sp, Sample: v}))
	case models.ShareCompare:
		cmp, err := h.comparisonOf(c, [2]int64{id64(link.RunID), id64(link.OtherRunID)})
		if err != nil {
			return sharedReportGone(err, "a run it compares")
		}
		v, err := h.compareSampleView(c, cmp, rowID)
		if err != nil {
			return err
		}
		if err := h.sayWhyCompareHumanMissing(ctx, cmp, &v, readerOutside); err != nil {
			return err
		}
		sp.Title = "Sample " + v.ExternalID
		return render(c, http.StatusOK, web.SharedCompareSamplePage(web.SharedCompareSampleView{SharedPage: sp, Sample: v}))
	}
	return models.Errorf(models.ENotFound, "this share link has no sample pages")
}

// downloadSharedReport is the standalone file of a shared run or
// experiment.
func (h *Handlers) downloadSharedReport(c echo.Context) error {
	ctx := c.Request().Context()
	link, _ := shareOf(c)
	switch link.Kind {
	case models.ShareRun:
		run, err := h.DB.FindRun(ctx, link.WorkspaceID, id64(link.RunID))
		if err != nil {
			return sharedReportGone(err, "the run it shows")
		}
		return h.sendStandalone(c, run)
	case models.ShareExperiment:
		e, err := h.DB.FindExperiment(ctx, link.WorkspaceID, id64(link.ExperimentID))
		if err != nil {
			return sharedReportGone(err, "the experiment it shows")
		}
		return h.sendStandaloneExperiment(c, e)
	}
	return models.Errorf(models.ENotFound, "a shared comparison has no downloadable report")
}

// downloadExperimentReport is the standalone file of an experiment of the
// workspace.
func (h *Handlers) downloadExperimentReport(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	e, err := h.DB.FindExperiment(c.Request().Context(), h.workspaceID(c), id)
	if err != nil {
		return err
	}
	return h.sendStandaloneExperiment(c, e)
}

func (h *Handlers) sendStandaloneExperiment(c echo.Context, e models.Experiment) error {
	v, err := h.experimentView(c, e, false)
	if err != nil {
		return err
	}
	v.Chart = rowAnchors(v.Chart)
	var buf bytes.Buffer
	if err := web.StandaloneExperimentReport(v, time.Now()).Render(c.Request().Context(), &buf); err != nil {
		return err
	}
	name := fmt.Sprintf("experiment-%d-%s-report.html", e.ID, fileSlug(e.Name))
	c.Response().Header().Set(echo.HeaderContentDisposition, fmt.Sprintf("attachment; filename=%q", name))
	return c.Blob(http.StatusOK, echo.MIMETextHTMLCharsetUTF8, buf.Bytes())
}

// downloadRunReport is the standalone file of a run of the workspace.
func (h *Handlers) downloadRunReport(c echo.Context) error {
	run, err := h.findRun(c)
	if err != nil {
		return err
	}
	return h.sendStandalone(c, run)
}

// sharedPageSize is how many samples a shared run's page lists: a
// page of a large run, every sample of a small one (a variable so tests
// can page a small run).
var sharedPageSize = 500

// sharedRunView is a shared run's report with one page of its samples
// (pageNum, from 1): for a finished run its stored summary (runSummary;
// a *preparingError while a large one is being built) and the page's
// samples read from its stored per-sample results with their text, for a
// run still going its report built afresh, cut to the page.
func (h *Handlers) sharedRunView(ctx context.Context, run models.Run, pageNum int) (web.SharedRunView, error) {
	v := web.SharedRunView{SamplePage: pageNum, SamplesPerPage: sharedPageSize, SamplePages: 1}
	if run.BatchesDone == 0 {
		return v, nil
	}
	var rep *report.Report
	var err error
	if run.Finished() {
		rep, err = h.runSummary(ctx, run.ID, report.Options{})
	} else {
		rep, err = h.buildReport(ctx, run.ID, "")
	}
	if err != nil {
		return v, err
	}
	page := *rep
	page.Criteria = slices.Clone(rep.Criteria)
	for i := range page.Criteria {
		c := &page.Criteria[i]
		v.SampleTotal = max(v.SampleTotal, c.SampleCount)
		if c.Samples != nil {
			// Built afresh: every sample is here.
			lo := min((pageNum-1)*sharedPageSize, len(c.Samples))
			c.Samples = c.Samples[lo:min(lo+sharedPageSize, len(c.Samples))]
			continue
		}
		if c.Samples, _, err = report.LoadSamplePage(ctx, h.DB, rep, report.SamplePage{Criterion: i, Sort: "position", Dir: "asc",
			Page: pageNum, PerPage: sharedPageSize}); err != nil {
			return v, err
		}
		if c.Samples == nil {
			c.Samples = []report.SampleResult{}
		}
	}
	v.Report = &page
	v.SamplePages = max(1, (v.SampleTotal+sharedPageSize-1)/sharedPageSize)
	return v, nil
}

// rubricLabel is what a run's facts say of its rubric before the stored
// one is found: a run made from a rubric file (the command line) or from a
// reworded copy never had a stored rubric, which is not a deleted one.
func rubricLabel(run models.Run) string {
	if run.RubricID == nil {
		return "recorded with the run (no stored rubric)"
	}
	return "(deleted rubric)"
}

// reportFacts gathers what a run's report says of the run besides its
// figures.
func (h *Handlers) reportFacts(ctx context.Context, run models.Run) (web.ReportFacts, error) {
	wsID := workspaceOf(ctx)
	f := web.ReportFacts{Run: run, Dataset: "(deleted dataset)", Rubric: rubricLabel(run),
		MethodLabel: methods.Label(run.Method), Cost: runCostText(run), Elapsed: elapsedText(run, time.Now())}
	if p, err := h.DB.FindProject(ctx, wsID, run.ProjectID); err == nil {
		f.Project = p.Name
	}
	// Read-only, in words that name no worker (web.SharedRunEventText).
	events, err := h.DB.RunEvents(ctx, run.ID)
	if err != nil {
		return f, err
	}
	f.Events = events
	if d, err := h.DB.FindDataset(ctx, wsID, run.DatasetID); err == nil {
		f.Dataset = d.Name
	}
	if run.RubricID != nil {
		if r, err := h.DB.FindRubric(ctx, wsID, *run.RubricID); err == nil {
			f.Rubric = r.Name
		}
	}
	if run.BatchesDone == 0 {
		return f, nil
	}
	noAnswer, _, err := h.runFailures(ctx, run)
	if err != nil {
		return f, err
	}
	f.NoAnswer = noAnswer
	// The judge's answers alone, without their prompts: a share link's
	// visitor reads them too, and the report links nowhere.
	f.Unreadable, err = h.unreadableExamples(ctx, run, false)
	return f, err
}

// unreadableExamples are examples of a finished run's answers no score
// could be read from (web.UnreadableAnswer), when the run may have none
// (a run without a readable score is failed, and some of its calls were
// answered); nil otherwise. With links, each names its page.
func (h *Handlers) unreadableExamples(ctx context.Context, run models.Run, links bool) ([]web.UnreadableAnswer, error) {
	if run.Status != models.RunFailed || run.BatchesDone-run.BatchesFailed <= 0 {
		return nil, nil
	}
	bs, err := h.DB.UnreadableAnswers(ctx, run.ID, web.UnreadableExamples)
	if err != nil {
		return nil, err
	}
	// A method judging samples one by one names a unit by its sample.
	ids, err := h.unitSampleIDs(ctx, run, bs)
	if err != nil {
		return nil, err
	}
	out := make([]web.UnreadableAnswer, len(bs))
	for i, b := range bs {
		var href templ.SafeURL
		if links {
			href = templ.SafeURL(fmt.Sprintf("/runs/%d/batches/%d", run.ID, b.ID))
		}
		var sample string
		if len(b.RowIDs) == 1 {
			sample = ids[b.RowIDs[0]]
		}
		out[i] = web.NewUnreadableAnswer(run, b, href, sample)
	}
	return out, nil
}

// ---- managing links (editors and owners) ----

// shareTTLs are the expiry choices of the form; "" lasts until revoked.
var shareTTLs = map[string]time.Duration{
	"":    0,
	"1d":  24 * time.Hour,
	"7d":  7 * 24 * time.Hour,
	"30d": 30 * 24 * time.Hour,
}

// listShares is the workspace's share links with who made them and when
// they were last opened, and a form for a new one.
func (h *Handlers) listShares(c echo.Context) error {
	return h.renderShares(c, http.StatusOK, "", "")
}

func (h *Handlers) renderShares(c echo.Context, status int, newLink, problem string) error {
	ctx := c.Request().Context()
	wsID := h.workspaceID(c)
	v := web.SharesView{Page: page(c, "Share links"), NewLink: newLink, NewLinkHost: thisComputerHost(newLink), Problem: problem, Now: time.Now(),
		Kind: c.QueryParam("kind"), RunID: c.QueryParam("run"), OtherRunID: c.QueryParam("other"), ExperimentID: c.QueryParam("experiment"),
		RunQuery: strings.TrimSpace(c.QueryParam("q")), RunLimit: shareRunChoices,
		ExperimentQuery: strings.TrimSpace(c.QueryParam("eq")), ExperimentLimit: shareExperimentChoices}
	if c.Request().Method == http.MethodPost {
		v.Kind, v.RunID, v.OtherRunID, v.ExperimentID = c.FormValue("kind"), c.FormValue("run_id"), c.FormValue("other_run_id"), c.FormValue("experiment_id")
	}
	total, err := h.DB.CountShareLinks(ctx, wsID)
	if err != nil {
		return err
	}
	// A page past the last (links revoked meanwhile) shows the last.
	v.LinksTotal, v.LinksPages = total, max(1, (total+shareLinksPerPage-1)/shareLinksPerPage)
	v.LinksPage, _ = strconv.Atoi(c.QueryParam("page"))
	v.LinksPage = min(max(v.LinksPage, 1), v.LinksPages)
	links, err := h.DB.ListShareLinksPage(ctx, wsID, models.ShareLinkPage{Offset: (v.LinksPage - 1) * shareLinksPerPage, Limit: shareLinksPerPage})
	if err != nil {
		return err
	}
	if len(links) > 0 {
		v.LinksFrom = (v.LinksPage-1)*shareLinksPerPage + 1
		v.LinksTo = v.LinksFrom + len(links) - 1
	}
	t, err := h.shareTargetsOf(ctx, wsID, links)
	if err != nil {
		return err
	}
	// Only active runs and experiments are offered for new links.
	if v.Runs, v.MoreRuns, err = h.shareRunChoicesOf(ctx, wsID, v.RunQuery, v.RunID, v.OtherRunID); err != nil {
		return err
	}
	if v.Experiments, v.MoreExperiments, err = h.shareExperimentChoicesOf(ctx, wsID, v.ExperimentQuery, v.ExperimentID); err != nil {
		return err
	}
	members, err := h.DB.ListMembers(ctx, wsID)
	if err != nil {
		return err
	}
	isMember := map[int64]bool{}
	for _, m := range members {
		isMember[m.User.ID] = true
	}
	for _, l := range links {
		it := web.ShareItem{Link: l, Active: l.Active(v.Now), MakerGone: l.CreatedBy != nil && !isMember[*l.CreatedBy]}
		// Each report is named with its id, as the choices above are (runs
		// often share a name); one that is deleted (in the trash, or
		// purged) opens nothing, whatever the link's own state.
		named := func(names map[int64]string, id int64, what string) string {
			if n, ok := names[id]; ok {
				return n + " (" + what + " " + strconv.FormatInt(id, 10) + ")"
			}
			return what + " " + strconv.FormatInt(id, 10)
		}
		switch l.Kind {
		case models.ShareRun:
			it.What = "Run " + named(t.runNames, id64(l.RunID), "run")
		case models.ShareExperiment:
			it.What = "Experiment " + named(t.expNames, id64(l.ExperimentID), "experiment")
		case models.ShareCompare:
			it.What = "Comparison of " + named(t.runNames, id64(l.RunID), "run") + " and " + named(t.runNames, id64(l.OtherRunID), "run")
		}
		if gone := t.missing(l); len(gone) > 0 {
			it.Deleted = strings.Join(gone, " and ")
		}
		v.Links = append(v.Links, it)
	}
	return render(c, status, web.SharesPage(v))
}

// shareRunChoices is how many runs the new-link forms offer at most: the
// newest, or the newest whose name or id matches the search. An older run
// is found by searching for it, or shared from its own page.
const shareRunChoices = 50

// shareExperimentChoices is how many experiments the experiment form
// offers at most, as shareRunChoices for runs.
const shareExperimentChoices = 50

// shareLinksPerPage is how many links a page of the list shows: the
// newest first, the older on the next pages.
const shareLinksPerPage = 50

// shareRunChoicesOf are the active runs the new-link forms offer: the
// newest shareRunChoices of those matching query (all when it is empty),
// and the runs preselected (?run=, ?other=, or the form just sent) even
// when older; more says further runs match query. Each is read in one
// bounded statement, whatever the size of the workspace.
func (h *Handlers) shareRunChoicesOf(ctx context.Context, wsID int64, query string, selected ...string) (choices []web.ShareChoice, more bool, err error) {
	runs, err := h.DB.ListRunNames(ctx, wsID, models.RunNameSearch{Match: query, Limit: shareRunChoices + 1})
	if err != nil {
		return nil, false, err
	}
	runs, more, err = boundChoices(runs, shareRunChoices, func(r models.RunName) int64 { return r.ID }, selected, func(ids []int64) ([]models.RunName, error) {
		return h.DB.ListRunNames(ctx, wsID, models.RunNameSearch{IDs: ids})
	})
	if err != nil {
		return nil, false, err
	}
	for _, r := range runs {
		choices = append(choices, web.ShareChoice{ID: r.ID, Name: r.Name})
	}
	return choices, more, nil
}

// shareExperimentChoicesOf are the active experiments the experiment form
// offers, as shareRunChoicesOf the runs: the newest shareExperimentChoices
// matching query, and the one preselected (?experiment=) even when older.
func (h *Handlers) shareExperimentChoicesOf(ctx context.Context, wsID int64, query, selected string) (choices []web.ShareChoice, more bool, err error) {
	exps, err := h.DB.ListExperimentNames(ctx, wsID, models.NameSearch{Match: query, Limit: shareExperimentChoices + 1})
	if err != nil {
		return nil, false, err
	}
	exps, more, err = boundChoices(exps, shareExperimentChoices, func(e models.ExperimentName) int64 { return e.ID }, []string{selected}, func(ids []int64) ([]models.ExperimentName, error) {
		return h.DB.ListExperimentNames(ctx, wsID, models.NameSearch{IDs: ids})
	})
	if err != nil {
		return nil, false, err
	}
	for _, e := range exps {
		choices = append(choices, web.ShareChoice{ID: e.ID, Name: e.Name})
	}
	return choices, more, nil
}

// boundChoices cuts found (the newest limit+1 that match, newest first)
// to limit, more saying it was cut, and puts first the ones selected
// (ids as the form or the address gives them) that are not among them,
// read by pick; an id that names nothing is left out.
func boundChoices[T any](found []T, limit int, id func(T) int64, selected []string, pick func([]int64) ([]T, error)) (choices []T, more bool, err error) {
	if len(found) > limit {
		found, more = found[:limit], true
	}
	offered := map[int64]bool{}
	for _, f := range found {
		offered[id(f)] = true
	}
	var missing []int64
	for _, s := range selected {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 && !offered[n] {
			missing = append(missing, n)
			offered[n] = true
		}
	}
	if len(missing) == 0 {
		return found, more, nil
	}
	picked, err := pick(missing)
	if err != nil {
		return nil, false, err
	}
	return append(picked, found...), more, nil
}

// shareTargets are the names of the runs and experiments links name,
// archived ones included (their links still open); a report in the trash,
// or purged, is not among them: its links open nothing.
type shareTargets struct {
	runNames, expNames map[int64]string
}

// shareTargetsOf reads the names of the runs and experiments links name,
// not those of every run and experiment of the workspace: two statements
// however many the workspace has.
func (h *Handlers) shareTargetsOf(ctx context.Context, wsID int64, links []models.ShareLink) (shareTargets, error) {
	t := shareTargets{runNames: map[int64]string{}, expNames: map[int64]string{}}
	runIDs, expIDs := []int64{}, []int64{}
	seen := map[int64]bool{}
	for _, l := range links {
		for _, id := range []*int64{l.RunID, l.OtherRunID} {
			if id != nil && !seen[*id] {
				seen[*id] = true
				runIDs = append(runIDs, *id)
			}
		}
		if l.ExperimentID != nil && !slices.Contains(expIDs, *l.ExperimentID) {
			expIDs = append(expIDs, *l.ExperimentID)
		}
	}
	runs, err := h.DB.ListRunNames(ctx, wsID, models.NameSearch{IDs: runIDs}, models.WithArchived())
	if err != nil {
		return t, err
	}
	for _, r := range runs {
		t.runNames[r.ID] = r.Name
	}
	exps, err := h.DB.ListExperimentNames(ctx, wsID, models.NameSearch{IDs: expIDs}, models.WithArchived())
	if err != nil {
		return t, err
	}
	for _, e := range exps {
		t.expNames[e.ID] = e.Name
	}
	return t, nil
}

// missing names the reports of l that are deleted ("run 3"): nil when the
// link's reports are all there.
func (t shareTargets) missing(l models.ShareLink) []string {
	var gone []string
	check := func(names map[int64]string, id int64, what string) {
		if _, ok := names[id]; !ok {
			gone = append(gone, what+" "+strconv.FormatInt(id, 10))
		}
	}
	switch l.Kind {
	case models.ShareRun:
		check(t.runNames, id64(l.RunID), "run")
	case models.ShareExperiment:
		check(t.expNames, id64(l.ExperimentID), "experiment")
	case models.ShareCompare:
		check(t.runNames, id64(l.RunID), "run")
		check(t.runNames, id64(l.OtherRunID), "run")
	}
	return gone
}

// createShare makes a link and shows it once.
func (h *Handlers) createShare(c echo.Context) error {
	ctx := c.Request().Context()
	p := principalOf(ctx)
	ttl, ok := shareTTLs[c.FormValue("expires")]
	if !ok {
		return h.renderShares(c, http.StatusUnprocessableEntity, "", "Choose an expiry from the list.")
	}
	// The form calls the link's label its note: a refusal names it so
	// (the model's check, shared with the API, calls it the label).
	if err := checkShareNote(c.FormValue("label")); err != nil {
		return h.renderShares(c, http.StatusUnprocessableEntity, "", models.ErrorMessage(err))
	}
	formID := func(name string) int64 {
		n, _ := strconv.ParseInt(c.FormValue(name), 10, 64)
		return n
	}
	n := models.NewShareLink{WorkspaceID: p.Workspace.ID, Kind: models.ShareKind(c.FormValue("kind")),
		RunID: formID("run_id"), OtherRunID: formID("other_run_id"), ExperimentID: formID("experiment_id"),
		Label: c.FormValue("label"), TTL: ttl, CreatedBy: p.userID(), CreatedByName: p.ActorLabel()}
	if p.Kind == Account {
		n.CreatedByName = p.User.Name
	}
	_, token, err := h.makeShare(c, n)
	switch models.ErrorCode(err) {
	case "":
	case models.EInvalid:
		return h.renderShares(c, http.StatusUnprocessableEntity, "", models.ErrorMessage(err))
	default:
		return err
	}
	return h.renderShares(c, http.StatusOK, absoluteURL(c, shareBase(token)), "")
}

// checkShareNote refuses a note the link could not keep (a line break, or
// longer than models.MaxShareLabel characters), in the form's words.
func checkShareNote(note string) error {
	note = strings.TrimSpace(note)
	if err := models.CheckOneLine("note", note); err != nil {
		return err
	}
	if n := utf8.RuneCountInString(note); n > models.MaxShareLabel {
		return models.Errorf(models.EInvalid, "The note is %d characters long; a note holds at most %d: shorten it and share again.", n, models.MaxShareLabel)
	}
	return nil
}

// makeShare checks and stores a link and writes it to the audit log; the
// page and the API both make links through it.
func (h *Handlers) makeShare(c echo.Context, n models.NewShareLink) (models.ShareLink, string, error) {
	if n.Kind == models.ShareCompare && n.RunID != n.OtherRunID {
		// Only runs on the same samples can be compared: refuse the link
		// now rather than show its visitor an error.
		if _, err := h.comparisonOf(c, [2]int64{n.RunID, n.OtherRunID}); err != nil {
			return models.ShareLink{}, "", err
		}
	}
	return h.DB.CreateShareLink(c.Request().Context(), n, auditOf(c, func(link models.ShareLink) models.AuditNote {
		detail := "until revoked"
		if link.ExpiresAt != nil {
			detail = "expires " + link.ExpiresAt.UTC().Format(time.RFC3339)
		}
		return models.AuditNote{Action: models.AuditShareCreated, Target: link.Target(), Detail: "share link " + strconv.FormatInt(link.ID, 10) + ", " + detail}
	}))
}

// revokeShare stops a link at once.
func (h *Handlers) revokeShare(c echo.Context) error {
	if _, err := h.revokeShareByID(c); err != nil {
		return err
	}
	// Back to the page of links the link was revoked on.
	to := "/shares"
	if n, err := strconv.Atoi(c.FormValue("page")); err == nil && n > 1 {
		to += "?page=" + strconv.Itoa(n)
	}
	return redirect(c, to, "Share link revoked: it no longer opens anything.")
}

// revokeShareByID revokes the workspace's link named by :id (page and API).
func (h *Handlers) revokeShareByID(c echo.Context) (models.ShareLink, error) {
	id, err := paramID(c, "id")
	if err != nil {
		return models.ShareLink{}, err
	}
	return h.DB.RevokeShareLink(c.Request().Context(), h.workspaceID(c), id, auditOf(c, func(link models.ShareLink) models.AuditNote {
		return models.AuditNote{Action: models.AuditShareRevoked, Target: link.Target(), Detail: "share link " + strconv.FormatInt(link.ID, 10)}
	}))
}

// thisComputerHost is link's host when it names the computer it is opened
// on (localhost, a loopback address), "" otherwise: a share link made on
// a dashboard reached as 127.0.0.1 opens nothing on anyone else's.
func thisComputerHost(link string) string {
	u, err := url.Parse(link)
	if err != nil || link == "" {
		return ""
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") || loopbackAddr(host) {
		return host
	}
	return ""
}
