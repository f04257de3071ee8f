package models

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Kind names a kind of object that can be renamed, archived and deleted.
type Kind string

// The kinds with a lifecycle.
const (
	KindProject    Kind = "project"
	KindDataset    Kind = "dataset"
	KindRubric     Kind = "rubric"
	KindJudge      Kind = "judge"
	KindRun        Kind = "run"
	KindExperiment Kind = "experiment"
)

// Kinds lists every kind with a lifecycle.
var Kinds = []Kind{KindProject, KindDataset, KindRubric, KindJudge, KindRun, KindExperiment}

// table is the kind's table.
func (k Kind) table() string {
	switch k {
	case KindProject:
		return "projects"
	case KindDataset:
		return "datasets"
	case KindRubric:
		return "rubrics"
	case KindJudge:
		return "judges"
	case KindRun:
		return "runs"
	case KindExperiment:
		return "experiments"
	}
	return ""
}

// Valid reports whether k is one of Kinds.
func (k Kind) Valid() bool { return k.table() != "" }

// TrashRetention is how long a deleted object can be restored: the
// sweeper purges trash entries older than this.
const TrashRetention = 30 * 24 * time.Hour

// ---- query scopes ----

// live hides trashed rows: every lookup and list of a lifecycle table
// goes through it.
func live(q *gorm.DB) *gorm.DB { return q.Where("trash_id IS NULL") }

// ArchiveFilter says which of the live objects a list returns.
type ArchiveFilter int

// Archive filters; the zero value is the default lists' "active only".
const (
	ActiveOnly ArchiveFilter = iota
	ArchivedOnly
	ActiveAndArchived
)

// ListOption changes what a list returns.
type ListOption func(*ArchiveFilter)

// WithArchived lists archived objects as well as active ones.
func WithArchived() ListOption { return func(f *ArchiveFilter) { *f = ActiveAndArchived } }

// OnlyArchived lists the archived objects alone.
func OnlyArchived() ListOption { return func(f *ArchiveFilter) { *f = ArchivedOnly } }

// Archived picks the list option for a filter.
func Archived(f ArchiveFilter) ListOption { return func(x *ArchiveFilter) { *x = f } }

// listScope hides trashed rows and, as the options ask, archived ones.
func listScope(opts []ListOption) func(*gorm.DB) *gorm.DB {
	f := ActiveOnly
	for _, o := range opts {
		o(&f)
	}
	return func(q *gorm.DB) *gorm.DB {
		q = live(q)
		switch f {
		case ActiveOnly:
			return q.Where("archived_at IS NULL")
		case ArchivedOnly:
			return q.Where("archived_at IS NOT NULL")
		}
		return q
	}
}

// ---- rename and archive ----

// Rename gives a live object of the workspace a new name and returns the
// old one.
func (db *DB) Rename(ctx context.Context, wsID int64, k Kind, id int64, name string) (string, error) {
	return db.RenameIf(ctx, wsID, k, id, name, "")
}

// RenameIf is Rename for a writer who read the object named was: when it
// is named otherwise now (someone renamed it since), nothing is written and
// the error's code is EChanged. An empty was renames whatever the name.
// Given an audit (described with the old and the new name), its entry is
// written in the same transaction.
func (db *DB) RenameIf(ctx context.Context, wsID int64, k Kind, id int64, name, was string, audit ...Audit[NameChange]) (string, error) {
	if !k.Valid() {
		return "", Errorf(EInvalid, "%q cannot be renamed", k)
	}
	name, err := CheckNewName(k, name)
	if err != nil {
		return "", err
	}
	var old string
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if old, err = liveName(tx, wsID, k, id); err != nil {
			return err
		}
		if was != "" && old != was {
			return &Error{Code: EChanged, Message: fmt.Sprintf("this %s was renamed %q after you opened the page (it was %q then); nothing was saved", k, old, was)}
		}
		upd := map[string]any{"name": name}
		if k == KindRun || k == KindExperiment {
			upd["name_folded"] = FoldName(name)
		}
		if k == KindProject || k == KindRubric || k == KindJudge {
			upd["updated_at"] = time.Now().UTC()
		}
		q := tx.Table(k.table()).Where("workspace_id = ? AND id = ?", wsID, id).Scopes(live)
		if was != "" {
			// Checked again in the write: a rename racing this one may
			// have come between the read and here.
			q = q.Where("name = ?", was)
		}
		res := q.Updates(upd)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return &Error{Code: EChanged, Message: fmt.Sprintf("this %s was renamed after you opened the page; nothing was saved", k)}
		}
		return recordAudits(tx, audit, NameChange{Old: old, New: name})
	})
	return old, err
}

