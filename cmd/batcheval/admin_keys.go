package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/batcheval/batcheval/models"
)

const adminUsage = `batcheval admin: operator tasks.

Usage:
  batcheval admin create-user --email ADDRESS --name NAME --role owner|editor|reviewer|viewer [--workspace SLUG]
      make an account; the password is read from standard input (one line),
      or prompted for without echo on a terminal. There is no default password.
  batcheval admin rotate-key --old-key-file OLD --new-key-file NEW [flags]
      re-encrypt every stored judge key from the old secret key to the new
      one, in one transaction (nothing changes if any key cannot be read)
  batcheval admin network list|grant WORKSPACE|revoke WORKSPACE
      which workspaces besides the default one may reach the private-network
      and loopback addresses the server's settings allow (batcheval admin
      network help)
` + adminAccountsUsage

// admin runs an operator subcommand.
// stdin is passed in so tests can feed a password.
func admin(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, adminUsage)
		return errors.New("admin needs a subcommand: one of those listed above, e.g. batcheval admin list-users")
	}
	if cmd, ok := accountCommands[args[0]]; ok {
		return cmd(ctx, args[1:], getenv, stdout, stderr)
	}
	switch args[0] {
	case "create-user":
		return createUser(ctx, args[1:], getenv, stdin, stdout, stderr)
	case "rotate-key":
		return rotateKey(ctx, args[1:], getenv, stdout, stderr)
	case "network":
		return adminNetwork(ctx, args[1:], getenv, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, adminUsage)
		return nil
	}
	fmt.Fprint(stderr, adminUsage)
	return fmt.Errorf("unknown admin command %q", args[0])
}

// rotateKey re-encrypts the stored judge keys under a new secret key.
func rotateKey(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, c := newCommand("admin rotate-key", getenv, stderr)
	oldFile := fs.String("old-key-file", "", "file holding the secret key the judge keys are encrypted with now (base64)")
	newFile := fs.String("new-key-file", "", "file holding the new secret key (base64, e.g. openssl rand -base64 32 > new.key)")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if *oldFile == "" || *newFile == "" {
		fs.Usage()
		return errors.New("--old-key-file and --new-key-file are required")
	}
	old, err := models.ReadSecretKeyFile(*oldFile)
	if err != nil {
		return fmt.Errorf("--old-key-file: %w", err)
	}
	newKey, err := models.ReadSecretKeyFile(*newFile)
	if err != nil {
		return fmt.Errorf("--new-key-file: %w", err)
	}
	if old.ID() == newKey.ID() {
		return errors.New("the old and new secret keys are the same")
	}
	// Opening the database seals any plaintext key with the old key first.
	c.SecretKey, c.SecretKeyFile = "", *oldFile
	log := c.logger(stderr)
	db, err := openDB(ctx, c, log)
	if err != nil {
		return err
	}
	defer db.Close()
	n, err := db.RotateSecretKey(ctx, old, newKey)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "re-encrypted %d stored secret(s) (judge keys and webhook addresses) from secret key %s to %s.\n"+
		"Now give every server and worker the new key (BATCHEVAL_SECRET_KEY_FILE=%s, or its content in BATCHEVAL_SECRET_KEY",
		n, old.ID(), newKey.ID(), *newFile)
	if c.LocalMode() {
		fmt.Fprintf(stdout, ", or copy it over %s", c.localKeyFile())
	}
	fmt.Fprintln(stdout, ") and restart them.")
	return nil
}
