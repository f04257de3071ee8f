package main

import (
	"bytes"
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// helpFlag is a flag as help texts write it: --name, before a space, "=",
// a bracket, a comma or the line's end.
var helpFlag = regexp.MustCompile(`(?:^|[\s\[(|,])--([a-z][a-z0-9-]*)`)

// commandLine is a line of a help text that shows a command: "batcheval"
// followed by its words (admin create-user), then its flags.
var commandLine = regexp.MustCompile(`batcheval((?: [a-z][a-z-]*)+)(.*)$`)

// helpOf is what `batcheval help PATH...` prints (stdout), and its error.
func helpOf(t *testing.T, path ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), append([]string{"help"}, path...), func(string) string { return "" }, &out, &errOut)
	if errOut.Len() > 0 {
		t.Errorf("batcheval help %s wrote to stderr: %q", strings.Join(path, " "), errOut.String())
	}
	return out.String(), err
}

// accepts reports whether the command path takes --flag: a flag it does
// not know is refused as such, whatever the value; one it knows is parsed
// (a value it cannot take is refused otherwise) and --help then stops the
// command before it opens anything.
func accepts(path []string, flag string) (bool, string) {
	var out, errOut bytes.Buffer
	args := append(append([]string(nil), path...), "--"+flag+"=1", "--help")
	err := run(context.Background(), args, func(string) string { return "" }, &out, &errOut)
	if err != nil && strings.Contains(err.Error(), "has no flag --"+flag) {
		return false, err.Error()
	}
	return true, ""
}

// TestHelpMatchesTheFlagsAccepted: `batcheval help CMD` prints CMD's help
// (it printed the list of commands whatever CMD was, on every command),
// and every flag any help text names, in its flag list or in its prose and
// usage lines, is one the command it names takes; every flag an admin
// subcommand takes is named on its line of `batcheval help admin`
// (written by hand, beside the generated lists). An unknown command is
// refused. A flag added, renamed or removed without its help fails here.
func TestHelpMatchesTheFlagsAccepted(t *testing.T) {
	top, err := helpOf(t)
	if err != nil || !strings.Contains(top, "Usage:") {
		t.Fatalf("batcheval help: %v\n%s", err, top)
	}
	commands := [][]string{
		{"serve"}, {"worker"}, {"migrate"}, {"run"}, {"resume"}, {"export"}, {"admin"},
		{"admin", "create-user"}, {"admin", "rotate-key"}, {"admin", "list-users"}, {"admin", "reset-link"},
		{"admin", "release-address"}, {"admin", "account-events"}, {"admin", "network"},
	}
	helps := map[string]string{"": top}
	for _, path := range commands {
		name := strings.Join(path, " ")
		h, err := helpOf(t, path...)
		if err != nil {
			t.Errorf("batcheval help %s: %v", name, err)
			continue
		}
		if h == top || !strings.Contains(h, "batcheval "+name) {
			t.Errorf("batcheval help %s does not print that command's help:\n%.400s", name, h)
		}
		helps[name] = h
	}
	// Every command the list of commands shows has help of its own.
	for _, line := range strings.Split(top, "\n") {
		if m := commandLine.FindStringSubmatch(line); m != nil && strings.HasPrefix(strings.TrimSpace(line), "batcheval ") {
			words := strings.Fields(m[1])
			if _, ok := helps[strings.Join(words[:min(len(words), 2)], " ")]; !ok {
				if _, ok := helps[words[0]]; !ok {
					t.Errorf("the list of commands shows %q, which this test does not know: add it to commands", strings.TrimSpace(line))
				}
			}
		}
	}

	// Every flag named is taken by the command it is named for: on a line
	// showing a command, that command; elsewhere, the command helped.
	for name, h := range helps {
		for _, line := range strings.Split(h, "\n") {
			path := strings.Fields(name)
			rest := line
			if m := commandLine.FindStringSubmatch(line); m != nil {
				path = knownPath(strings.Fields(m[1]), helps)
				rest = m[2]
			}
			if len(path) == 0 || (len(path) == 1 && path[0] == "admin") {
				continue // the admin list names its subcommands' flags on their own lines
			}
			for _, f := range helpFlag.FindAllStringSubmatch(rest, -1) {
				if f[1] == "help" {
					continue
				}
				if ok, why := accepts(path, f[1]); !ok {
					t.Errorf("help of %q names --%s, which batcheval %s refuses (%s); the line: %q", name, f[1], strings.Join(path, " "), why, strings.TrimSpace(line))
				}
			}
		}
	}

	// The reverse for the admin list, written by hand: each subcommand's
	// own flags (not the storage and logging flags every command takes,
	// which are migrate's) are on its line.
	common := flagsListed(helps["migrate"])
	for _, path := range commands {
		if len(path) != 2 || path[1] == "network" {
			continue
		}
		own := slices.DeleteFunc(flagsListed(helps[strings.Join(path, " ")]), func(f string) bool { return slices.Contains(common, f) })
		var line string
		for _, l := range strings.Split(helps["admin"], "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "batcheval admin "+path[1]+" ") || strings.TrimSpace(l) == "batcheval admin "+path[1] {
				line = l
			}
		}
		if line == "" {
			t.Errorf("batcheval help admin has no line for %s", path[1])
			continue
		}
		for _, f := range own {
			if !strings.Contains(line, "--"+f) {
				t.Errorf("batcheval admin %s takes --%s, which its line of batcheval help admin does not name: %q", path[1], f, strings.TrimSpace(line))
			}
		}
	}

	// An unknown command is refused, naming it.
	if _, err := helpOf(t, "frobnicate"); err == nil || !strings.Contains(err.Error(), `"frobnicate"`) {
		t.Errorf("batcheval help frobnicate: %v, want it refused by name", err)
	}
}