// NameChange is what a rename did: the name before and the name stored.
type NameChange struct{ Old, New string }

// SetArchived archives (or brings back from the archive) a live object
// and returns its name. Given an audit (described with the name), its
// entry is written in the same transaction.
func (db *DB) SetArchived(ctx context.Context, wsID int64, k Kind, id int64, archived bool, audit ...Audit[string]) (string, error) {
	if !k.Valid() {
		return "", Errorf(EInvalid, "%q cannot be archived", k)
	}
	var name string
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if name, err = liveName(tx, wsID, k, id); err != nil {
			return err
		}
		var at any
		if archived {
			at = time.Now().UTC()
		}
		if err := tx.Table(k.table()).Where("workspace_id = ? AND id = ?", wsID, id).Scopes(live).Update("archived_at", at).Error; err != nil {
			return err
		}
		return recordAudits(tx, audit, name)
	})
	return name, err
}

// liveName reads the name of a live object, or says it does not exist.
func liveName(tx *gorm.DB, wsID int64, k Kind, id int64) (string, error) {
	var names []string
	err := tx.Table(k.table()).Where("workspace_id = ? AND id = ?", wsID, id).Scopes(live).Limit(1).Pluck("name", &names).Error
	if err != nil {
		return "", fmt.Errorf("find %s %d: %w", k, id, err)
	}
	if len(names) == 0 {
		return "", Errorf(ENotFound, "%s %d does not exist (or is not in this workspace)", k, id)
	}
	return names[0], nil
}

// ---- trash ----

// TrashEntry is one deletion a person asked for. The objects it took
// (the deleted object and what went with it) point at it by trash_id.
type TrashEntry struct {
	ID              int64
	WorkspaceID     int64
	Kind            Kind
	ObjectID        int64
	Name            string
	Detail          string
	DeletedByUserID *int64
	DeletedBy       string
	DeletedAt       time.Time
	// PurgingAt is set once a purge of the entry has begun (Purge): its
	// bulk rows may be partly gone, so it can no longer be restored, and a
	// purge cut short is finished by the next sweep.
	PurgingAt *time.Time
}

// PurgeAt is when the sweeper removes the entry for good.
func (e TrashEntry) PurgeAt() time.Time { return e.DeletedAt.Add(TrashRetention) }

// TrashItem names one object that goes to the trash with another.
type TrashItem struct {
	Kind   Kind
	ID     int64
	Name   string
	Status string // runs only
}

// TrashPlan is what deleting an object would do: the object, what goes
// with it, and the runs still going that would be cancelled first.
type TrashPlan struct {
	Kind Kind
	ID   int64
	Name string
	// With lists the live objects that go to the trash with it (a
	// project's contents, a dataset's runs and experiments, an
	// experiment's runs).
	With []TrashItem
	// Unfinished lists the queued or running runs among the object and
	// With: they are cancelled before the deletion.
	Unfinished []int64
	// JudgeInUse lists the unfinished runs calling a judge (a judge in use
	// is not deleted: the run would lose its key mid-way).
	JudgeInUse []int64
}

// Runs lists the runs that would go to the trash with the object.
func (p TrashPlan) Runs() []TrashItem {
	var out []TrashItem
	for _, it := range p.With {
		if it.Kind == KindRun {
			out = append(out, it)
		}
	}
	return out
}

// Summary counts what goes with the object ("3 datasets, 5 runs").
func (p TrashPlan) Summary() string {
	counts := map[Kind]int{}
	for _, it := range p.With {
		counts[it.Kind]++
	}
	var parts []string
	for _, k := range Kinds {
		if n := counts[k]; n > 0 {
			word := string(k)
			if n > 1 {
				word += "s"
			}
			parts = append(parts, strconv.Itoa(n)+" "+word)
		}
	}
	return strings.Join(parts, ", ")
}

// Listing names what a confirmation of the plan shows, to be posted back
// with it: the object, each object going with it, and each run cancelled
// first ("dataset:3 run:7 run:9 cancel:9"). The deletion then acts only
// on what was shown (CheckListed, TrashIf). It is never empty.
func (p TrashPlan) Listing() string {
	parts := []string{listingKey(p.Kind, p.ID)}
	for _, it := range p.With {
		parts = append(parts, listingKey(it.Kind, it.ID))
	}
	for _, id := range p.Unfinished {
		parts = append(parts, "cancel:"+strconv.FormatInt(id, 10))
	}
	return strings.Join(parts, " ")
}

func listingKey(k Kind, id int64) string { return string(k) + ":" + strconv.FormatInt(id, 10) }

