package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The command line follows the temporal CLI's conventions, on the library that CLI is built
// with (spf13/cobra and its pflag flags): long flags written --name (-name works too),
// short ones -w ID and -o json, flags before or after the positional arguments, "--" ends
// the flags, -h/--help prints the command's usage with every flag, and an argument error is
// one line plus that usage, exit code 2. `starter --version` prints the versions and
// `starter completion SHELL` a completion script.
//
// Adding a command is one entry in commandList and one function of the shape of cmdState:
// it defines the command's flags on c.fs and returns the action that runs with the
// positional arguments.

// command is one subcommand: its name, its positional arguments as the usage shows
// them, one line on what it does, and the function that defines its flags and returns
// what runs it.
type command struct {
	name  string
	args  string
	about string
	setup func(c *cmdline) action
	// complete offers the positional arguments a shell may complete (continuation's on
	// and off); nil offers none, not even file names.
	complete func(c *cmdline, pos []string) []string
}

// action runs a command once its flags are parsed, with its positional arguments.
type action func(pos []string) error

// commandList is every command, in the order the usage lists them.
func commandList() []command {
	return []command{
		{name: "run", args: "[PROMPT]", about: "run an agent to its end and print its reply; without --address, on an embedded server and worker", setup: cmdRun},
		{name: "start", args: "(PROMPT | --scenario FILE)", about: "start a run on a server and print its workflow ID", setup: cmdStart},
		{name: "send", args: "ID TEXT", about: "send a user message (send_message) and print the reply", setup: cmdSend},
		{name: "state", args: "ID", about: "show a run's agents, todo checklist and plan (--json: the state query)", setup: cmdState},
		{name: "plan", args: "ID", about: "show a run's plan checklist (and whether it awaits you)", setup: cmdPlan},
		{name: "watch", args: "ID", about: "follow a run's agents and progress until it ends", setup: cmdWatch},
		{name: "history", args: "ID", about: "export a run's history as JSON (for replay tests)", setup: cmdHistory},
		{name: "approve", args: "ID [--call CALL_ID | -y]", about: "show the tool calls that wait for approval, whole, and approve the one --call names; with none, approve the plan that waits (any agent of the tree)", setup: cmdApprove},
		{name: "reject", args: "ID --feedback TEXT [--call CALL_ID | -y]", about: "reject the tool call --call names, or the plan that waits, saying why", setup: cmdReject},
		{name: "resume", args: "ID [TEXT]", about: "resume a paused agent of the run's tree (TEXT: what changed)", setup: cmdResume},
		{name: "continuation", args: "ID on|off", about: "switch todo continuation on or off (set_continuation)", setup: cmdContinuation, complete: completeOnOff},
		{name: "end", args: "ID", about: "end a session after its current turn (end_session)", setup: cmdEnd},
		{name: "retry", args: "ID", about: "run again a turn that failed on the model (retry_turn)", setup: cmdRetry},
		{name: "stop", args: "ID", about: "stop the running turn, keeping what it did (interrupt)", setup: cmdStop},
		{name: "rewind", args: "ID --to-turn N", about: "take the session back to just before its turn N (a reset: later turns stay in the old run's history)", setup: cmdRewind},
		{name: "compact", args: "ID", about: "summarise a session's older messages now (compact_context)", setup: cmdCompact},
		{name: "chat", args: "[--id ID] [--model REF]", about: "chat with a session in the terminal (a new one, or --id to come back to one)", setup: cmdChat},
	}
}

