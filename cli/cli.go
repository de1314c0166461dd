// Package cli is the knobs command's client side: `knobs run`, `knobs
// presets`, `knobs token` talk to a Knobs server through its REST API
// (KNOBS_URL, KNOBS_TOKEN); `knobs backup` copies the database of a
// running server, `knobs restore` puts a backup in place of a stopped
// one's, and `knobs health` asks a server whether it is up. Main is the
// whole command, testable without os.Exit.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Exit statuses.
const (
	exitOK        = 0
	exitFailed    = 1   // the server refused, or the run ended in an error
	exitUsage     = 2   // bad flags or arguments: nothing was sent
	exitInterrupt = 130 // Ctrl-C, as a shell reports it
)

// command is one subcommand of knobs.
type command struct {
	name, summary string
	run           func(e *env, args []string) error
}

// commands lists the client commands, in the order `knobs -h` shows them.
var commands = []command{
	{"run", "run a preset or a quick prompt, streaming the answer", runCommand},
	{"presets", "list, pull, push or render presets (files in the export format)", presetsCommand},
	{"token", "create, list or revoke personal API tokens", tokenCommand},
	{"eval", "run an experiment from a file and fail when it misses a threshold or regresses: the CI gate", evalCommand},
	{"backup", "write a consistent copy of the database (KNOBS_DB) while the server runs", backupCommand},
	{"restore", "check a backup and put it in place of the database of a stopped server", restoreCommand},
	{"health", "ask a server whether it is up (GET /healthz): exit 0 or 1, for HEALTHCHECK", healthCommand},
}

// env is what a command runs with: Main's arguments.
type env struct {
	ctx            context.Context
	getenv         func(string) string
	stdin          io.Reader
	stdout, stderr io.Writer
}

// IsCommand reports whether args (without the program name) ask for a
// client command rather than the server.
func IsCommand(args []string) bool {
	if len(args) == 0 {
		return false
	}
	for _, c := range commands {
		if args[0] == c.name {
			return true
		}
	}
	return false
}

// Usage lists the commands, for `knobs -h`.
func Usage(w io.Writer) {
	fmt.Fprintln(w, "Commands:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  %s\t%s\n", "serve", "start the server (the default)")
	for _, c := range commands {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.summary)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nThe client commands talk to the server at KNOBS_URL (default "+defaultURL+")")
	fmt.Fprintln(w, "with the personal API token in KNOBS_TOKEN. `knobs COMMAND -h` lists a command's flags.")
}

// Main runs the client command args[0] with the rest of args and returns
// the exit status: 0 done, 1 failed (a refusal, an error run), 2 bad
// usage, 130 interrupted (ctx cancelled, as by Ctrl-C).
func Main(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{ctx: ctx, getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		Usage(stderr)
		return exitUsage
	}
	for _, c := range commands {
		if c.name == args[0] {
			return e.exit("knobs "+c.name, c.run(e, args[1:]))
		}
	}
	fmt.Fprintf(stderr, "knobs: unknown command %q\n", args[0])
	Usage(stderr)
	return exitUsage
}

// exit reports err on stderr, prefixed with what, and returns the status
// it calls for.
func (e *env) exit(what string, err error) int {
	var usage *usageError
	var failed *runFailed
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &usage):
		fmt.Fprintf(e.stderr, "%s: %s\n", what, usage.msg)
		fmt.Fprintf(e.stderr, "(`%s -h` lists its flags)\n", usage.cmd)
		return exitUsage
	case errors.Is(err, errInterrupted), errors.Is(err, context.Canceled):
		return exitInterrupt
	case errors.As(err, &failed):
		fmt.Fprintf(e.stderr, "%s: %s\n", what, failed.msg)
		return exitFailed
	}
	fmt.Fprintf(e.stderr, "%s: %s\n", what, err)
	return exitFailed
}

// usageError is bad flags or arguments: nothing was sent.
type usageError struct {
	cmd, msg string
}

func (u *usageError) Error() string { return u.msg }

func usagef(cmd, format string, args ...any) error {
	return &usageError{cmd: cmd, msg: fmt.Sprintf(format, args...)}
}

// runFailed is a run that ended other than done: its message is the
// provider's or Knobs' account of why.
type runFailed struct{ msg string }

func (r *runFailed) Error() string { return r.msg }

// errInterrupted is returned once an interrupted command has cleaned up
// (a run cancelled on the server) and said so.
var errInterrupted = errors.New("interrupted")

// flagSet is a command's flags; usage is its synopsis for -h.
func flagSet(name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: %s\n", usage)
		if hasFlags(fs) {
			fmt.Fprintln(w, "\nFlags:")
			fs.PrintDefaults()
		}
	}
	return fs
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// parse parses args with fs, flags and arguments in any order (so that
// `push file.json --base-version 3` works), and returns the arguments.
// -h prints fs's usage on stdout and returns flag.ErrHelp; a bad flag is
// a usageError.
func (e *env) parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for range len(args) + 1 { // each round takes at least one argument
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(e.stdout)
				fs.Usage()
				return nil, flag.ErrHelp
			}
			return nil, usagef(fs.Name(), "%s", err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			positional = append(positional, rest...)
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	return positional, nil
}

// listFlag is a flag given any number of times.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// pairs splits each "key=value" of l; a missing "=" or key is an error
// naming the flag.
func pairs(cmd, flagName string, l listFlag) (map[string]string, error) {
	if len(l) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(l))
	for _, kv := range l {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usagef(cmd, "--%s %q: want name=value", flagName, kv)
		}
		out[k] = v
	}
	return out, nil
}