// knownPath is the longest start of words that is a command with help of
// its own (admin create-user, admin, run).
func knownPath(words []string, helps map[string]string) []string {
	for n := len(words); n > 0; n-- {
		if _, ok := helps[strings.Join(words[:n], " ")]; ok && strings.Join(words[:n], " ") != "" {
			return words[:n]
		}
	}
	return nil
}

// flagsListed are the flags of a generated flag list ("  --name TYPE").
func flagsListed(help string) []string {
	var out []string
	for _, line := range strings.Split(help, "\n") {
		if strings.HasPrefix(line, "  --") {
			out = append(out, strings.TrimPrefix(strings.Fields(line)[0], "--"))
		}
	}
	return out
}

// TestCommandHelpFlagPrintsToStdout: `batcheval CMD --help` prints the
// same help as `batcheval help CMD`, on stdout, so it can be piped to a
// pager; it went to stderr (cli51 found it), and `| less` showed nothing.
func TestCommandHelpFlagPrintsToStdout(t *testing.T) {
	for _, path := range [][]string{{"serve"}, {"worker"}, {"migrate"}, {"run"}, {"resume"}, {"export"}, {"admin", "create-user"}} {
		for _, flag := range []string{"--help", "-h"} {
			t.Run(strings.Join(append(slices.Clone(path), flag), " "), func(t *testing.T) {
				var out, errOut bytes.Buffer
				err := run(context.Background(), append(slices.Clone(path), flag), func(string) string { return "" }, &out, &errOut)
				if err != nil {
					t.Fatalf("batcheval %s %s: %v", strings.Join(path, " "), flag, err)
				}
				if errOut.Len() > 0 {
					t.Errorf("the help went to stderr: %q", errOut.String())
				}
				want, _ := helpOf(t, path...)
				if out.String() != want || !strings.Contains(want, "--") {
					t.Errorf("stdout:\n%s\nwant what `batcheval help %s` prints:\n%s", out.String(), strings.Join(path, " "), want)
				}
			})
		}
	}
	// A refusal still goes to stderr.
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"run", "--no-such-flag"}, func(string) string { return "" }, &out, &errOut); err == nil || out.Len() > 0 {
		t.Errorf("an unknown flag: err %v, stdout %q", err, out.String())
	}
}
