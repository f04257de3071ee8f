package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/batcheval/batcheval/models"
)

// defaultAccountEvents is how many entries admin account-events lists
// without --limit: a screenful or two of the newest, enough to see what
// happened to an account lately; --limit or --since reach further back.
const defaultAccountEvents = 50

// maxAccountEvents bounds --limit: the log is read into memory and printed
// as one table.
const maxAccountEvents = 10000

// accountEvents prints the accounts' audit log (account_audit_events):
// what was done to accounts that belonged to no workspace, which have no
// workspace audit log to hold it.
func accountEvents(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, c := newCommand("admin account-events", getenv, stderr)
	email := fs.String("email", "", "only the entries of the account with this address (now, or as the entry named it)")
	since := fs.String("since", "", "only entries from this time on: a date (2026-12-01), a time (2026-12-01T09:00:00Z) or an age (36h, 7d)")
	limit := fs.Int("limit", defaultAccountEvents, fmt.Sprintf("at most this many entries, the newest (1 to %d)", maxAccountEvents))
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if *limit < 1 || *limit > maxAccountEvents {
		return fmt.Errorf("--limit %d: give a number from 1 to %d", *limit, maxAccountEvents)
	}
	from, err := parseSince(*since, time.Now())
	if err != nil {
		return err
	}
	db, err := openDB(ctx, c, c.logger(stderr))
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.ListAccountEvents(ctx, models.AccountEventsFilter{Email: *email, Since: from, Limit: *limit})
	if err != nil {
		return errors.New(models.ErrorMessage(err))
	}
	if len(rows) == 0 {
		fmt.Fprintln(stdout, "No entry in the accounts' audit log matches. It holds what was done to accounts in no workspace "+
			"(an operator's reset link, a confirmation, a self-service reset, a change of its own name); an account in workspaces has its entries in each workspace's audit log.")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME (UTC)\tACCOUNT\tACTION\tBY\tTARGET\tDETAIL")
	for _, r := range rows {
		account := r.Email
		if r.UserID == nil || account == "" {
			account = "(account deleted)"
		}
		// Every text here was typed by someone (an address, a name in
		// the actor, a reason): control characters would break the table
		// or move the terminal's cursor.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.CreatedAt.UTC().Format("2006-01-02 15:04:05"), oneLine(account), oneLine(r.Action),
			oneLine(r.Actor), orDash(oneLine(r.Target)), orDash(oneLine(r.Detail)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	more := ""
	if len(rows) == *limit {
		more = fmt.Sprintf(" (the newest %d: --limit or --since for more)", *limit)
	}
	fmt.Fprintf(stdout, "%d %s, newest first%s.\n", len(rows), map[bool]string{true: "entry", false: "entries"}[len(rows) == 1], more)
	return nil
}

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}

// parseSince reads --since: "" (no bound), a date (midnight UTC), an
// RFC 3339 time, or an age before now (a Go duration such as 36h, or a
// number of days such as 7d).
func parseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			return now.AddDate(0, 0, -n), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("--since %q: give a date (2026-12-01), a time (2026-12-01T09:00:00Z) or an age (36h, 7d)", s)
}
