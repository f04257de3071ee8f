package handlers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/excerpt"
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
	return render(c, http.StatusOK, web.DatasetUploadPage(h.uploadView(c, p, "", "", "")))
}

// uploadView is the upload form; msg (if any) says why the upload was
// refused, beside the input of id field and in the summary at the top.
func (h *Handlers) uploadView(c echo.Context, p models.Project, name, field, msg string) web.DatasetUploadView {
	v := web.DatasetUploadView{Page: page(c, "Upload a dataset"), Project: p, Name: name, MaxUpload: sizeText(h.MaxUploadBytes)}
	if msg != "" {
		var r formRefusal
		r.add(field, msg)
		r.fillUpload(&v)
	}
	return v
}

// uploadDataset reads and checks the file, keeps it as a pending upload and
// sends the person to the mapping step.
func (h *Handlers) uploadDataset(c echo.Context) error {
	p, err := h.findProject(c)
	if err != nil {
		return err
	}
	u, form, _, err := h.acceptUpload(c, true)
	if status, ok := uploadQuotaStatus(err); ok {
		// A quota refusal is about the file: said beside it.
		return render(c, status, web.DatasetUploadPage(h.uploadView(c, p, form.Name, "dataset-file", models.ErrorMessage(err))))
	}
	if err != nil {
		if models.ErrorCode(err) != models.EInvalid {
			return err
		}
		name := ""
		if !errors.Is(err, errUploadTooLarge) && !errors.Is(err, errNameRefused) {
			name = form.Name
		}
		field := "dataset-file"
		if errors.Is(err, errNameRefused) {
			field = "dataset-name"
		}
		return render(c, http.StatusUnprocessableEntity, web.DatasetUploadPage(h.uploadView(c, p, name, field, models.ErrorMessage(err))))
	}
	q := url.Values{"token": {u.Token}}
	if form.NoHeader {
		q.Set("header", "none")
	}
	if form.Name != "" {
		q.Set("name", form.Name)
	}
	return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/projects/%d/datasets/map?%s", p.ID, q.Encode()))
}

// uploadQuotaStatus is the status of an upload refused by the
// workspace's upload quota, ok false for any other error: 413 (too large)
// when the file alone is larger than the quota, which no waiting upload
// finished or expired makes room for; 409 (conflict) when the uploads
// already waiting leave no room for it, a state of the workspace that
// finishing them (or their expiry) changes. The refusal was 422, which
// says the file is wrong, and a client could not tell it from one.
func uploadQuotaStatus(err error) (int, bool) {
	var qe *models.UploadQuotaError
	if !errors.As(err, &qe) {
		return 0, false
	}
	if qe.Alone() {
		return http.StatusRequestEntityTooLarge, true
	}
	return http.StatusConflict, true
}

// errUploadTooLarge marks an upload refused for its size (the rest of the
// form was not read either).
var errUploadTooLarge = errors.New("upload too large")

// errNameRefused marks an upload refused for its dataset name, which is
// then not echoed back (it may be huge).
var errNameRefused = errors.New("dataset name refused")

// sampleRows is how many of an upload's first rows the mapping step keeps
// to suggest the columns and explain repeated ids: plenty to recognise the
// columns, and a bound on the memory one upload costs however long it is.
const sampleRows = 10000

// maxFieldBytes bounds the small form fields read beside the file (the
// name is checked against its own, shorter, limit afterwards).
const maxFieldBytes = 64 << 10

// uploadForm is the upload request's fields other than the file.
type uploadForm struct {
	Name     string
	NoHeader bool // the first row of a CSV file is data
}

// uploadSample is what the mapping step reads of an upload: every column,
// the first sampleRows records, and the number of rows in the whole file.
type uploadSample struct {
	*dataimport.Table
	Rows int
	// Skipped counts the empty lines skipped between rows
	// (dataimport.Summary.Skipped).
	Skipped int
}

