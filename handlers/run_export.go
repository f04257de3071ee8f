package handlers

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/batcheval/batcheval/models"
)

// Run export formats WriteRunExport writes.
const (
	ExportCSV  = "csv"
	ExportJSON = "json"
)

// exportPreparingPoll is how often WriteRunExport looks again while a
// large finished run's results are being prepared in the background.
var exportPreparingPoll = 200 * time.Millisecond

// WriteRunExport writes run runID of workspace ws in format (ExportCSV or
// ExportJSON) to w: the bytes the run page's export buttons download
// (GET /runs/:id/export.csv and export.json, without ?excel), through the
// same writers, for the command line's `batcheval export`, which reads as
// the local user of ws. A run not finished exports the scores stored so
// far, as the web's export does. Where a request is answered "being
// prepared" (a large finished run whose summary is being built), this
// waits for it until ctx ends; a build that failed ends the export with
// that said (the log names the cause).
func (h *Handlers) WriteRunExport(ctx context.Context, ws models.Workspace, runID int64, format string, w io.Writer) error {
	var write func(context.Context, models.Run, io.Writer) error
	switch format {
	case ExportCSV:
		write = h.writeRunCSV
	case ExportJSON:
		write = h.writeRunJSON
	default:
		return models.Errorf(models.EInvalid, "no export format %q: the formats are %s and %s", format, ExportCSV, ExportJSON)
	}
	ctx = context.WithValue(ctx, principalKey{}, Principal{Kind: LocalUser, Workspace: ws, Role: models.RoleOwner,
		Workspaces: []models.WorkspaceRole{{Workspace: ws, Role: models.RoleOwner}}})
	for {
		run, err := h.DB.FindRun(ctx, ws.ID, runID)
		if err != nil {
			return err
		}
		err = write(ctx, run, w)
		p := preparingOf(err)
		switch {
		case p == nil:
			return err
		case p.lastFailed:
			return fmt.Errorf("building the results of run %d failed (the log says why); try again: %w", runID, err)
		}
		// Nothing was written: the summary comes before the first byte.
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(exportPreparingPoll):
		}
	}
}
