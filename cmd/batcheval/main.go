// Command batcheval is the whole product in one binary:
//
//	batcheval serve    the dashboard, with embedded workers (default)
//	batcheval worker   workers only, sharing the database with a server
//	batcheval migrate  apply the database migrations and exit
//	batcheval run      judge a file from the command line, headless
//	batcheval admin    operator tasks (create-user, rotate-key, list-users, reset-link, release-address, account-events)
//	batcheval resume   re-send the batches of a run that have no answer
//	batcheval export   write a run's results as CSV or JSON, as the dashboard's export
//
// With no settings it keeps everything in a SQLite file under ./data.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signalContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "batcheval:", err)
		os.Exit(exitStatus(withStopSignal(ctx, err)))
	}
}

// stopSignal is the cause of a command's context ended by a signal
// (signalContext): which one, for the exit status.
type stopSignal struct{ sig syscall.Signal }

func (s *stopSignal) Error() string { return s.sig.String() + " received" }

// Is makes a stop by a signal a cancellation, as signal.NotifyContext's is.
func (s *stopSignal) Is(target error) bool { return target == context.Canceled }

// exitCode is the conventional status of a process a signal stopped:
// 128 plus its number (130 for SIGINT, Ctrl-C; 143 for SIGTERM).
func (s *stopSignal) exitCode() int { return 128 + int(s.sig) }

// signalContext is signal.NotifyContext whose cause (context.Cause) is a
// *stopSignal naming the signal received, so that the command's error can
// carry it to the exit status.
func signalContext(parent context.Context, sigs ...os.Signal) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, sigs...)
	go func() {
		select {
		case s := <-ch:
			sig, _ := s.(syscall.Signal)
			cancel(&stopSignal{sig: sig})
		case <-ctx.Done():
		}
	}()
	return ctx, func() { signal.Stop(ch); cancel(nil) }
}

// withStopSignal is err carrying the signal that stopped ctx, when one
// did and err does not already carry it: a command interrupted before it
// could say how far it got (while reading its data, say) exits with the
// signal's status too.
func withStopSignal(ctx context.Context, err error) error {
	var s *stopSignal
	if errors.As(err, &s) || !errors.As(context.Cause(ctx), &s) {
		return err
	}
	return fmt.Errorf("%w (%w)", err, s)
}

const usage = `batcheval: judge text with language models the way careful humans do.

Usage:
  batcheval serve   [flags]   start the dashboard (and its workers)
  batcheval worker  [flags]   run workers only, against the same database
  batcheval migrate [flags]   apply database migrations and exit
  batcheval run     [flags]   evaluate a data file headless (see: batcheval run --help)
  batcheval admin create-user --email --name --role   make an account (password on stdin)
  batcheval admin rotate-key  re-encrypt stored judge keys under a new secret key
  batcheval admin list-users | reset-link | release-address   list accounts, reset any, free a squatted address
  batcheval admin account-events [--email --since --limit]   the audit log of accounts in no workspace
  batcheval admin network list | grant WORKSPACE | revoke WORKSPACE   which workspaces may reach private networks
  batcheval resume  [flags] RUN_ID   re-send only the batches of a run that have no answer
  batcheval export  --format csv|json [--out FILE] RUN_ID   write a run's results, as the dashboard's Export buttons

Run "batcheval help <command>" (or "batcheval <command> --help") for the flags of a command.
`

// isCommand reports whether word is one of the commands runCommand runs.
func isCommand(word string) bool {
	switch word {
	case "serve", "worker", "migrate", "run", "admin", "resume", "export", "help":
		return true
	}
	return false
}

// isHelpFlag says whether arg asks for a command's help, in any of the
// spellings the flag package takes.
func isHelpFlag(arg string) bool {
	switch arg {
	case "-h", "--h", "-help", "--help":
		return true
	}
	return false
}

// run is main without the process: arguments, environment and output are
// passed in so tests can drive it.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && isCommand(args[0]) && slices.ContainsFunc(args[1:], isHelpFlag) {
		// Help asked for (`batcheval run --help`) goes to stdout, as
		// `batcheval help run`'s does, so it can be piped to a pager; the
		// flag package wrote it to the error stream.
		stderr = stdout
	}
	err := runCommand(ctx, args, getenv, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil // the help was printed, as asked: not an error
	}
	return err
}

func runCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	} else if i := slices.IndexFunc(args, isCommand); i > 0 {
		// Flags before the command (`batcheval --db x admin list-users`)
		// made it `serve` with a stray word, which started the dashboard.
		return fmt.Errorf("the command goes first: batcheval %s ..., with %s after it (flags before a command are read as serve's, and serve started)", args[i], strings.Join(args[:i], " "))
	}
	switch cmd {
	case "serve":
		return serve(ctx, args, getenv, stdout, stderr, true)
	case "worker":
		return serve(ctx, args, getenv, stdout, stderr, false)
	case "migrate":
		return migrate(ctx, args, getenv, stdout, stderr)
	case "run":
		return headless(ctx, args, getenv, stdout, stderr)
	case "admin":
		return admin(ctx, args, getenv, os.Stdin, stdout, stderr)
	case "resume":
		return resume(ctx, args, getenv, stdout, stderr)
	case "export":
		return exportCmd(ctx, args, getenv, stdout, stderr)
	case "help", "-h", "--help":
		if cmd == "help" && len(args) > 0 && args[0] != "help" {
			// `batcheval help run` is `batcheval run --help`, on stdout
			// (it printed the list of commands, whatever was asked).
			return helpFor(ctx, args, getenv, stdout)
		}
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("unknown command %q", cmd)
	}
}

// helpFor prints the help of the command path (run, admin, admin
// network, admin create-user...) to stdout, as its --help does; an unknown
// command is refused with the list of commands, as when it is run.
func helpFor(ctx context.Context, path []string, getenv func(string) string, stdout io.Writer) error {
	switch path[0] {
	case "serve", "worker", "migrate", "run", "admin", "resume", "export":
	default:
		fmt.Fprint(stdout, usage)
		return fmt.Errorf("no command %q to help with: the commands are listed above", path[0])
	}
	args := append(append([]string(nil), path...), "--help")
	return runCommand(ctx, args, getenv, stdout, stdout)
}