// acceptUpload streams the multipart field "file" to a temporary file
// (never holding it in memory), checks that it parses as CSV, JSONL or
// JSON within the limits in one streaming pass, and keeps it, in parts, as
// a pending upload of the request's workspace. The browser's upload step
// and the API's both use it; withOptions reads the "no_header" field (the
// first row of a CSV file is data). Problems the person can fix are
// EInvalid errors.
func (h *Handlers) acceptUpload(c echo.Context, withOptions bool) (models.PendingUpload, uploadForm, uploadSample, error) {
	var form uploadForm
	refuse := func(msg string) error { return models.Errorf(models.EInvalid, "%s", msg) }
	// The browser's form has one file field; a program must be told the
	// part to send (it read "Choose a file to upload.", with no name).
	noFile := "Choose a file to upload."
	if isAPIPath(c.Request().URL.Path) {
		noFile = `the upload has no file: send it as multipart/form-data, the file in a part named "file" with its file name (curl -F file=@data.csv)`
	}
	tooLarge := func() error {
		return &models.Error{Code: models.EInvalid, Message: (&dataimport.TooLargeError{Limit: h.MaxUploadBytes}).Error(), Err: errUploadTooLarge}
	}
	unreadable := func(err error) error {
		var big *http.MaxBytesError
		if errors.As(err, &big) {
			return tooLarge()
		}
		return refuse("The upload could not be read; try again. (" + err.Error() + ")")
	}
	req := c.Request()
	req.Body = http.MaxBytesReader(c.Response(), req.Body, h.MaxUploadBytes+multipartSlack)
	mr, err := req.MultipartReader()
	if err != nil {
		return models.PendingUpload{}, form, uploadSample{}, refuse(noFile)
	}
	var tmp *os.File
	defer func() {
		if tmp != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	var filename string
	var size int64
	nameChars := 0 // characters of a name too long to keep
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return models.PendingUpload{}, form, uploadSample{}, unreadable(err)
		}
		switch part.FormName() {
		case "file":
			if tmp != nil {
				continue // one file per upload: the first
			}
			if tmp, err = os.CreateTemp("", "batcheval-upload-*"); err != nil {
				return models.PendingUpload{}, form, uploadSample{}, fmt.Errorf("keep upload: %w", err)
			}
			filename = part.FileName()
			if r, ok := firstControl(filename); ok {
				return models.PendingUpload{}, form, uploadSample{}, controlRefused(`the file name of "file"`, r)
			}
			size, err = io.Copy(tmp, io.LimitReader(part, h.MaxUploadBytes+1))
			if err != nil {
				return models.PendingUpload{}, form, uploadSample{}, unreadable(err)
			}
			if size > h.MaxUploadBytes {
				return models.PendingUpload{}, form, uploadSample{}, tooLarge()
			}
		case "name", "no_header":
			b, chars, err := readField(part)
			if err != nil {
				return models.PendingUpload{}, form, uploadSample{}, unreadable(err)
			}
			if r, ok := firstControl(string(b)); ok {
				// Checked here, as the body is streamed past the
				// middleware; the value is not echoed back.
				err := controlRefused(strconv.Quote(part.FormName()), r)
				return models.PendingUpload{}, form, uploadSample{}, &models.Error{Code: models.EInvalid, Message: models.ErrorMessage(err), Err: errNameRefused}
			}
			if part.FormName() == "no_header" {
				form.NoHeader = withOptions && firstRowIsData(string(b))
			} else if len(b) > maxFieldBytes {
				nameChars = chars
			} else {
				form.Name = strings.TrimSpace(string(b))
			}
		}
		part.Close()
	}
	if tmp == nil || filename == "" {
		return models.PendingUpload{}, form, uploadSample{}, refuse(noFile)
	}
	err = models.CheckLength("dataset name", form.Name, models.MaxComposedNameLength)
	if err == nil {
		err = models.CheckOneLine("dataset name", form.Name)
	}
	if nameChars > 0 {
		err = models.Errorf(models.EInvalid, "the dataset name is %d characters long; the limit is %d", nameChars, models.MaxComposedNameLength)
	}
	if err != nil {
		// The name goes into the next page's address: refuse it here, and
		// do not echo it back.
		return models.PendingUpload{}, form, uploadSample{}, &models.Error{Code: models.EInvalid, Message: models.ErrorMessage(err), Err: errNameRefused}
	}
	head := make([]byte, 512)
	n, err := tmp.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return models.PendingUpload{}, form, uploadSample{}, unreadable(err)
	}
	format, err := dataimport.DetectFormat(filename, head[:n])
	if err != nil {
		return models.PendingUpload{}, form, uploadSample{}, refuse("This file cannot be imported: " + err.Error())
	}
	// One streaming pass reports a broken file before any column is
	// chosen, and gives the first rows for the answer. It runs beside the
	// storing of the file, which is undone if the pass finds a problem:
	// the two take about as long, and a file is read once in the time of
	// one of them.
	u := models.PendingUpload{WorkspaceID: h.workspaceID(c), Filename: filepath.Base(filename), Format: string(format)}
	ctx, cancel := context.WithCancel(req.Context())
	defer cancel()
	saved := make(chan error, 1)
	go func() {
		saved <- h.DB.SavePendingUploadFrom(ctx, &u, io.NewSectionReader(tmp, 0, size), size, h.UploadQuotaBytes)
	}()
	// Only the browser's form has the checkbox to offer when a header
	// row is refused; the API's answer says what the row must hold.
	hint := ""
	if withOptions {
		hint = msgTickFirstRowData
	}
	sample, err := h.scanUpload(io.NewSectionReader(tmp, 0, size), format, form.NoHeader, hint)
	if err != nil {
		cancel()
		<-saved
		if u.ID != 0 {
			// Stored before the problem was found (the save stops only
			// between parts, so it reports what it did: stored, or rolled
			// back). Drop whatever is there (nothing, when it was rolled
			// back).
			if derr := h.DB.DropRefusedUpload(context.WithoutCancel(req.Context()), u); derr != nil {
				h.Log.Warn("delete refused upload", "id", u.ID, "err", derr)
			}
		}
		return models.PendingUpload{}, form, uploadSample{}, refuse("This file cannot be imported: " + err.Error())
	}
	if err := <-saved; err != nil {
		// Past the workspace's upload quota: an EConflict carrying a
		// *models.UploadQuotaError (see uploadQuotaStatus).
		return u, form, sample, err
	}
	// The mapping page shows the count: kept, it is not counted again by
	// reading the whole file on each view. Without it the page reads the
	// file, as before.
	scan := models.UploadScan{NoHeader: form.NoHeader, Rows: sample.Rows, Skipped: sample.Skipped,
		Columns: sample.Table.Columns, Generated: sample.Table.Generated, Encoding: string(sample.Table.Read.Encoding)}
	if err := h.DB.SetUploadScan(context.WithoutCancel(req.Context()), u.ID, scan); err != nil {
		h.Log.Warn("keep upload scan", "id", u.ID, "err", err)
	} else {
		u.Scan = &scan
	}
	return u, form, sample, nil
}