// maxUnlistedNamed is how many unlisted objects a refusal names before
// counting the rest: enough to recognise them, not a page of names.
const maxUnlistedNamed = 10

// CheckListed says whether the plan does no more than listing (a Listing
// shown earlier, "" for none to check) named: an object that would now go
// with it (a run launched since the page was shown), or a run that would
// now be cancelled first (restarted since), makes it an EChanged error
// naming them. What was listed and is gone or finished since is no
// reason to refuse: the deletion does less than was confirmed.
func (p TrashPlan) CheckListed(listing string) error {
	if listing == "" {
		return nil
	}
	listed := map[string]bool{}
	for _, f := range strings.Fields(listing) {
		listed[f] = true
	}
	var more []string
	if !listed[listingKey(p.Kind, p.ID)] {
		more = append(more, fmt.Sprintf("%s “%s” itself (the page was for another object)", p.Kind, p.Name))
	}
	unlisted := map[int64]bool{} // runs named as new already
	for _, it := range p.With {
		if !listed[listingKey(it.Kind, it.ID)] {
			more = append(more, describeItem(it))
			if it.Kind == KindRun {
				unlisted[it.ID] = true
			}
		}
	}
	for _, id := range p.Unfinished {
		if listed["cancel:"+strconv.FormatInt(id, 10)] || unlisted[id] {
			continue
		}
		name := fmt.Sprintf("run “%s”", p.Name) // the object itself, a run
		for _, it := range p.With {
			if it.Kind == KindRun && it.ID == id {
				name = describeItem(it)
			}
		}
		more = append(more, name+" would now be cancelled first")
	}
	if len(more) == 0 {
		return nil
	}
	if len(more) > maxUnlistedNamed {
		more = append(more[:maxUnlistedNamed], fmt.Sprintf("%d more", len(more)-maxUnlistedNamed))
	}
	return &Error{Code: EChanged, Message: "since the confirmation page was shown, more would go with " + string(p.Kind) +
		" “" + p.Name + "”: " + strings.Join(more, "; ")}
}

// describeItem names an object going with another, a run with its status.
func describeItem(it TrashItem) string {
	s := fmt.Sprintf("%s “%s”", it.Kind, it.Name)
	if it.Name == "" {
		s = fmt.Sprintf("%s %d", it.Kind, it.ID)
	}
	if it.Status != "" {
		s += " (" + it.Status + ")"
	}
	return s
}

// dependents is, for each kind, which other tables' live rows go to the
// trash with it, by which column.
var dependents = map[Kind][]struct {
	kind   Kind
	column string
}{
	KindProject:    {{KindDataset, "project_id"}, {KindRubric, "project_id"}, {KindExperiment, "project_id"}, {KindRun, "project_id"}},
	KindDataset:    {{KindExperiment, "dataset_id"}, {KindRun, "dataset_id"}},
	KindExperiment: {{KindRun, "experiment_id"}},
	// Rubrics, judges and runs go alone: runs keep copies of their rubric
	// and judge, and a run's derived runs stand on their own.
}

// PlanTrash says what deleting a live object would do, without doing it.
func (db *DB) PlanTrash(ctx context.Context, wsID int64, k Kind, id int64) (TrashPlan, error) {
	return planTrash(db.Gorm.WithContext(ctx), wsID, k, id)
}

func planTrash(tx *gorm.DB, wsID int64, k Kind, id int64) (TrashPlan, error) {
	if !k.Valid() {
		return TrashPlan{}, Errorf(EInvalid, "%q cannot be deleted", k)
	}
	name, err := liveName(tx, wsID, k, id)
	if err != nil {
		return TrashPlan{}, err
	}
	p := TrashPlan{Kind: k, ID: id, Name: name}
	for _, d := range dependents[k] {
		var rows []struct {
			ID     int64
			Name   string
			Status string
		}
		cols := "id, name"
		if d.kind == KindRun {
			cols = "id, name, status"
		}
		err := tx.Table(d.kind.table()).Select(cols).Where("workspace_id = ? AND "+d.column+" = ?", wsID, id).
			Scopes(live).Order("id").Scan(&rows).Error
		if err != nil {
			return p, fmt.Errorf("list what goes with %s %d: %w", k, id, err)
		}
		for _, r := range rows {
			p.With = append(p.With, TrashItem{Kind: d.kind, ID: r.ID, Name: r.Name, Status: r.Status})
		}
	}
	// A project's runs may also be an experiment's: list each once.
	seen := map[TrashItem]bool{}
	with := p.With[:0]
	for _, it := range p.With {
		key := TrashItem{Kind: it.Kind, ID: it.ID}
		if !seen[key] {
			seen[key] = true
			with = append(with, it)
		}
	}
	p.With = with
	if k == KindRun {
		var r Run
		if err := tx.Where("id = ?", id).First(&r).Error; err != nil {
			return p, fmt.Errorf("find run %d: %w", id, err)
		}
		if !r.Finished() {
			p.Unfinished = append(p.Unfinished, id)
		}
	}
	for _, it := range p.With {
		if it.Kind == KindRun && (it.Status == RunQueued || it.Status == RunRunning || it.Status == RunPaused) {
			p.Unfinished = append(p.Unfinished, it.ID)
		}
	}
	if k == KindJudge {
		err := tx.Model(&Run{}).Where("workspace_id = ? AND judge_id = ? AND status IN ?", wsID, id, []string{RunQueued, RunRunning, RunPaused}).
			Order("id").Pluck("id", &p.JudgeInUse).Error
		if err != nil {
			return p, fmt.Errorf("find runs using judge %d: %w", id, err)
		}
	}
	return p, nil
}

