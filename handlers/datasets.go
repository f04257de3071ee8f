package handlers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/excerpt"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dataimport"
	"github.com/batcheval/batcheval/models/demo"
	"github.com/batcheval/batcheval/web"
)

// multipartSlack is room, on top of the file size limit, for the other form
// fields and the multipart boundaries of an upload request.
const multipartSlack = 1 << 20

// previewRows is how many rows the mapping step shows: enough to recognise
// the columns, few enough to read at a glance.
const previewRows = 10

// previewCellRunes shortens cells on the mapping preview, which is for
// recognising columns, not reading whole dialogues.
const previewCellRunes = 80

// datasetCellRunes shortens cells on the dataset page so 25 long dialogues
// still make a readable table.
const datasetCellRunes = 400

// datasetPageSize is how many rows the dataset page shows at a time.
const datasetPageSize = 25

// showUploadForm is the first step of adding a dataset.
func (h *Handlers) showUploadForm(c echo.Context) error {
	p, err := h.findProject(c)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.DatasetUploadPage(h.uploadView(c, p, "", "")))
}

func (h *Handlers) uploadView(c echo.Context, p models.Project, name, msg string) web.DatasetUploadView {
	return web.DatasetUploadView{Page: page(c, "Upload a dataset"), Project: p, Name: name, Error: msg, MaxUpload: sizeText(h.MaxUploadBytes)}
}

// uploadDataset reads and checks the file, keeps it as a pending upload and
// sends the person to the mapping step.
func (h *Handlers) uploadDataset(c echo.Context) error {
	p, err := h.findProject(c)
	if err != nil {
		return err
	}
	u, _, err := h.acceptUpload(c)
	if err != nil {
		if models.ErrorCode(err) != models.EInvalid {
			return err
		}
		name := ""
		if !errors.Is(err, errUploadTooLarge) && !errors.Is(err, errNameRefused) {
			name = strings.TrimSpace(c.FormValue("name"))
		}
		return render(c, http.StatusUnprocessableEntity, web.DatasetUploadPage(h.uploadView(c, p, name, models.ErrorMessage(err))))
	}
	q := url.Values{"token": {u.Token}}
	if name := strings.TrimSpace(c.FormValue("name")); name != "" {
		q.Set("name", name)
	}
	return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/projects/%d/datasets/map?%s", p.ID, q.Encode()))
}

// errUploadTooLarge marks an upload refused for its size (the rest of the
// form was not read either).
var errUploadTooLarge = errors.New("upload too large")

// errNameRefused marks an upload refused for its dataset name, which is
// then not echoed back (it may be huge).
var errNameRefused = errors.New("dataset name refused")