// readField reads a small form field, keeping at most maxFieldBytes+1
// bytes of it but counting the characters of all of it.
func readField(r io.Reader) ([]byte, int, error) {
	var kept []byte
	chars := 0
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		for _, b := range buf[:n] {
			if b&0xC0 != 0x80 { // not a continuation byte: a new character
				chars++
			}
		}
		if room := maxFieldBytes + 1 - len(kept); room > 0 {
			kept = append(kept, buf[:min(n, room)]...)
		}
		if err == io.EOF {
			return kept, chars, nil
		}
		if err != nil {
			return nil, 0, err
		}
	}
}

// msgTickFirstRowData is the upload form's way out when a CSV file's header
// row is refused: the file may have none.
const msgTickFirstRowData = `If the first row is data rather than column names, upload again with "The first row is data" ticked`

// scanUpload reads a whole upload in one streaming pass, keeping only its
// first sampleRows records; hint ends the message of a refused header row
// (dataimport.Options.HeaderHint).
func (h *Handlers) scanUpload(r io.Reader, format dataimport.Format, noHeader bool, hint string) (uploadSample, error) {
	return h.scanUploadHead(r, format, noHeader, false, hint)
}

// errSampled ends a scan that has read what it needed.
var errSampled = errors.New("sampled")

// scanUploadHead is scanUpload; with headOnly, a CSV file is read only as
// far as its first sampleRows records (its header names every column, so
// the rest adds nothing before an import, which reads it all anyway), and
// Rows is left at -1, unknown.
func (h *Handlers) scanUploadHead(r io.Reader, format dataimport.Format, noHeader, headOnly bool, hint string) (uploadSample, error) {
	return h.scanRecords(r, format, noHeader, headOnly && format == dataimport.CSV, hint)
}

// scanRecords is scanUploadHead; with stop, a file of any format is read
// only as far as its first sampleRows records (the caller knows its
// columns and rows from elsewhere: JSON records may add columns later).
func (h *Handlers) scanRecords(r io.Reader, format dataimport.Format, noHeader, stop bool, hint string) (uploadSample, error) {
	t := &dataimport.Table{Format: format}
	// Only the kept records need maps of their own.
	opt := dataimport.Options{MaxBytes: h.MaxUploadBytes, MaxRows: h.MaxUploadRows, NoHeader: noHeader, ReuseValues: true, HeaderHint: hint}
	sum, err := dataimport.Scan(r, format, opt, func(rec dataimport.Record) error {
		if len(t.Records) < sampleRows {
			rec.Values = maps.Clone(rec.Values)
			t.Records = append(t.Records, rec)
			return nil
		}
		if stop {
			return errSampled
		}
		return nil
	})
	if errors.Is(err, errSampled) {
		t.Columns, t.Generated, t.Read, t.Renamed = sum.Columns, sum.Generated, sum.Read, sum.Renamed
		return uploadSample{Table: t, Rows: -1}, nil
	}
	if err != nil {
		return uploadSample{}, err
	}
	t.Columns, t.Generated, t.Read, t.Renamed = sum.Columns, sum.Generated, sum.Read, sum.Renamed
	return uploadSample{Table: t, Rows: sum.Rows, Skipped: sum.Skipped}, nil
}

