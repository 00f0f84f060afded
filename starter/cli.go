package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// The command line follows the temporal CLI's conventions, on the standard flag package
// (one FlagSet per command): long flags written --name (-name works too), flags before or
// after the positional arguments, "--" ends the flags, -h/--help prints the command's
// usage with every flag, and an argument error is one line plus that usage, exit code 2.

// command is one subcommand: its name, its positional arguments as the usage shows
// them, one line on what it does, and the function that defines its flags and runs it.
type command struct {
	name  string
	args  string
	about string
	run   func(c *cmdline, args []string) error
}

// commandList is every command, in the order the usage lists them.
func commandList() []command {
	return []command{
		{"run", "[PROMPT]", "run an agent to its end and print its reply; without --address, on an embedded server and worker", cmdRun},
		{"start", "(PROMPT | --scenario FILE)", "start a run on a server and print its workflow ID", cmdStart},
		{"send", "ID TEXT", "send a user message (send_message) and print the reply", cmdSend},
		{"state", "ID", "show a run's agents, todo checklist and plan (--json: the state query)", cmdState},
		{"plan", "ID", "show a run's plan checklist (and whether it awaits you)", cmdPlan},
		{"watch", "ID", "follow a run's agents and progress until it ends", cmdWatch},
		{"history", "ID", "export a run's history as JSON (for replay tests)", cmdHistory},
		{"approve", "ID", "approve the plan that waits for approval (any agent of the tree)", cmdApprove},
		{"reject", "ID --feedback TEXT", "reject the plan that waits for approval, saying why", cmdReject},
		{"resume", "ID [TEXT]", "resume a paused agent of the run's tree (TEXT: what changed)", cmdResume},
		{"continuation", "ID on|off", "switch todo continuation on or off (set_continuation)", cmdContinuation},
		{"end", "ID", "end a session after its current turn (end_session)", cmdEnd},
		{"retry", "ID", "run again a turn that failed on the model (retry_turn)", cmdRetry},
		{"compact", "ID", "summarise a session's older messages now (compact_context)", cmdCompact},
		{"chat", "[--id ID] [--model REF]", "chat with a session in the terminal (a new one, or --id to come back to one)", cmdChat},
	}
}

func lookup(name string) (command, bool) {
	for _, c := range commandList() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// usage is the text `starter help` prints.
func usage() string {
	var b strings.Builder
	b.WriteString("usage: starter COMMAND [flags] [args]\n\nCommands:\n")
	cmds := commandList()
	width := 0
	for _, c := range cmds {
		width = max(width, len(c.name)+1+len(c.args))
	}
	for _, c := range cmds {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, c.name+" "+c.args, c.about)
	}
	b.WriteString(`
Every command takes --address HOST:PORT (or TEMPORAL_ADDRESS), --namespace NS (or
TEMPORAL_NAMESPACE) and --task-queue QUEUE. Flags may come before or after the arguments;
"--" ends them (starter send ID -- -n text). "starter COMMAND --help" lists a command's flags.
`)
	return b.String()
}

// cmdline is one command's flags while it runs.
type cmdline struct {
	cmd  command
	fs   *flag.FlagSet
	conn conn
	pos  []string // the positional arguments, once parsed
}

func newCmdline(cmd command) *cmdline {
	c := &cmdline{cmd: cmd, fs: flag.NewFlagSet(cmd.name, flag.ContinueOnError)}
	c.fs.SetOutput(io.Discard) // errors and help are printed by main, once
	c.conn.flags(c.fs)
	return c
}

// parse parses the flags wherever they stand among the positional arguments ("state ID
// --json" and "state --json ID" alike) and returns the positional ones. Everything after
// a "--" that ends the flags is positional, even when it starts with a dash.
func (c *cmdline) parse(args []string) ([]string, error) {
	var pos []string
	for len(args) > 0 {
		if err := c.fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, &exitError{code: 0, help: true}
			}
			return nil, c.usageErr("%s", flagError(err))
		}
		rest := c.fs.Args()
		if c.endedFlags(args[:len(args)-len(rest)]) {
			pos = append(pos, rest...)
			break
		}
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	c.pos = pos
	return pos, nil
}

// endedFlags reports whether the flag package, having parsed consumed (flags and their
// values only), stopped at a "--" that ends the flags rather than one given as a flag's value.
func (c *cmdline) endedFlags(consumed []string) bool {
	for i := 0; i < len(consumed); i++ {
		a := consumed[i]
		if a == "--" {
			return i == len(consumed)-1
		}
		if strings.Contains(a, "=") {
			continue
		}
		f := c.fs.Lookup(strings.TrimLeft(a, "-"))
		if f == nil {
			continue // cannot happen: Parse refuses unknown flags
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		i++ // the flag's value
	}
	return false
}

// usageErr is an argument error: one line, then the command's usage, exit code 2.
func (c *cmdline) usageErr(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...), usage: true}
}

// usage is the command's help: its synopsis, what it does and every flag.
func (c *cmdline) usage() string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: starter %s %s [flags]\n\n%s.\n\nFlags:\n", c.cmd.name, c.cmd.args, capitalize(c.cmd.about))
	type row struct{ name, help string }
	var rows []row
	width := 0
	c.fs.VisitAll(func(f *flag.Flag) {
		arg, help := flag.UnquoteUsage(f)
		name := "--" + f.Name
		if arg != "" {
			name += " " + arg
		}
		if d := f.DefValue; d != "" && d != "false" && d != "0" && !strings.Contains(help, "default") {
			help += fmt.Sprintf(" (default %s)", d)
		}
		rows = append(rows, row{name, help})
		width = max(width, len(name))
	})
	rows = append(rows, row{"-h, --help", "show this help"})
	for _, r := range rows {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, r.name, r.help)
	}
	return b.String()
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// flagErrorRE matches the flag package's errors that name a flag with one dash.
var flagErrorRE = regexp.MustCompile(`^(flag provided but not defined: |flag needs an argument: |invalid (?:boolean )?value ".*" for (?:flag )?)-([^-\s:][^\s:]*)`)

// flagError writes the flag the way this CLI documents it, with two dashes.
func flagError(err error) string {
	return flagErrorRE.ReplaceAllString(err.Error(), "${1}--${2}")
}
