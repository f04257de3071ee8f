package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/user"
	"strings"
	"text/tabwriter"

	"github.com/batcheval/batcheval/models"
)

const adminNetworkUsage = `batcheval admin network: which workspaces may reach this server's private network.

The private-network and loopback addresses the settings allow
(BATCHEVAL_JUDGE_ALLOW_PRIVATE, BATCHEVAL_JUDGE_ALLOW_LOOPBACK and local
mode, BATCHEVAL_WEBHOOK_ALLOW_PRIVATE, BATCHEVAL_WEBHOOK_ALLOW_LOOPBACK) serve
the default workspace, and the other workspaces only once granted here:
anyone signed in can make a workspace of their own.

Usage:
  batcheval admin network list
      every workspace (slug, id, name) and whether it may
  batcheval admin network grant WORKSPACE
      let the workspace (slug or id) reach them: its judges, Test
      connection and webhooks
  batcheval admin network revoke WORKSPACE
      take it back: its next connection there is refused, a run under way
      stops at its next call with a message saying why
Each grant and revocation is in the workspace's audit log.
`

// adminNetwork runs `batcheval admin network ...`.
func adminNetwork(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, adminNetworkUsage)
		return errors.New("admin network needs list, grant or revoke")
	}
	verb := args[0]
	switch verb {
	case "help", "-h", "--help":
		fmt.Fprint(stdout, adminNetworkUsage)
		return nil
	case "list", "grant", "revoke":
	default:
		fmt.Fprint(stderr, adminNetworkUsage)
		return fmt.Errorf("unknown admin network command %q: write list, grant or revoke", verb)
	}
	fs, c := newCommand("admin network "+verb, getenv, stderr)
	if err := c.parse(fs, args[1:]); err != nil {
		return err
	}
	rest := fs.Args()
	if later := flagsAmong(rest); len(later) > 0 {
		// The flag package stops at the first word: these were not read.
		return fmt.Errorf("put the flags before the workspace: batcheval admin network %s [flags] WORKSPACE (%s came after it and was not read)", verb, strings.Join(later, " "))
	}
	switch {
	case verb == "list" && len(rest) != 0:
		return fmt.Errorf("admin network list takes no workspace (it lists them all), got %q", rest)
	case verb != "list" && len(rest) != 1:
		return fmt.Errorf("admin network %s needs one workspace, by slug or id (batcheval admin network list shows them)", verb)
	}
	db, _, err := openWorkspace(ctx, c, c.logger(stderr))
	if err != nil {
		return err
	}
	defer db.Close()
	if verb == "list" {
		return listNetworkGrants(ctx, db, stdout)
	}
	ws, changed, err := db.SetNetworkGrant(ctx, rest[0], verb == "grant", operatorName())
	if err != nil {
		return errors.New(models.ErrorMessage(err))
	}
	switch {
	case verb == "grant" && changed:
		fmt.Fprintf(stdout, "granted: workspace %q (%s) may now reach the private-network and loopback addresses this server's settings allow\n", ws.Slug, oneLine(ws.Name))
	case verb == "grant":
		fmt.Fprintf(stdout, "workspace %q (%s) already had the grant: nothing changed\n", ws.Slug, oneLine(ws.Name))
	case changed:
		fmt.Fprintf(stdout, "revoked: workspace %q (%s) reaches public addresses only; its runs stop at their next call to a private or loopback judge\n", ws.Slug, oneLine(ws.Name))
	default:
		fmt.Fprintf(stdout, "workspace %q (%s) had no grant: nothing changed\n", ws.Slug, oneLine(ws.Name))
	}
	return nil
}

func listNetworkGrants(ctx context.Context, db *models.DB, stdout io.Writer) error {
	rows, err := db.ListNetworkGrants(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SLUG\tID\tPRIVATE NETWORK\tNAME")
	for _, r := range rows {
		state := "no"
		switch {
		case r.Workspace.Slug == models.DefaultWorkspaceSlug:
			state = "yes (default workspace)"
		case r.Grant.WorkspaceID != 0:
			state = fmt.Sprintf("granted %s by %s", r.Grant.GrantedAt.UTC().Format("2006-01-02 15:04 UTC"), r.Grant.GrantedBy)
		}
		// Names are typed by users: %q keeps a tab or newline in one from
		// breaking the table.
		fmt.Fprintf(tw, "%s\t%d\t%s\t%q\n", r.Workspace.Slug, r.Workspace.ID, state, r.Workspace.Name)
	}
	return tw.Flush()
}

// operatorName is who the audit log says granted or revoked: the command
// line, and the system account that ran it when known.
func operatorName() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return "operator " + u.Username + " (batcheval admin network)"
	}
	return "operator (batcheval admin network)"
}