// firstRowIsData reads the "the first row is data" choice: the upload
// form's checkbox, or header=none on the mapping step.
func firstRowIsData(v string) bool { return v == "1" || v == "none" || v == "on" }

// pendingTable loads a pending upload and reads it again, streaming,
// keeping its first rows; noHeader reads a CSV file's first row as data;
// headOnly reads a CSV file only as far as those rows (see scanUploadHead).
func (h *Handlers) pendingTable(c echo.Context, token string, noHeader, headOnly bool) (models.PendingUpload, uploadSample, error) {
	ctx := c.Request().Context()
	u, err := h.DB.FindPendingUpload(ctx, h.workspaceID(c), token)
	if err != nil {
		return u, uploadSample{}, err
	}
	if sc := u.Scan; sc != nil && sc.NoHeader == noHeader && u.SizeBytes <= h.MaxUploadBytes && (h.MaxUploadRows <= 0 || sc.Rows <= h.MaxUploadRows) {
		// Counted at upload, read the same way and within today's limits:
		// the first rows are all that is left to read.
		s, err := h.scanRecords(h.DB.OpenPendingUpload(ctx, u), dataimport.Format(u.Format), noHeader, true, "")
		if err == nil {
			s.Columns, s.Generated, s.Rows, s.Skipped = slices.Clone(sc.Columns), sc.Generated, sc.Rows, sc.Skipped
			if sc.Encoding != "" {
				// Decided past the rows read again (dataimport's asciiStart).
				s.Read.Encoding = dataimport.Encoding(sc.Encoding)
			}
			return u, s, nil
		}
	}
	s, err := h.scanUploadHead(h.DB.OpenPendingUpload(ctx, u), dataimport.Format(u.Format), noHeader, headOnly, "")
	if err != nil {
		// The file parsed at upload; failing now means a lower limit or a
		// changed parser, which the person can only fix by uploading again.
		return u, uploadSample{}, models.Errorf(models.EInvalid, "the uploaded file can no longer be read (%v): upload it again", err)
	}
	return u, s, nil
}

// showMappingForm previews the upload with a suggested column mapping.
func (h *Handlers) showMappingForm(c echo.Context) error {
	p, err := h.findProject(c)
	if err != nil {
		return err
	}
	u, t, err := h.pendingTable(c, c.QueryParam("token"), firstRowIsData(c.QueryParam("header")), false)
	if err != nil {
		return err
	}
	name := strings.TrimSpace(c.QueryParam("name"))
	if name == "" {
		// A file's name may hold line breaks; a dataset name is one line.
		name = models.OneLine(strings.TrimSuffix(u.Filename, filepath.Ext(u.Filename)))
		datasets, err := h.DB.ListDatasets(c.Request().Context(), h.workspaceID(c), p.ID)
		if err != nil {
			return err
		}
		name = freeDatasetName(name, datasets)
	}
	m := dataimport.SuggestMapping(t.Table)
	// The duplicate-id note links here with the per-annotator layout
	// chosen; only columns of the table are taken.
	if id := c.QueryParam("id_column"); id != "" && groupColumn(id, t.Table) != "" {
		m.IDColumn = id
	}
	if ann := c.QueryParam("annotator_column"); ann != "" && groupColumn(ann, t.Table) != "" {
		m.AnnotatorColumn = ann
	}
	v := mappingView(c, p, u, t, name, m, nil)
	return render(c, http.StatusOK, web.DatasetMappingPage(v))
}

// freeDatasetName is the name suggested for an upload: the file's name,
// numbered ("messy (2)") when a dataset of the project already has it, so
// that the launch form, the rubric preview and the project's list can tell
// two uploads of files with one name apart. A name over the dataset name
// limit is shortened (the person typed none; the field shows it to edit).
func freeDatasetName(name string, datasets []models.Dataset) string {
	taken := func(n string) bool {
		return slices.ContainsFunc(datasets, func(d models.Dataset) bool { return strings.EqualFold(d.Name, n) })
	}
	limit := models.MaxNameFor(models.KindDataset)
	if name = models.ShortenName(name, limit); !taken(name) {
		return name
	}
	for i := 2; ; i++ {
		if n := models.ComposeName(limit, "", name, fmt.Sprintf(" (%d)", i)); !taken(n) {
			return n
		}
	}
}

