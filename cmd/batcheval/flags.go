package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Flag errors and help, as a user reads them: the flag package's own say
// `invalid value "abc" for flag -rounds: parse error` (after printing the
// whole help), and its help shows defaults as Go writes them ("2m0s",
// quoted strings). Here an error names the flag with two dashes, quotes
// the value as written and says what to write; help shows each default
// as one would type it.

// enumValue is a flag that takes one of a few words.
type enumValue struct {
	p       *string
	allowed []string
	// accepts, when set, decides instead of an exact match: for words
	// read in any case (WARN, API-KEY), as their setting always has.
	accepts func(string) bool
}

// enumFlag registers a flag taking one of allowed (def first among them
// or not), refused when parsed otherwise with the words to write.
func enumFlag(fs *flag.FlagSet, name, def string, allowed []string, usage string) *string {
	p := new(string)
	*p = def
	fs.Var(&enumValue{p: p, allowed: allowed}, name, usage)
	return p
}

// wordsFlag is enumFlag for a word that accepts reads (in any case, say),
// refused otherwise with the same words: allowed are what help and the
// refusal list.
func wordsFlag(fs *flag.FlagSet, p *string, name, def string, allowed []string, accepts func(string) bool, usage string) {
	*p = def
	fs.Var(&enumValue{p: p, allowed: allowed, accepts: accepts}, name, usage)
}

func (e *enumValue) String() string {
	if e == nil || e.p == nil {
		return ""
	}
	return *e.p
}

func (e *enumValue) Set(v string) error {
	if e.accepts != nil {
		if !e.accepts(v) {
			return errors.New("cannot be used: write " + orList(e.allowed))
		}
		*e.p = v
		return nil
	}
	for _, a := range e.allowed {
		if v == a {
			*e.p = v
			return nil
		}
	}
	return errors.New("cannot be used: write " + orList(e.allowed))
}

// placeholder is how help names the flag's value: its words.
func (e *enumValue) placeholder() string { return strings.Join(e.allowed, "|") }