// Actor is who asks for a deletion, as the trash page shows it.
type Actor struct {
	UserID *int64
	Label  string
}

// Trash moves a live object, and what goes with it (see PlanTrash), to the
// trash in one transaction. Unfinished runs must have been cancelled
// first (the job engine is the runner's), and a judge that unfinished runs
// call is refused: both are conflicts.
func (db *DB) Trash(ctx context.Context, wsID int64, k Kind, id int64, by Actor) (TrashEntry, TrashPlan, error) {
	return db.TrashIf(ctx, wsID, k, id, by, "")
}

// TrashIf is Trash for a deletion confirmed on a page that listed what
// goes (listing: the plan's Listing then; "" checks nothing): when more
// would go now, or another run would need cancelling, nothing is moved
// and the error's code is EChanged (see CheckListed). It is checked in
// the moving transaction, so a run launched after the check is not taken.
// Given an audit (described with the entry made), its entry is written in
// the same transaction.
func (db *DB) TrashIf(ctx context.Context, wsID int64, k Kind, id int64, by Actor, listing string, audit ...Audit[TrashEntry]) (TrashEntry, TrashPlan, error) {
	var (
		e    TrashEntry
		plan TrashPlan
	)
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := lockProjectOf(tx, db.Dialect, wsID, k, id); err != nil {
			return err
		}
		var err error
		if plan, err = planTrash(tx, wsID, k, id); err != nil {
			return err
		}
		if err := plan.CheckListed(listing); err != nil {
			return err
		}
		if len(plan.Unfinished) > 0 {
			return Errorf(EConflict, "run %s has not finished: cancel it before deleting", joinIDs(plan.Unfinished))
		}
		if len(plan.JudgeInUse) > 0 {
			return Errorf(EConflict, "judge %q is calling the model for run %s: wait for it to finish or cancel it, then delete the judge",
				plan.Name, joinIDs(plan.JudgeInUse))
		}
		e = TrashEntry{WorkspaceID: wsID, Kind: k, ObjectID: id, Name: clip(plan.Name, 300), Detail: plan.Summary(),
			DeletedByUserID: by.UserID, DeletedBy: clip(by.Label, 300), DeletedAt: time.Now().UTC()}
		if err := tx.Create(&e).Error; err != nil {
			return fmt.Errorf("record deletion: %w", err)
		}
		mark := func(kind Kind, ids []int64) error {
			if len(ids) == 0 {
				return nil
			}
			return tx.Table(kind.table()).Where("workspace_id = ? AND id IN ?", wsID, ids).Scopes(live).
				Update("trash_id", e.ID).Error
		}
		if err := mark(k, []int64{id}); err != nil {
			return fmt.Errorf("move %s %d to the trash: %w", k, id, err)
		}
		byKind := map[Kind][]int64{}
		for _, it := range plan.With {
			byKind[it.Kind] = append(byKind[it.Kind], it.ID)
		}
		for kind, ids := range byKind {
			if err := mark(kind, ids); err != nil {
				return fmt.Errorf("move the %ss of %s %d to the trash: %w", kind, k, id, err)
			}
		}
		return recordAudits(tx, audit, e)
	})
	return e, plan, err
}