// usage is the text `starter help` prints.
func usage() string {
	var b strings.Builder
	b.WriteString("usage: starter COMMAND [flags] [args]\n\nCommands:\n")
	cmds := commandList()
	width := len("completion SHELL")
	for _, c := range cmds {
		width = max(width, len(c.name)+1+len(c.args))
	}
	for _, c := range cmds {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, c.name+" "+c.args, c.about)
	}
	fmt.Fprintf(&b, "  %-*s  %s\n", width, "completion SHELL", "print the completion script of bash, zsh, fish or powershell")
	b.WriteString(`
Every command takes --address HOST:PORT (or TEMPORAL_ADDRESS), --namespace NS (or
TEMPORAL_NAMESPACE) and --task-queue QUEUE; the commands that address a run take its ID
as the first argument or as -w/--workflow-id ID, and -o json is --json. Flags may come
before or after the arguments; "--" ends them (starter send ID -- -n text).
"starter COMMAND --help" lists a command's flags; "starter --version" prints the versions.
`)
	return b.String()
}

// cmdline is one command's flags while it runs.
type cmdline struct {
	cmd  command
	fs   *pflag.FlagSet
	conn conn
	// workflowID is -w/--workflow-id: the run a command addresses, or the ID of the run
	// it starts (--id).
	workflowID string
	pos        []string // the positional arguments, once parsed
	id         string   // the run's workflow ID, once the arguments are read
}

// cli is the command tree of one invocation, and each command's cmdline (the tests read
// what a command parsed there).
type cli struct {
	root  *cobra.Command
	lines map[string]*cmdline
}

func newCLI(stdout, stderr io.Writer) *cli {
	root := &cobra.Command{
		Use:     "starter",
		Version: versionText(),
		// The errors and usages are printed by runCLI, once, as this CLI's conventions say.
		SilenceErrors: true,
		SilenceUsage:  true,
		// An unknown command reaches RunE, which names it (cobra's own message spans lines).
		Args:               cobra.ArbitraryArgs,
		FParseErrWhitelist: cobra.FParseErrWhitelist{UnknownFlags: true},
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &exitError{code: 2, usage: true}
			}
			return &exitError{code: 2, err: fmt.Errorf("unknown command %q", args[0]), usage: true}
		},
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetVersionTemplate("{{.Version}}")
	root.Flags().BoolP("version", "v", false, "print the starter's, the Temporal SDK's and the dev server's versions")
	root.Flags().BoolP("help", "h", false, "show this help")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitError{code: 2, err: err, usage: true}
	})
	x := &cli{root: root, lines: map[string]*cmdline{}}
	cobraHelp := root.HelpFunc()
	root.SetHelpFunc(func(cmd *cobra.Command, args []string) {
		if text, ok := x.usageOf(cmd); ok {
			fmt.Fprint(cmd.OutOrStdout(), text)
			return
		}
		cobraHelp(cmd, args) // the completion command's
	})
	for _, spec := range commandList() {
		root.AddCommand(x.add(spec))
	}
	return x
}

// add makes spec a cobra command: its flags defined, its action run with the positional
// arguments, its own errors given exit code 1 unless they carry another.
func (x *cli) add(spec command) *cobra.Command {
	c := &cmdline{cmd: spec}
	cc := &cobra.Command{
		Use:   spec.name + " " + spec.args,
		Short: spec.about,
		Args:  cobra.ArbitraryArgs,
		ValidArgsFunction: func(_ *cobra.Command, pos []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if spec.complete == nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return spec.complete(c, pos), cobra.ShellCompDirectiveNoFileComp
		},
	}
	c.fs = cc.Flags()
	c.fs.BoolP("help", "h", false, "show this help")
	c.conn.flags(c.fs)
	run := spec.setup(c)
	completeFlags(cc)
	cc.RunE = func(_ *cobra.Command, pos []string) error {
		c.pos = pos
		err := run(pos)
		c.conn.finish() // the command's last spans, when it traced
		var ee *exitError
		if err != nil && !errors.As(err, &ee) {
			err = &exitError{code: 1, err: err}
		}
		return err
	}
	x.lines[spec.name] = c
	return cc
}

// usageOf is the help text of one of this CLI's commands (or the root's); ok is false for
// cobra's own (completion).
func (x *cli) usageOf(cmd *cobra.Command) (string, bool) {
	if cmd == x.root {
		return usage(), true
	}
	if c, ok := x.lines[cmd.Name()]; ok && cmd.Parent() == x.root {
		return c.usage(), true
	}
	return "", false
}

