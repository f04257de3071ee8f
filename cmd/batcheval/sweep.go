package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/batcheval/batcheval/models"
)

// uploadSweepInterval is how often expired pending uploads are deleted: an
// upload lives 24 hours (models.UploadTTL), so a quarter of an hour late is
// nothing, and the query is one indexed delete.
const uploadSweepInterval = 15 * time.Minute

// sweepUploads deletes expired pending uploads now and every interval
// until ctx ends. Several processes may sweep the same database: the
// delete is idempotent.
func sweepUploads(ctx context.Context, db *models.DB, log *slog.Logger, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		n, err := db.PurgeExpiredUploads(ctx, time.Now())
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("deleting expired uploads", "err", err)
		case n > 0:
			log.Info("deleted expired uploads", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