// mappingView builds the mapping page for a table and a mapping. typed
// holds, by column, the labels typed for columns the mapping does not show
// (unticked boxes; nil on the first visit): a form shown again keeps them
// instead of putting the default label back.
func mappingView(c echo.Context, p models.Project, u models.PendingUpload, s uploadSample, name string, m dataimport.Mapping, typed map[string]string) web.DatasetMappingView {
	t := s.Table
	v := web.DatasetMappingView{
		Page: page(c, "Choose the columns"), Project: p, Token: u.Token, Filename: u.Filename,
		Format: u.Format, Name: name, RowCount: s.Rows, Skipped: s.Skipped, IDColumn: m.IDColumn,
		AnnotatorColumn: m.AnnotatorColumn, GroupColumn: groupColumn(c.FormValue("group_column"), t), PreviewCellRunes: previewCellRunes,
	}
	if len(t.Records) < s.Rows {
		v.CheckedRows = len(t.Records)
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
			label = cmp.Or(typed[col], defaultLabel(col))
		}
		mc := web.MappingColumn{Index: i, Name: col, Show: shown, Label: label, Rating: rated[col]}
		if !mc.Rating {
			mc.RatingNote = dataimport.WhyNotRating(t, col)
		} else {
			// Ratings written out of a maximum ("4/5"): how they are read.
			mc.RatingNote = dataimport.RatingScaleNote(t, col)
		}
		if !mc.Show && col != m.IDColumn {
			mc.ShowNote = dataimport.WhyNotShown(t, col)
		}
		v.Columns = append(v.Columns, mc)
	}
	for _, rec := range t.Preview(previewRows) {
		cells := make([]string, len(t.Columns))
		for i, col := range t.Columns {
			cells[i] = shortenText(rec.Values[col], previewCellRunes)
		}
		v.PreviewRows = append(v.PreviewRows, cells)
	}
	v.NoHeader = t.Generated
	v.ReadNotes = readNotes(t.Read, t.Renamed, nil)
	base := url.Values{"token": {u.Token}, "name": {name}}
	if note, warn := dataimport.CheckHeader(t); warn {
		v.HeaderWarning = note.Message()
	}
	if t.Format == dataimport.CSV {
		q := url.Values{"token": {u.Token}, "name": {name}}
		if !t.Generated {
			q.Set("header", "none")
		}
		v.HeaderToggleURL = mapURL(p.ID, q)
	}
	if t.Generated {
		base.Set("header", "none")
	}
	for _, n := range idNotes(t, m) {
		if n.AnnotatorColumn != "" {
			q := url.Values{}
			for k, vs := range base {
				q[k] = vs
			}
			q.Set("id_column", n.Column)
			q.Set("annotator_column", n.AnnotatorColumn)
			n.UseAnnotatorURL = mapURL(p.ID, q) + "#annotator-column"
		}
		v.IDNotes = append(v.IDNotes, n)
	}
	return v
}

// idNotes explain the id-like columns of t whose values repeat or are
// empty, for the mapping m (the browser's mapping step and the API's
// upload answer say the same). A column already read as one row per
// annotator needs no note.
func idNotes(t *dataimport.Table, m dataimport.Mapping) []web.IDNote {
	var out []web.IDNote
	for _, r := range dataimport.ExplainIDs(t) {
		if r.Column == m.IDColumn && m.AnnotatorColumn != "" {
			continue
		}
		n := web.IDNote{Column: r.Column, RepeatedIDs: r.RepeatedIDs, RepeatedRows: r.RepeatedRows, EmptyRows: r.EmptyRows,
			RatingsDiffer: r.RatingsDiffer, PerAnnotator: r.PerAnnotator(), TextDiffers: r.TextDiffers, Chosen: r.Column == m.IDColumn}
		if n.PerAnnotator {
			// Offered only when the rows would merge: rows of one id that
			// differ in their text would be refused as one sample.
			n.AnnotatorColumn = r.AnnotatorColumn
		}
		for _, rep := range r.Repeated {
			n.Examples = append(n.Examples, web.RepeatedID{ID: shortenText(rep.ID, previewCellRunes), Rows: rep.Count})
		}
		out = append(out, n)
	}
	return out
}

// mapURL is the mapping step of project id with the given query.
func mapURL(id int64, q url.Values) string {
	return fmt.Sprintf("/projects/%d/datasets/map?%s", id, q.Encode())
}