// lockProjectOf locks, on PostgreSQL, the row of the project an object
// belongs to (the project itself; none for a judge) until the transaction
// ends. A launch locks the same row (createRunTx), so a deletion and a
// launch in one project take turns: a run launched while its project (or
// dataset, or experiment) was being moved to the trash either commits
// first, and the deletion's plan then sees it unfinished and refuses, or
// waits, and then finds what it runs on in the trash and is refused. (Each
// read its own snapshot: the launch's run was not in the deletion's plan,
// and a live run was left in a trashed project.) SQLite's immediate
// transactions already hold the whole database.
func lockProjectOf(tx *gorm.DB, d Dialect, wsID int64, k Kind, id int64) error {
	if d != Postgres || k == KindJudge || !k.Valid() {
		return nil
	}
	projectID := id
	if k != KindProject {
		var ids []int64
		if err := tx.Table(k.table()).Where("workspace_id = ? AND id = ?", wsID, id).Limit(1).Pluck("project_id", &ids).Error; err != nil {
			return fmt.Errorf("find the project of %s %d: %w", k, id, err)
		}
		if len(ids) == 0 {
			return nil // planTrash says it does not exist
		}
		projectID = ids[0]
	}
	if err := tx.Exec("SELECT id FROM projects WHERE workspace_id = ? AND id = ? FOR UPDATE", wsID, projectID).Error; err != nil {
		return fmt.Errorf("lock project %d: %w", projectID, err)
	}
	return nil
}

// checkLaunchable locks the run's project (lockProjectOf) and checks, in
// the launch's transaction, that the project, dataset and experiment the
// run is made in are still live: one moved to the trash since the launch
// form was read refuses the launch, and nothing is written.
func checkLaunchable(tx *gorm.DB, d Dialect, r *Run) error {
	if r.ProjectID == 0 {
		return nil
	}
	if err := lockProjectOf(tx, d, r.WorkspaceID, KindProject, r.ProjectID); err != nil {
		return err
	}
	check := func(k Kind, id int64) error {
		var n int64
		if err := tx.Table(k.table()).Where("workspace_id = ? AND id = ?", r.WorkspaceID, id).Scopes(live).Count(&n).Error; err != nil {
			return fmt.Errorf("check %s %d: %w", k, id, err)
		}
		if n == 0 {
			return Errorf(EConflict, "the %s of this run (%s %d) was moved to the trash or no longer exists: nothing was launched. "+
				"Restore it from the trash to launch there", k, k, id)
		}
		return nil
	}
	if err := check(KindProject, r.ProjectID); err != nil {
		return err
	}
	if r.DatasetID != 0 {
		if err := check(KindDataset, r.DatasetID); err != nil {
			return err
		}
	}
	if r.ExperimentID != nil {
		if err := check(KindExperiment, *r.ExperimentID); err != nil {
			return err
		}
	}
	return nil
}

func joinIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(s, ", ")
}

// ListTrash lists a workspace's trash, newest first.
func (db *DB) ListTrash(ctx context.Context, wsID int64) ([]TrashEntry, error) {
	var es []TrashEntry
	err := db.Reader(ctx).Where("workspace_id = ?", wsID).Order("deleted_at DESC, id DESC").Find(&es).Error
	return es, err
}

// FindTrashEntry finds an entry of the workspace's trash.
func (db *DB) FindTrashEntry(ctx context.Context, wsID, id int64) (TrashEntry, error) {
	var e TrashEntry
	err := db.Reader(ctx).Where("workspace_id = ? AND id = ?", wsID, id).First(&e).Error
	return e, notFound(err, "trash entry", id)
}

// parentLinks are the references a restored object needs to be live:
// nothing comes back into a project or onto a dataset that is still in
// the trash.
var parentLinks = []struct {
	child, parent Kind
	column        string
}{
	{KindDataset, KindProject, "project_id"},
	{KindRubric, KindProject, "project_id"},
	{KindExperiment, KindProject, "project_id"},
	{KindRun, KindProject, "project_id"},
	{KindExperiment, KindDataset, "dataset_id"},
	{KindRun, KindDataset, "dataset_id"},
}