// orList is "a, b or c".
func orList(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// checkedValue wraps a flag's value while the flags are parsed, so that a
// value the flag cannot take is refused in the words of flagValueError.
type checkedValue struct {
	flag.Value
	name, kind, def string
	err             *error // the first refusal, kept for parse
}

func (v *checkedValue) IsBoolFlag() bool {
	b, ok := v.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func (v *checkedValue) Set(s string) error {
	err := v.Value.Set(s)
	if err != nil {
		err = flagValueError(v.name, s, v.kind, v.def, err)
		if *v.err == nil {
			*v.err = err
		}
	}
	return err
}

// flagValueError says that --name cannot take written: what to write for a
// value of its kind, with its default as an example.
func flagValueError(name, written, kind, def string, err error) error {
	eg := ""
	if def != "" && !zeroDefault(kind, def) {
		eg = ", e.g. " + def + " (the default)"
	}
	want := ""
	switch kind {
	case "int", "uint":
		want = "a whole number" + eg
	case "float":
		want = "a number" + eg
	case "duration":
		want = "a duration with its unit, e.g. 90s, 5m or 1h30m"
		if eg != "" {
			want = "a duration with its unit" + eg
		}
	case "bool":
		want = "true or false"
	}
	if want != "" {
		return fmt.Errorf("--%s=%q cannot be read: write %s", name, written, want)
	}
	msg := err.Error()
	if strings.HasPrefix(msg, "cannot be ") {
		return fmt.Errorf("--%s=%q %s", name, written, msg)
	}
	return fmt.Errorf("--%s=%q: %s", name, written, msg)
}

// flagKind is the kind of a flag's value (int, uint, float, duration,
// string, bool for a switch, enum, or value for one of its own), and the
// placeholder help shows after the flag's name.
func flagKind(f *flag.Flag) (kind, placeholder string) {
	v := f.Value
	if cv, ok := v.(*checkedValue); ok {
		v = cv.Value
	}
	if e, ok := v.(*enumValue); ok {
		return "enum", e.placeholder()
	}
	if b, ok := v.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return "bool", ""
	}
	kind, _ = flag.UnquoteUsage(&flag.Flag{Name: f.Name, Value: v})
	placeholder, _ = flag.UnquoteUsage(&flag.Flag{Name: f.Name, Usage: f.Usage, Value: v})
	switch kind {
	case "int64":
		kind = "int"
	case "uint64":
		kind = "uint"
	}
	return kind, placeholder
}

// zeroDefault reports whether def is its kind's zero value, which help
// leaves out as the flag package does.
func zeroDefault(kind, def string) bool {
	switch kind {
	case "bool":
		return def == "false"
	case "int", "uint", "float":
		return def == "0"
	case "duration":
		return def == "0s"
	}
	return def == ""
}

// shownDefault is a flag's default as one would type it: "2m" rather
// than "2m0s", a word without quotes (quoted only when empty or holding
// spaces, as a shell needs it).
func shownDefault(kind, def string) string {
	if kind == "duration" {
		if d, err := time.ParseDuration(def); err == nil {
			return humanDuration(d)
		}
	}
	if strings.ContainsAny(def, " \t") {
		return strconv.Quote(def)
	}
	return def
}

// humanDuration is d as one would type it: 2m, 1h30m, 90s, 250ms (Go's
// own String writes 2m0s and 1h30m0s).
func humanDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// printFlags writes fs's flags as help shows them: --name VALUE, then the
// usage and the default as one would type it.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		kind, placeholder := flagKind(f)
		_, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if placeholder != "" {
			line += " " + placeholder
		}
		def := f.DefValue
		if cv, ok := f.Value.(*checkedValue); ok {
			def = cv.def
		}
		if !zeroDefault(kind, def) && kind != "bool" {
			usage += " (default " + shownDefault(kind, def) + ")"
		} else if kind == "bool" && def == "true" {
			usage += " (default true)"
		}
		fmt.Fprintf(w, "%s\n    \t%s\n", line, strings.ReplaceAll(usage, "\n", "\n    \t"))
	})
}

// commandUsage is the help of a command without its own text.
func commandUsage(w io.Writer, fs *flag.FlagSet) func() {
	return func() {
		fmt.Fprintf(w, "Usage: batcheval %s [flags]\n\nFlags:\n", fs.Name())
		printFlags(w, fs)
	}
}

var (
	undefinedFlag = regexp.MustCompile(`^flag provided but not defined: -+(.*)$`)
	missingValue  = regexp.MustCompile(`^flag needs an argument: -+(.*)$`)
)

// parseFlags parses args with fs, refusing a value a flag cannot take in
// a user's words (flagValueError) without the flag package's dump of the
// whole help; asked for help (-h, --help), it prints fs.Usage and returns
// flag.ErrHelp.
func parseFlags(fs *flag.FlagSet, args []string) error {
	usage, out := fs.Usage, fs.Output()
	var valueErr error
	fs.VisitAll(func(f *flag.Flag) {
		kind, _ := flagKind(f)
		f.Value = &checkedValue{Value: f.Value, name: f.Name, kind: kind, def: shownDefault(kind, f.DefValue), err: &valueErr}
	})
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.SetOutput(out)
	fs.Usage = usage
	fs.VisitAll(func(f *flag.Flag) {
		if cv, ok := f.Value.(*checkedValue); ok {
			f.Value = cv.Value
		}
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return err
	case valueErr != nil:
		return valueErr
	}
	help := fmt.Sprintf(`"batcheval %s --help" lists its flags`, fs.Name())
	if m := undefinedFlag.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Errorf("batcheval %s has no flag --%s: %s", fs.Name(), m[1], help)
	}
	if m := missingValue.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Errorf("--%s needs a value, as --%s=VALUE or --%s VALUE: %s", m[1], m[1], m[1], help)
	}
	return fmt.Errorf("%w: %s", err, help)
}