// acceptUpload reads the multipart field "file", checks that it parses as
// CSV, JSONL or JSON within the size limit, and keeps it as a pending upload
// of the request's workspace. The browser's upload step and the API's both
// use it. Problems the person can fix are EInvalid errors.
func (h *Handlers) acceptUpload(c echo.Context) (models.PendingUpload, *dataimport.Table, error) {
	refuse := func(msg string) error { return models.Errorf(models.EInvalid, "%s", msg) }
	req := c.Request()
	req.Body = http.MaxBytesReader(c.Response(), req.Body, h.MaxUploadBytes+multipartSlack)
	fh, err := c.FormFile("file")
	if err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			return models.PendingUpload{}, nil, &models.Error{Code: models.EInvalid,
				Message: (&dataimport.TooLargeError{Limit: h.MaxUploadBytes}).Error(), Err: errUploadTooLarge}
		case errors.Is(err, http.ErrMissingFile), errors.Is(err, http.ErrNotMultipart):
			return models.PendingUpload{}, nil, refuse("Choose a file to upload.")
		}
		return models.PendingUpload{}, nil, refuse("The upload could not be read; try again. (" + err.Error() + ")")
	}
	name := strings.TrimSpace(c.FormValue("name"))
	if err := models.CheckLength("dataset name", name, models.MaxComposedNameLength); err != nil {
		// The name goes into the next page's address: refuse it here, and
		// do not echo it back.
		return models.PendingUpload{}, nil, &models.Error{Code: models.EInvalid, Message: models.ErrorMessage(err), Err: errNameRefused}
	}
	data, err := readUpload(fh, h.MaxUploadBytes)
	if err != nil {
		return models.PendingUpload{}, nil, refuse(err.Error())
	}
	format, err := dataimport.DetectFormat(fh.Filename, data[:min(len(data), 512)])
	if err != nil {
		return models.PendingUpload{}, nil, refuse("This file cannot be imported: " + err.Error())
	}
	// Parsing now reports a broken file before any column is chosen; the
	// table is parsed again from the stored bytes at the mapping step.
	t, err := dataimport.Parse(bytes.NewReader(data), format, dataimport.Options{MaxBytes: h.MaxUploadBytes})
	if err != nil {
		return models.PendingUpload{}, nil, refuse("This file cannot be imported: " + err.Error())
	}
	u := models.PendingUpload{WorkspaceID: h.workspaceID(c), Filename: filepath.Base(fh.Filename), Format: string(format), Content: data}
	if err := h.DB.SavePendingUpload(req.Context(), &u, h.UploadQuotaBytes); err != nil {
		if models.ErrorCode(err) == models.EConflict {
			return u, nil, refuse(models.ErrorMessage(err))
		}
		return u, nil, err
	}
	return u, t, nil
}

