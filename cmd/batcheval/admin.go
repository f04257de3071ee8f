package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/batcheval/batcheval/models"
)

// createUser makes an account: `batcheval admin create-user`. The
// password is read from standard input (one line), or prompted for without
// echo when standard input is a terminal; there is no default password.
// The first account made this way also closes the /setup page. stdin is
// passed in so tests can feed the password.
func createUser(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs, c := newCommand("admin create-user", getenv, stderr)
	email := fs.String("email", "", "the account's email address (its sign-in name)")
	name := fs.String("name", "", "the person's name as shown to others")
	roleName := fs.String("role", "", "owner, editor, reviewer or viewer")
	wsSlug := fs.String("workspace", models.DefaultWorkspaceSlug, "the workspace's slug")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	// Every flag missing at once (it named only --role, the first
	// checked, then the others on the next try).
	var missing []string
	for _, f := range []struct{ name, value string }{{"--email", *email}, {"--name", *name}, {"--role", *roleName}} {
		if strings.TrimSpace(f.value) == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("admin create-user needs %s: e.g. batcheval admin create-user --email ada@example.com --name \"Ada Lovelace\" --role owner", andList(missing))
	}
	role, err := models.ParseRole(*roleName)
	if err != nil {
		return fmt.Errorf("--role: %w", err)
	}
	password, err := readPassword(stdin, stderr)
	if err != nil {
		return err
	}
	log := c.logger(stderr)
	db, ws, err := openWorkspace(ctx, c, log)
	if err != nil {
		return err
	}
	defer db.Close()
	if *wsSlug != models.DefaultWorkspaceSlug {
		if err := db.Gorm.WithContext(ctx).Where("slug = ?", *wsSlug).First(&ws).Error; err != nil {
			return fmt.Errorf("no workspace with the slug %q", *wsSlug)
		}
	}
	u, err := db.CreateUser(ctx, ws.ID, role, models.NewUser{Email: *email, Name: *name, Password: password})
	if err != nil {
		return errors.New(models.ErrorMessage(err))
	}
	if err := db.RecordAudit(ctx, models.AuditEvent{WorkspaceID: ws.ID, Actor: "batcheval admin (command line)",
		Action: models.AuditMemberJoined, Target: u.Email, Detail: "as " + string(role) + " by the admin command"}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "created %s <%s>, %s of workspace %q\n", u.Name, u.Email, role, ws.Name)
	return nil
}

// readPassword reads the password: without echo from a terminal (asked
// twice), else the first line of stdin.
func readPassword(stdin io.Reader, stderr io.Writer) (string, error) {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(stderr, "Password: ")
		a, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(stderr)
		if err != nil {
			return "", err
		}
		fmt.Fprint(stderr, "Again: ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(stderr)
		if err != nil {
			return "", err
		}
		if string(a) != string(b) {
			return "", errors.New("the two passwords differ")
		}
		return string(a), nil
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	pw := strings.TrimRight(line, "\r\n")
	if pw == "" {
		return "", errors.New("no password on standard input: pipe one in, e.g. `printf '%s\\n' \"$PW\" | batcheval admin create-user ...`")
	}
	return pw, models.CheckPasswordStrength(pw)
}
