package models

import "context"

// Keyset pages of a project's datasets and rubrics and of a workspace's
// experiments for the JSON API: at most limit of the active ones (not
// archived or trashed) with an id above afterID, in ascending id order,
// read in the database. projectID 0 lists experiments of every project.

// ListDatasetsAfter is a page of a project's datasets.
func (db *DB) ListDatasetsAfter(ctx context.Context, wsID, projectID, afterID int64, limit int) ([]Dataset, error) {
	var ds []Dataset
	err := db.Reader(ctx).Where("workspace_id = ? AND project_id = ? AND id > ?", wsID, projectID, afterID).
		Scopes(listScope(nil)).Order("id").Limit(limit).Find(&ds).Error
	return ds, err
}

// ListRubricsAfter is a page of a project's rubrics.
func (db *DB) ListRubricsAfter(ctx context.Context, wsID, projectID, afterID int64, limit int) ([]Rubric, error) {
	var rs []Rubric
	err := db.Reader(ctx).Where("workspace_id = ? AND project_id = ? AND id > ?", wsID, projectID, afterID).
		Scopes(listScope(nil)).Order("id").Limit(limit).Find(&rs).Error
	return rs, err
}

// ListExperimentsAfter is a page of the workspace's experiments, of one
// project when projectID is not 0.
func (db *DB) ListExperimentsAfter(ctx context.Context, wsID, projectID, afterID int64, limit int) ([]Experiment, error) {
	q := db.Reader(ctx).Where("workspace_id = ? AND id > ?", wsID, afterID)
	if projectID != 0 {
		q = q.Where("project_id = ?", projectID)
	}
	var es []Experiment
	err := q.Scopes(listScope(nil)).Order("id").Limit(limit).Find(&es).Error
	return es, err
}

// ExperimentRunIDs gives the ids of the live runs of each experiment of
// ids (archived runs included, as the experiment lists them), ascending.
func (db *DB) ExperimentRunIDs(ctx context.Context, wsID int64, ids []int64) (map[int64][]int64, error) {
	out := map[int64][]int64{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct{ ID, ExperimentID int64 }
	err := db.Reader(ctx).Model(&Run{}).Select("id, experiment_id").
		Where("workspace_id = ? AND experiment_id IN ?", wsID, ids).Scopes(live).Order("id").Scan(&rows).Error
	for _, r := range rows {
		out[r.ExperimentID] = append(out[r.ExperimentID], r.ID)
	}
	return out, err
}