// usage is cmd's usage, as its --help shows it.
func (x *cli) usage(cmd *cobra.Command) string {
	if text, ok := x.usageOf(cmd); ok {
		return text
	}
	return cmd.UsageString()
}

// longFlags rewrites the single-dash long flags of the command that args run ("-json",
// "-task-queue=q") with two dashes, as the flag package of earlier versions took them;
// pflag would read them as a row of one-letter flags. Flag values and everything after
// "--" are left as they are.
func (x *cli) longFlags(args []string) []string {
	cmd, _, err := x.root.Find(args)
	if err != nil || cmd == x.root {
		return args
	}
	fs := cmd.Flags()
	out := slices.Clone(args)
	for i := 0; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") || len(a) < 2 {
			continue
		}
		long := strings.HasPrefix(a, "--")
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		var f *pflag.Flag
		switch {
		case long:
			f = fs.Lookup(name)
		case len(name) > 1 && fs.Lookup(name) != nil:
			f = fs.Lookup(name)
			out[i] = "-" + a
		case len(name) == 1:
			f = fs.ShorthandLookup(name)
		}
		if f != nil && !hasValue && f.NoOptDefVal == "" {
			i++ // the flag's value, whatever it looks like
		}
	}
	return out
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
	c.fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		arg, help := pflag.UnquoteUsage(f)
		if f.NoOptDefVal != "" {
			arg = "" // a bool: no value follows
		}
		name := "    --" + f.Name
		if f.Shorthand != "" {
			name = "-" + f.Shorthand + ", --" + f.Name
		}
		if arg != "" {
			name += " " + arg
		}
		if d := f.DefValue; d != "" && d != "false" && d != "0" && d != "[]" && !strings.Contains(help, "default") {
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

// output defines -o/--output FORMAT (text or json) beside --json, and returns what reads
// the format the user asked for once the flags are parsed.
func (c *cmdline) output(jsonHelp string) func() (asJSON bool, err error) {
	asJSON := c.fs.Bool("json", false, jsonHelp)
	format := c.fs.StringP("output", "o", "text", "output `FORMAT`: text or json (json is --json)")
	_ = c.complete("output", "text", "json")
	return func() (bool, error) {
		switch {
		case *format != "text" && *format != "json":
			return false, c.usageErr("--output is text or json, not %q", *format)
		case *asJSON && c.fs.Changed("output") && *format != "json":
			return false, c.usageErr("--json and --output %s say different things; give one", *format)
		}
		return *asJSON || *format == "json", nil
	}
}

// complete offers choices for a flag's value in shell completion.
func (c *cmdline) complete(flag string, choices ...string) error {
	return c.fs.SetAnnotation(flag, completionChoices, choices)
}

// completionChoices is the flag annotation that complete sets and completeFlags reads.
const completionChoices = "todoflow_choices"

// completeFlags registers the shell completion of cmd's flags whose choices are fixed
// (complete) and of those that name a scenario file (JSON files); the others complete
// as the shell does by default (file names).
func completeFlags(cmd *cobra.Command) {
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		var fn cobra.CompletionFunc
		switch {
		case f.Annotations[completionChoices] != nil:
			fn = cobra.FixedCompletions(f.Annotations[completionChoices], cobra.ShellCompDirectiveNoFileComp)
		case f.Name == "scenario":
			fn = func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
				return []cobra.Completion{"json"}, cobra.ShellCompDirectiveFilterFileExt
			}
		default:
			return
		}
		_ = cmd.RegisterFlagCompletionFunc(f.Name, fn)
	})
}

// completeOnOff completes continuation's second argument.
func completeOnOff(c *cmdline, pos []string) []string {
	if len(pos) == 1 || (len(pos) == 0 && c.workflowID != "") {
		return []string{"on", "off"}
	}
	return nil
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