// Restore brings back everything a trash entry took, in one transaction,
// and removes the entry. It refuses while a project or dataset that the
// objects belong to is itself in the trash (under another entry). Given
// an audit (described with the entry), its entry is written in the same
// transaction.
func (db *DB) Restore(ctx context.Context, wsID, entryID int64, audit ...Audit[TrashEntry]) (TrashEntry, error) {
	var e TrashEntry
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("workspace_id = ? AND id = ?", wsID, entryID).First(&e).Error; err != nil {
			return notFound(err, "trash entry", entryID)
		}
		if e.PurgingAt != nil {
			return Errorf(EConflict, "%s %q is being deleted for good and can no longer be restored", e.Kind, e.Name)
		}
		for _, l := range parentLinks {
			var blocking []int64
			err := tx.Table(l.parent.table()+" AS p").
				Joins("JOIN "+l.child.table()+" AS c ON c."+l.column+" = p.id").
				Where("c.trash_id = ? AND p.trash_id IS NOT NULL AND p.trash_id <> ?", e.ID, e.ID).
				Limit(1).Pluck("p.trash_id", &blocking).Error
			if err != nil {
				return fmt.Errorf("check what %s %d belongs to: %w", e.Kind, e.ObjectID, err)
			}
			if len(blocking) > 0 {
				var other TrashEntry
				if err := tx.First(&other, blocking[0]).Error; err != nil {
					return fmt.Errorf("find trash entry %d: %w", blocking[0], err)
				}
				return Errorf(EConflict, "%s %q belongs to %s %q, which is in the trash too: restore %q first",
					e.Kind, e.Name, l.parent, other.Name, other.Name)
			}
		}
		for _, k := range Kinds {
			if err := tx.Table(k.table()).Where("trash_id = ?", e.ID).Update("trash_id", nil).Error; err != nil {
				return fmt.Errorf("restore %ss: %w", k, err)
			}
		}
		if err := tx.Delete(&TrashEntry{}, e.ID).Error; err != nil {
			return err
		}
		return recordAudits(tx, audit, e)
	})
	return e, err
}

// PurgeCounts says what a purge removed for good.
type PurgeCounts struct {
	Projects, Datasets, Rubrics, Judges, Runs, Experiments int
	Rows, Batches, Scores                                  int64
	// CachedAnswers are the judge's answers the purged runs paid for,
	// deleted from the answer cache.
	CachedAnswers int64
}

// Purge removes for good everything a trash entry took and everything
// that stood on it (scores, batches, dataset rows, and objects deleted
// separately inside a purged project or dataset), then the entry and any
// entry left with nothing to restore.
//
// It goes in three stages, so that no writer waits behind it for long:
// the entry is marked as being purged (it can no longer be restored); the
// bulk rows (a run's scores, stored sample results and batches, a
// dataset's rows: millions for a large run) are deleted a chunk at a
// time, each chunk its own short transaction; then everything else goes
// in one transaction, as before. In one transaction, a run of 1,000,000
// samples held SQLite's write lock for tens of seconds and every other
// write failed after the busy timeout. A purge cut short (a crash) leaves
// the entry marked and its objects in the trash, hidden as before; the
// next sweep (SweepTrash) finishes it.
//
// Given an audit (described with the entry), its entry is written in the
// transaction that marks the entry: the purge is decided there (the
// entry can no longer be restored), so a purge whose entry cannot be
// written is not started. A purge of an entry marked already (cut short,
// or under way elsewhere) finishes it and records nothing again.
func (db *DB) Purge(ctx context.Context, wsID, entryID int64, audit ...Audit[TrashEntry]) (TrashEntry, PurgeCounts, error) {
	var e TrashEntry
	g := db.Gorm.WithContext(ctx)
	if err := g.Where("workspace_id = ? AND id = ?", wsID, entryID).First(&e).Error; err != nil {
		return e, PurgeCounts{}, notFound(err, "trash entry", entryID)
	}
	if e.PurgingAt == nil {
		now := db.Now().UTC()
		var res *gorm.DB
		err := g.Transaction(func(tx *gorm.DB) error {
			res = tx.Model(&TrashEntry{}).Where("id = ? AND purging_at IS NULL", e.ID).Update("purging_at", now)
			if res.Error != nil {
				return fmt.Errorf("mark trash entry %d as being purged: %w", e.ID, res.Error)
			}
			if res.RowsAffected == 0 {
				return nil
			}
			return recordAudits(tx, audit, e)
		})
		if err != nil {
			return e, PurgeCounts{}, err
		}
		if res.RowsAffected == 0 {
			// Restored or purged meanwhile, or marked by another purge.
			if err := g.Where("workspace_id = ? AND id = ?", wsID, entryID).First(&e).Error; err != nil {
				return e, PurgeCounts{}, notFound(err, "trash entry", entryID)
			}
		} else {
			e.PurgingAt = &now
		}
	}
	var sets purgeSets
	err := g.Transaction(func(tx *gorm.DB) error {
		var err error
		sets, err = collectPurge(tx, wsID, e.ID)
		return err
	})
	if err != nil {
		return e, PurgeCounts{}, err
	}
	bulk, err := db.purgeBulk(ctx, sets)
	if err != nil {
		return e, bulk, err
	}
	var n PurgeCounts
	err = g.Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("workspace_id = ? AND id = ?", wsID, entryID).First(&e).Error; err != nil {
			return notFound(err, "trash entry", entryID)
		}
		var err error
		n, err = purgeEntry(tx, wsID, e.ID)
		return err
	})
	n.Scores += bulk.Scores
	n.Batches += bulk.Batches
	n.CachedAnswers += bulk.CachedAnswers
	n.Rows += bulk.Rows
	return e, n, err
}