// importDataset applies the chosen mapping and stores the dataset; on any
// problem it shows the mapping again and imports nothing.
func (h *Handlers) importDataset(c echo.Context) error {
	p, err := h.findProject(c)
	if err != nil {
		return err
	}
	// The import reads the whole file itself: read only its head now,
	// and the whole of it again only to show the mapping after a problem.
	token, noHeader := c.FormValue("token"), firstRowIsData(c.FormValue("header"))
	u, t, err := h.pendingTable(c, token, noHeader, true)
	if err != nil {
		return err
	}
	name := strings.TrimSpace(c.FormValue("name"))
	m := mappingFromForm(c, t.Table)
	again := func(fill func(*web.DatasetMappingView)) error {
		if t.Rows < 0 {
			_, whole, err := h.pendingTable(c, token, noHeader, false)
			if err != nil {
				return err
			}
			t = whole
		}
		v := mappingView(c, p, u, t, name, m, labelsTyped(c, t.Table))
		fill(&v)
		return render(c, http.StatusUnprocessableEntity, web.DatasetMappingPage(v))
	}
	// The name and the choices first, each refusal said beside its input
	// and all at once; the file's rows are read only when they agree.
	if r := mappingRefusals(name, t.Table, m); r.refused() {
		return again(r.fillMapping)
	}
	ds, empties, err := h.importUpload(c.Request().Context(), p, u, t, name, m, groupColumn(c.FormValue("group_column"), t.Table))
	if err != nil {
		var ve *dataimport.ValidationError
		switch {
		case errors.As(err, &ve):
			return again(func(v *web.DatasetMappingView) {
				var r formRefusal
				for _, pe := range ve.Problems {
					// A problem of a choice (a field empty in every
					// row) goes beside it; the rows' own, to the table.
					if input := mappingChoiceInput(pe, t.Columns); input != "" {
						r.add(input, mappingChoiceText(pe))
						continue
					}
					v.Problems = append(v.Problems, importProblem(pe))
				}
				v.More = ve.More
				r.fillMapping(v)
			})
		case models.ErrorCode(err) == models.EInvalid:
			return again(func(v *web.DatasetMappingView) {
				var r formRefusal
				r.add("", formSentence(models.ErrorMessage(err)))
				r.fillMapping(v)
			})
		}
		return err
	}
	msg := fmt.Sprintf("Imported %s into %s.", rowsWord(ds.RowCount), web.Quoted(ds.Name))
	fields, ratings := 0, 0
	for _, e := range empties {
		if e.Rating {
			ratings++
		} else {
			fields++
		}
	}
	// The notes themselves are stored with the dataset: its page, where
	// this leads, shows them in full, now and later.
	switch {
	case fields > 0:
		msg += fmt.Sprintf(" %s the judge sees %s empty in some rows: see \"Import notes\" below.",
			plural(fields, "One field", strconv.Itoa(fields)+" fields"), plural(fields, "is", "are"))
	case ratings > 0:
		msg += " Some rows have no human rating: see \"Import notes\" below."
	}
	return redirect(c, datasetPath(ds.ID), msg+" Next: write a rubric for this project, then launch a run with this dataset (both linked under Next steps below).")
}

// emptyFieldNotes say, for each field the judge sees that is empty in
// some rows, how many and which first, so that the person can fill them
// in the file: the rows are imported, but the judge reads nothing there.
// perAnnotator files name lines only (their records are not the rows).
func emptyFieldNotes(empties []dataimport.EmptyField, perAnnotator bool) []string {
	var out []string
	for _, e := range empties {
		what := web.Quoted(e.Label)
		if e.Label != e.Column {
			what += fmt.Sprintf(" (column %s)", web.Quoted(e.Column))
		}
		var rows, lines []string
		unit := "line"
		for _, p := range e.First {
			rows = append(rows, strconv.Itoa(p.Record))
			lines = append(lines, strconv.Itoa(p.Line))
			if p.Item {
				unit = "item"
			}
		}
		if more := e.Rows - len(e.First); more > 0 {
			lines = append(lines, fmt.Sprintf("%d more", more))
			rows = append(rows, fmt.Sprintf("%d more", more))
		}
		where := fmt.Sprintf("%s %s of the file", plural(e.Rows, unit, unit+"s"), joinNames(lines))
		if !perAnnotator && unit == "line" {
			where = fmt.Sprintf("%s %s (%s %s of the file)", plural(e.Rows, "row", "rows"), joinNames(rows), plural(e.Rows, unit, unit+"s"), joinNames(lines))
		} else if !perAnnotator {
			where = fmt.Sprintf("%s %s", plural(e.Rows, "row", "rows"), joinNames(rows))
		}
		if e.Rating {
			out = append(out, fmt.Sprintf("%d %s no human rating in column %s: %s. %s missing from every comparison with the human ratings of that column: fill %s in the file and upload it again, unless %s not rated.",
				e.Rows, plural(e.Rows, "row has", "rows have"), web.Quoted(e.Column), where, plural(e.Rows, "That sample is", "Those samples are"),
				plural(e.Rows, "it", "them"), plural(e.Rows, "it was", "they were")))
			continue
		}
		out = append(out, fmt.Sprintf("%d %s an empty %s, which the judge sees: %s. The judge reads nothing there for it: fill %s in the file and upload it again, unless empty is meant.",
			e.Rows, plural(e.Rows, "row has", "rows have"), what, where, plural(e.Rows, "it", "them")))
	}
	return out
}