// readUpload reads an uploaded file whole, refusing it past limit bytes.
func readUpload(fh *multipart.FileHeader, limit int64) ([]byte, error) {
	f, err := fh.Open()
	if err != nil {
		return nil, fmt.Errorf("the upload could not be read; try again (%v)", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("the upload could not be read; try again (%v)", err)
	}
	if int64(len(data)) > limit {
		return nil, &dataimport.TooLargeError{Limit: limit}
	}
	return data, nil
}

// pendingTable loads a pending upload and parses it again.
func (h *Handlers) pendingTable(c echo.Context, token string) (models.PendingUpload, *dataimport.Table, error) {
	u, err := h.DB.FindPendingUpload(c.Request().Context(), h.workspaceID(c), token)
	if err != nil {
		return u, nil, err
	}
	t, err := dataimport.Parse(bytes.NewReader(u.Content), dataimport.Format(u.Format), dataimport.Options{MaxBytes: h.MaxUploadBytes})
	if err != nil {
		// The file parsed at upload; failing now means a lower limit or a
		// changed parser, which the person can only fix by uploading again.
		return u, nil, models.Errorf(models.EInvalid, "the uploaded file can no longer be read (%v): upload it again", err)
	}
	return u, t, nil
}

// showMappingForm previews the upload with a suggested column mapping.
func (h *Handlers) showMappingForm(c echo.Context) error {
	p, err := h.findProject(c)
	if err != nil {
		return err
	}
	u, t, err := h.pendingTable(c, c.QueryParam("token"))
	if err != nil {
		return err
	}
	name := strings.TrimSpace(c.QueryParam("name"))
	if name == "" {
		name = strings.TrimSuffix(u.Filename, filepath.Ext(u.Filename))
	}
	v := mappingView(c, p, u, t, name, dataimport.SuggestMapping(t))
	return render(c, http.StatusOK, web.DatasetMappingPage(v))
}

// mappingView builds the mapping page for a table and a mapping.
func mappingView(c echo.Context, p models.Project, u models.PendingUpload, t *dataimport.Table, name string, m dataimport.Mapping) web.DatasetMappingView {
	v := web.DatasetMappingView{
		Page: page(c, "Choose the columns"), Project: p, Token: u.Token, Filename: u.Filename,
		Format: u.Format, Name: name, RowCount: len(t.Records), IDColumn: m.IDColumn,
		AnnotatorColumn: m.AnnotatorColumn, GroupColumn: groupColumn(c.FormValue("group_column"), t), PreviewCellRunes: previewCellRunes,
	}
	labels := map[string]string{}
	for _, f := range m.Fields {
		labels[f.Column] = f.Label
	}
	rated := map[string]bool{}
	for _, r := range m.RatingColumns {
		rated[r] = true
	}
	for i, col := range t.Columns {
		label, shown := labels[col]
		if !shown {
			label = defaultLabel(col)
		}
		v.Columns = append(v.Columns, web.MappingColumn{Index: i, Name: col, Show: shown, Label: label, Rating: rated[col]})
	}
	for _, rec := range t.Preview(previewRows) {
		cells := make([]string, len(t.Columns))
		for i, col := range t.Columns {
			cells[i] = shortenText(rec.Values[col], previewCellRunes)
		}
		v.PreviewRows = append(v.PreviewRows, cells)
	}
	return v
}

// importDataset applies the chosen mapping and stores the dataset; on any
// problem it shows the mapping again and imports nothing.
func (h *Handlers) importDataset(c echo.Context) error {
	p, err := h.findProject(c)
	if err != nil {
		return err
	}
	u, t, err := h.pendingTable(c, c.FormValue("token"))
	if err != nil {
		return err
	}
	name := strings.TrimSpace(c.FormValue("name"))
	m := mappingFromForm(c, t)
	again := func(v web.DatasetMappingView) error {
		return render(c, http.StatusUnprocessableEntity, web.DatasetMappingPage(v))
	}
	v := mappingView(c, p, u, t, name, m)
	if name == "" {
		v.Error = "Give the dataset a name."
		return again(v)
	}
	ds, err := h.importUpload(c.Request().Context(), p, u, t, name, m, groupColumn(c.FormValue("group_column"), t))
	if err != nil {
		var ve *dataimport.ValidationError
		switch {
		case errors.As(err, &ve):
			for _, pe := range ve.Problems {
				v.Problems = append(v.Problems, importProblem(pe))
			}
			v.More = ve.More
			return again(v)
		case models.ErrorCode(err) == models.EInvalid:
			v.Error = models.ErrorMessage(err)
			return again(v)
		}
		return err
	}
	return redirect(c, datasetPath(ds.ID), fmt.Sprintf("Imported %d rows into %q.", ds.RowCount, ds.Name))
}

// importUpload applies a column mapping to a pending upload and stores the
// dataset in the upload's workspace, then drops the upload. Rows that do
// not fit the mapping come back as a *dataimport.ValidationError, other
// problems as EInvalid errors; nothing is stored then. The browser's
// mapping step and the API's dataset creation both use it.
func (h *Handlers) importUpload(ctx context.Context, p models.Project, u models.PendingUpload, t *dataimport.Table, name string, m dataimport.Mapping, group string) (models.Dataset, error) {
	if name == "" {
		return models.Dataset{}, models.Errorf(models.EInvalid, "Give the dataset a name.")
	}
	rows, err := demo.ImportRows(t, m)
	if err != nil {
		return models.Dataset{}, err
	}
	if m.RatingColumns == nil {
		// Stored as JSON in a NOT NULL column: an absent list must be [], not null.
		m.RatingColumns = []string{}
	}
	ds := models.Dataset{
		WorkspaceID: u.WorkspaceID, ProjectID: p.ID, Name: name, SourceFilename: u.Filename,
		Format: u.Format, IDColumn: m.IDColumn, Columns: t.Columns, Fields: m.Fields, RatingColumns: m.RatingColumns,
		GroupColumn: group,
	}
	if err := h.DB.CreateDataset(ctx, &ds, rows); err != nil {
		return ds, err
	}
	if err := h.DB.DeletePendingUpload(ctx, u.ID); err != nil {
		// The dataset is stored; a leftover upload expires by itself.
		h.Log.Warn("delete pending upload", "id", u.ID, "err", err)
	}
	return ds, nil
}

// mappingFromForm reads the mapping form: show_N, label_N and rating_N
// for the N-th column of the table.
func mappingFromForm(c echo.Context, t *dataimport.Table) dataimport.Mapping {
	m := dataimport.Mapping{IDColumn: c.FormValue("id_column"), AnnotatorColumn: c.FormValue("annotator_column")}
	for i, col := range t.Columns {
		n := strconv.Itoa(i)
		if c.FormValue("show_"+n) != "" {
			label := strings.TrimSpace(c.FormValue("label_" + n))
			if label == "" {
				label = defaultLabel(col)
			}
			m.Fields = append(m.Fields, evaluator.Field{Column: col, Label: label})
		}
		if c.FormValue("rating_"+n) != "" {
			m.RatingColumns = append(m.RatingColumns, col)
		}
	}
	return m
}

// defaultLabel is the label of a column nobody labelled: its own name.
func defaultLabel(col string) string { return col }

// importProblem words one mapping problem for the problems table.
func importProblem(pe dataimport.ParseError) web.ImportProblem {
	where := "whole file"
	switch {
	case pe.Line > 0 && pe.Item:
		where = "item " + strconv.Itoa(pe.Line)
	case pe.Line > 0:
		where = "line " + strconv.Itoa(pe.Line)
	}
	return web.ImportProblem{Where: where, Column: pe.Column, Msg: pe.Msg}
}

// showDataset is a dataset's page: fields, rating summaries and rows.
func (h *Handlers) showDataset(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	ws := h.workspaceID(c)
	ds, err := h.DB.FindDataset(ctx, ws, id)
	if err != nil {
		return err
	}
	p, err := h.DB.FindProject(ctx, ws, ds.ProjectID)
	if err != nil {
		return err
	}
	// Every row is needed for the rating summaries; the page of rows is
	// cut from the same read.
	rows, err := h.DB.ListDatasetRows(ctx, ds.ID, 0, 0)
	if err != nil {
		return err
	}
	v := web.DatasetView{Page: page(c, ds.Name), Project: p, Dataset: ds, Manage: manageFor(c, models.KindDataset, ds.ID, ds.Name, ds.ArchivedAt)}
	for _, col := range ds.RatingColumns {
		var vals []float64
		missing := 0
		for _, r := range rows {
			if x := r.Ratings[col]; x != nil {
				vals = append(vals, *x)
			} else {
				missing++
			}
		}
		s := stats.Describe(vals)
		v.Summaries = append(v.Summaries, web.RatingSummary{Column: col, N: s.N, Missing: missing, Mean: s.Mean, SD: s.SD, Min: s.Min, Max: s.Max})
	}
	v.Pages = max(1, (len(rows)+datasetPageSize-1)/datasetPageSize)
	v.PageNum, _ = strconv.Atoi(c.QueryParam("page"))
	v.PageNum = min(max(v.PageNum, 1), v.Pages)
	start := (v.PageNum - 1) * datasetPageSize
	for _, r := range rows[min(start, len(rows)):min(start+datasetPageSize, len(rows))] {
		rv := web.DatasetRowView{Position: r.Position, ID: r.ExternalID}
		for _, f := range ds.Fields {
			rv.Values = append(rv.Values, shortenText(r.Data[f.Column], datasetCellRunes))
		}
		for _, col := range ds.RatingColumns {
			rv.Ratings = append(rv.Ratings, r.Ratings[col])
		}
		v.Rows = append(v.Rows, rv)
	}
	return render(c, http.StatusOK, web.DatasetPage(v))
}

func datasetPath(id int64) string { return "/datasets/" + strconv.FormatInt(id, 10) }

// shortenText cuts s to at most n characters at a word boundary, marking
// the cut.
func shortenText(s string, n int) string { return excerpt.Cut(s, n) }

// sizeText writes a byte limit the way people read it.
func sizeText(n int64) string {
	const mib = 1 << 20
	if n >= mib {
		return strconv.FormatFloat(float64(n)/mib, 'f', -1, 64) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// groupColumn reads the optional group column (for grouped correlation),
// ignoring a name that is not a column of the table.
func groupColumn(g string, t *dataimport.Table) string {
	for _, col := range t.Columns {
		if col == g {
			return g
		}
	}
	return ""
}