// purgeChunkRows is how many rows one statement of a purge's bulk stage
// deletes. The costliest rows set it: 5,000 stored sample results (nine
// indexes each) or batches (their prompts and answers) held SQLite's write
// lock for about 1.5 s; 1,000 keep a waiting writer under half a second.
const purgeChunkRows = 1000

// purgeBulk deletes the bulk rows of what a purge removes, a chunk at a
// time, each chunk in its own transaction: the runs' scores, stored sample
// results and batches, then the datasets' rows. Every row it deletes
// belongs to an object in the trash entry being purged, which nothing
// reads and which can no longer be restored.
func (db *DB) purgeBulk(ctx context.Context, sets purgeSets) (PurgeCounts, error) {
	var n PurgeCounts
	size := db.PurgeChunkRows
	if size <= 0 {
		size = purgeChunkRows
	}
	// A row's own address, for a table without an id column.
	key := "rowid"
	if db.Dialect == Postgres {
		key = "ctid"
	}
	chunks := func(table, column string, id int64) (int64, error) {
		var total int64
		q := "DELETE FROM " + table + " WHERE " + key + " IN (SELECT " + key + " FROM " + table + " WHERE " + column + " = ? LIMIT ?)"
		for {
			if err := ctx.Err(); err != nil {
				return total, err
			}
			res := db.Gorm.WithContext(ctx).Exec(q, id, size)
			if res.Error != nil {
				return total, fmt.Errorf("purge %s: %w", table, res.Error)
			}
			total += res.RowsAffected
			if res.RowsAffected < int64(size) {
				return total, nil
			}
		}
	}
	for _, run := range sets.runs {
		steps := []struct {
			table string
			count *int64
		}{{"run_scores", &n.Scores}, {"run_sample_results", nil}, {"run_batches", &n.Batches},
			// The judge's answers the run paid for: they often quote
			// the samples they judged.
			{"judge_response_cache", &n.CachedAnswers}}
		for _, s := range steps {
			c, err := chunks(s.table, "run_id", run)
			if s.count != nil {
				*s.count += c
			}
			if err != nil {
				return n, err
			}
		}
	}
	for _, ds := range sets.datasets {
		c, err := chunks("dataset_rows", "dataset_id", ds)
		n.Rows += c
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// purgeSets are the ids of everything a purge removes, by kind.
type purgeSets struct {
	projects, datasets, rubrics, experiments, runs, judges []int64
}

// collectPurge finds everything a trash entry's purge removes: what the
// entry took, and what stands in a purged project or on a purged dataset
// (also objects deleted separately, under other entries).
func collectPurge(tx *gorm.DB, wsID, entryID int64) (purgeSets, error) {
	var s purgeSets
	ids := func(k Kind, cond string, args ...any) ([]int64, error) {
		var out []int64
		err := tx.Table(k.table()).Where("workspace_id = ?", wsID).Where(cond, args...).Pluck("id", &out).Error
		return out, err
	}
	// Collect first, delete after: later sets depend on earlier ones.
	var err error
	if s.projects, err = ids(KindProject, "trash_id = ?", entryID); err != nil {
		return s, err
	}
	under := func(k Kind) ([]int64, error) {
		if len(s.projects) == 0 {
			return ids(k, "trash_id = ?", entryID)
		}
		return ids(k, "trash_id = ? OR project_id IN ?", entryID, s.projects)
	}
	if s.datasets, err = under(KindDataset); err != nil {
		return s, err
	}
	if s.rubrics, err = under(KindRubric); err != nil {
		return s, err
	}
	onData := func(k Kind) ([]int64, error) {
		switch {
		case len(s.projects) > 0 && len(s.datasets) > 0:
			return ids(k, "trash_id = ? OR project_id IN ? OR dataset_id IN ?", entryID, s.projects, s.datasets)
		case len(s.datasets) > 0:
			return ids(k, "trash_id = ? OR dataset_id IN ?", entryID, s.datasets)
		}
		return under(k)
	}
	if s.experiments, err = onData(KindExperiment); err != nil {
		return s, err
	}
	if s.runs, err = onData(KindRun); err != nil {
		return s, err
	}
	if s.judges, err = ids(KindJudge, "trash_id = ?", entryID); err != nil {
		return s, err
	}
	return s, nil
}

func purgeEntry(tx *gorm.DB, wsID, entryID int64) (PurgeCounts, error) {
	var n PurgeCounts
	sets, err := collectPurge(tx, wsID, entryID)
	if err != nil {
		return n, err
	}
	projects, datasets, rubrics, experiments, runs, judges := sets.projects, sets.datasets, sets.rubrics, sets.experiments, sets.runs, sets.judges
	del := func(table, column string, list []int64) (int64, error) {
		if len(list) == 0 {
			return 0, nil
		}
		res := tx.Exec("DELETE FROM "+table+" WHERE "+column+" IN ?", list)
		if res.Error != nil {
			return 0, fmt.Errorf("purge %s: %w", table, res.Error)
		}
		return res.RowsAffected, nil
	}
	steps := []struct {
		table, column string
		list          []int64
		count         *int64
	}{
		{"run_scores", "run_id", runs, &n.Scores},
		{"run_batches", "run_id", runs, &n.Batches},
		// Answers stored after the bulk stage (a late answer of a run
		// cancelled as it went to the trash).
		{"judge_response_cache", "run_id", runs, &n.CachedAnswers},
		{"run_events", "run_id", runs, nil},
		{"runs", "id", runs, nil},
		{"experiments", "id", experiments, nil},
		{"dataset_rows", "dataset_id", datasets, &n.Rows},
		{"datasets", "id", datasets, nil},
		{"rubrics", "id", rubrics, nil},
		{"judges", "id", judges, nil},
		{"projects", "id", projects, nil},
	}
	for _, s := range steps {
		c, err := del(s.table, s.column, s.list)
		if err != nil {
			return n, err
		}
		if s.count != nil {
			*s.count = c
		}
	}
	n.Projects, n.Datasets, n.Rubrics, n.Judges, n.Runs, n.Experiments =
		len(projects), len(datasets), len(rubrics), len(judges), len(runs), len(experiments)
	if err := tx.Exec("DELETE FROM trash_entries WHERE id = ?", entryID).Error; err != nil {
		return n, fmt.Errorf("remove trash entry %d: %w", entryID, err)
	}
	// Entries whose objects went with this purge have nothing to restore.
	var refs []string
	for _, k := range Kinds {
		refs = append(refs, "SELECT trash_id FROM "+k.table()+" WHERE trash_id IS NOT NULL")
	}
	err = tx.Exec("DELETE FROM trash_entries WHERE workspace_id = ? AND id NOT IN ("+strings.Join(refs, " UNION ")+")", wsID).Error
	if err != nil {
		return n, fmt.Errorf("remove emptied trash entries: %w", err)
	}
	return n, nil
}

// SweepTrash purges every trash entry, of every workspace, deleted before
// now minus TrashRetention, and every entry whose purge began and did not
// finish (a crash), oldest first, each on its own (Purge). It returns the
// entries it purged.
func (db *DB) SweepTrash(ctx context.Context, now time.Time) ([]TrashEntry, error) {
	var due []TrashEntry
	// With the entries whose purge began and was cut short.
	err := db.Gorm.WithContext(ctx).Where("deleted_at < ? OR purging_at IS NOT NULL", now.UTC().Add(-TrashRetention)).Order("deleted_at, id").Find(&due).Error
	if err != nil {
		return nil, fmt.Errorf("find expired trash: %w", err)
	}
	var done []TrashEntry
	for _, e := range due {
		_, _, err := db.Purge(ctx, e.WorkspaceID, e.ID)
		if ErrorCode(err) == ENotFound {
			continue // emptied by the purge of what contained it
		}
		if err != nil {
			return done, err
		}
		done = append(done, e)
	}
	return done, nil
}

// TrashSweepInterval is how often a server sweeps the trash: hourly is
// far finer than the 30-day retention and costs one small query.
const TrashSweepInterval = time.Hour

// RunTrashSweeper sweeps the trash now and then every interval until ctx
// ends, writing each purge to the workspace's audit log. now is the clock
// (time.Now outside tests).
func (db *DB) RunTrashSweeper(ctx context.Context, interval time.Duration, now func() time.Time, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		purged, err := db.SweepTrash(ctx, now())
		if err != nil && !errors.Is(err, context.Canceled) {
			log.Error("sweep the trash", "err", err)
		}
		for _, e := range purged {
			log.Info("purged expired trash", "workspace", e.WorkspaceID, "kind", e.Kind, "id", e.ObjectID)
			if err := db.RecordAudit(ctx, AuditEvent{WorkspaceID: e.WorkspaceID, Actor: "trash sweeper", Action: AuditPurged,
				Target: string(e.Kind) + " " + strconv.FormatInt(e.ObjectID, 10), Detail: "in the trash for more than 30 days: " + e.Name}); err != nil {
				log.Error("write audit log", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