// readNotes puts how the file was read (an encoding or a separator other
// than UTF-8 and commas) and the header's renamed columns before the other
// import notes.
func readNotes(r dataimport.Reading, renamed, notes []string) []string {
	var out []string
	if n := r.Note(); n != "" {
		out = append(out, n)
	}
	return append(append(out, renamed...), notes...)
}

// importUpload applies a column mapping to a pending upload and stores the
// dataset in the upload's workspace, then drops the upload. Rows that do
// not fit the mapping come back as a *dataimport.ValidationError, other
// problems as EInvalid errors; nothing is stored then. The browser's
// mapping step and the API's dataset creation both use it. The file is
// read as a stream and its rows stored in chunks in one transaction, so
// memory follows a chunk, not the file; only a file with one row per
// annotator, whose rows merge into samples, is read whole.
func (h *Handlers) importUpload(ctx context.Context, p models.Project, u models.PendingUpload, s uploadSample, name string, m dataimport.Mapping, group string) (models.Dataset, []dataimport.EmptyField, error) {
	if name == "" {
		return models.Dataset{}, nil, models.Errorf(models.EInvalid, "Give the dataset a name.")
	}
	// Stored as JSON in NOT NULL columns: an absent list must be [], not
	// null (the dataset row is written before its rows are checked).
	if m.RatingColumns == nil {
		m.RatingColumns = []string{}
	}
	if m.Fields == nil {
		m.Fields = []evaluator.Field{}
	}
	ds := models.Dataset{
		WorkspaceID: u.WorkspaceID, ProjectID: p.ID, Name: name, SourceFilename: u.Filename,
		Format: u.Format, IDColumn: m.IDColumn, Columns: s.Columns, Fields: m.Fields, RatingColumns: m.RatingColumns,
		GroupColumn: group,
	}
	format := dataimport.Format(u.Format)
	opt := dataimport.Options{MaxBytes: h.MaxUploadBytes, MaxRows: h.MaxUploadRows, NoHeader: s.Generated}
	var (
		err     error
		empties []dataimport.EmptyField
	)
	if m.AnnotatorColumn != "" {
		var t *dataimport.Table
		if t, err = dataimport.Parse(h.DB.OpenPendingUpload(ctx, u), format, opt); err != nil {
			return ds, nil, models.Errorf(models.EInvalid, "the uploaded file can no longer be read (%v): upload it again", err)
		}
		var applied []dataimport.Row
		var scales []string
		if applied, empties, scales, err = t.ApplyWithNotes(m); err != nil {
			return ds, nil, err
		}
		// Stored with the dataset, in its transaction: its page says
		// them for good.
		ds.ImportNotes = readNotes(t.Read, t.Renamed, append(scales, emptyFieldNotes(empties, true)...))
		err = h.DB.CreateDataset(ctx, &ds, demo.DatasetRows(applied))
	} else {
		err = h.DB.ImportDataset(ctx, &ds, func(put func(models.DatasetRow) error) error {
			// put encodes a row before it returns, and the applier keeps
			// no record: one map can serve every record.
			opt := opt
			opt.ReuseValues = true
			reread := func(fn func(dataimport.Record) error) error {
				_, err := dataimport.Scan(h.DB.OpenPendingUpload(ctx, u), format, opt, fn)
				return err
			}
			a := dataimport.NewApplier(s.Columns, format, m, reread)
			sum, err := dataimport.Scan(h.DB.OpenPendingUpload(ctx, u), format, opt, func(rec dataimport.Record) error {
				r := a.Add(rec)
				if a.Failed() {
					return nil // nothing will be kept: read on to list every problem
				}
				return put(models.DatasetRow{Position: r.Position, ExternalID: r.ExternalID, Data: r.Data, Ratings: r.Ratings})
			})
			if err != nil {
				var pe *dataimport.ParseError
				if errors.As(err, &pe) {
					return models.Errorf(models.EInvalid, "the uploaded file can no longer be read (%v): upload it again", err)
				}
				return err
			}
			if err := a.Finish(); err != nil {
				return err
			}
			empties = a.EmptyFields()
			// Stored with the dataset, in the import's transaction
			// (models.DB.ImportDataset): its page says them for good.
			ds.ImportNotes = readNotes(sum.Read, sum.Renamed, append(a.ScaleNotes(), emptyFieldNotes(empties, false)...))
			return nil
		})
	}
	if err != nil {
		return ds, nil, err
	}
	// The dataset is stored, even when the request was cancelled during
	// the commit: its upload goes too, so a retry of a request that lost
	// its answer cannot import the file a second time.
	if err := h.DB.DeletePendingUpload(context.WithoutCancel(ctx), u.ID); err != nil {
		// A leftover upload expires by itself.
		h.Log.Warn("delete pending upload", "id", u.ID, "err", err)
	}
	return ds, empties, nil
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

// labelsTyped reads the mapping form's labels by column, as mappingFromForm
// does (trimmed; empty ones left out), whether or not the column is shown.
func labelsTyped(c echo.Context, t *dataimport.Table) map[string]string {
	typed := map[string]string{}
	for i, col := range t.Columns {
		if label := strings.TrimSpace(c.FormValue("label_" + strconv.Itoa(i))); label != "" {
			typed[col] = label
		}
	}
	return typed
}

// mappingRefusals checks what the mapping form chose before any row is
// read: the dataset's name, the labels' lengths and the choices that
// conflict (dataimport.CheckMapping), each refusal tied to its input.
func mappingRefusals(name string, t *dataimport.Table, m dataimport.Mapping) formRefusal {
	var r formRefusal
	if _, err := models.CheckNewName(models.KindDataset, name); err != nil {
		r.add("dataset-name", nameFormText(models.KindDataset, name, "Import dataset", err))
	}
	for _, f := range m.Fields {
		i := slices.Index(t.Columns, f.Column)
		if i < 0 {
			continue // refused by CheckMapping below
		}
		// The limit models.Dataset's labels have (checkDataset).
		if err := models.CheckLength("label of column "+web.Quoted(f.Column), f.Label, models.MaxNameLength); err != nil {
			r.add(web.MappingInput("label", i), formSentence(models.ErrorMessage(err)))
		}
	}
	for _, pe := range dataimport.CheckMapping(t.Columns, t.Format, m) {
		r.add(mappingChoiceInput(pe, t.Columns), mappingChoiceText(pe))
	}
	return r
}

// mappingChoiceInput is the id of the mapping form's input a problem is
// about (its dataimport Choice and column), "mapping-columns" for the
// columns as a whole, "" for a problem of the file's rows.
func mappingChoiceInput(pe dataimport.ParseError, columns []string) string {
	kind := ""
	switch pe.Choice {
	case dataimport.ChoiceID:
		return "id-column"
	case dataimport.ChoiceAnnotator:
		return "annotator-column"
	case dataimport.ChoiceField:
		kind = "show"
	case dataimport.ChoiceLabel:
		kind = "label"
	case dataimport.ChoiceRating:
		kind = "rating"
	default:
		return ""
	}
	if i := slices.Index(columns, pe.Column); i >= 0 && pe.Column != "" {
		return web.MappingInput(kind, i)
	}
	return "mapping-columns"
}

// mappingChoiceText words a choice's problem as a sentence that names
// its column (the summary lists them apart from their inputs).
func mappingChoiceText(pe dataimport.ParseError) string {
	if pe.Column == "" {
		return formSentence(pe.Msg)
	}
	return formSentence("column " + web.Quoted(pe.Column) + ": " + pe.Msg)
}

// defaultLabel is the label of a column nobody labelled: the one
// SuggestMapping offers (dataimport.SuggestedLabel), ticked or not.
func defaultLabel(col string) string { return dataimport.SuggestedLabel(col) }

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
	v := web.DatasetView{Page: page(c, ds.Name), Project: p, Dataset: ds, Manage: manageFor(c, models.KindDataset, ds.ID, ds.Name, ds.ArchivedAt)}
	// The summaries come from the dataset's stored summary of its ratings
	// (counted when the rows were stored); the table reads only the page
	// it shows.
	rs, err := h.DB.DatasetRatingStats(ctx, ds)
	if err != nil {
		return err
	}
	for _, col := range ds.RatingColumns {
		s := rs.Column(col)
		v.Summaries = append(v.Summaries, web.RatingSummary{Column: col, N: s.N, Missing: ds.RowCount - s.N, Mean: s.Mean(), SD: s.SD(),
			Min: orNaN(s.N > 0, s.Min), Max: orNaN(s.N > 0, s.Max)})
	}
	v.Pages = max(1, (ds.RowCount+datasetPageSize-1)/datasetPageSize)
	v.PageNum, _ = strconv.Atoi(c.QueryParam("page"))
	v.PageNum = min(max(v.PageNum, 1), v.Pages)
	rows, err := h.DB.ListDatasetRows(ctx, ds.ID, (v.PageNum-1)*datasetPageSize, datasetPageSize)
	if err != nil {
		return err
	}
	for _, r := range rows {
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

// orNaN is x when ok, else NaN (a figure not defined).
func orNaN(ok bool, x float64) float64 {
	if !ok {
		return math.NaN()
	}
	return x
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

// rowsWord is a count of rows in words: "1 row", "3 rows".
func rowsWord(n int) string {
	if n == 1 {
		return "1 row"
	}
	return fmt.Sprintf("%d rows", n)
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
