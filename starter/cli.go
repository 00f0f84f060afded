package main

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/todoflow/todoflow/internal/cliflags"
)

// The command line follows the temporal CLI's conventions, on the library that CLI is built
// with (spf13/cobra and its pflag flags): long flags written --name (-name works too),
// short ones -w ID and -o json, flags before or after the positional arguments, "--" ends
// the flags, -h/--help prints the command's usage with every flag, and an argument error is
// one line plus that usage, exit code 2. cobra owns the usage, the help and the argument
// counts; `starter --version` prints the versions and `starter completion SHELL` a
// completion script.
//
// Adding a command is one entry in commandList and one function of the shape of cmdState:
// it defines the command's flags on c.fs and returns the action that runs with the
// positional arguments.

// command is one subcommand: its cobra Use (its name, then its positional arguments as the
// usage shows them), one line on what it does, examples, the count of its positional
// arguments, and the function that defines its flags and returns what runs it.
type command struct {
	use     string
	about   string
	example string
	args    cobra.PositionalArgs // nil: any
	setup   func(c *cmdline) action
	// complete offers the positional arguments a shell may complete (continuation's on
	// and off); nil offers none, not even file names.
	complete func(c *cmdline, pos []string) []string
}

// name is the command's name, the first word of its use.
func (c command) name() string {
	name, _, _ := strings.Cut(c.use, " ")
	return name
}

// action runs a command once its flags are parsed, with its positional arguments.
type action func(pos []string) error

// commandList is every command, in the order the usage lists them.
func commandList() []command {
	justID := idArgs(0, 0, "")
	return []command{
		{use: "run [PROMPT]", about: "run an agent to its end and print its reply; without --address, on an embedded server and worker", setup: cmdRun,
			example: "  starter run \"Tidy the README\"\n  starter run --scenario testsuite/testdata/scenarios/01_write_todos_lifecycle.json --json"},
		{use: "start (PROMPT | --scenario FILE)", about: "start a run on a server and print its workflow ID", setup: cmdStart,
			example: "  starter start \"Tidy the README\" --address localhost:7233"},
		{use: "send ID TEXT", about: "send a user message (send_message) and print the reply", setup: cmdSend, args: idArgs(1, -1, "the message"),
			example: "  starter send ID \"and now the changelog\"\n  starter send ID -- -n text       # sends \"-n text\""},
		{use: "state ID", about: "show a run's agents, todo checklist and plan (--json: the state query)", setup: cmdState, args: justID},
		{use: "plan ID", about: "show a run's plan checklist (and whether it awaits you)", setup: cmdPlan, args: justID},
		{use: "watch ID", about: "follow a run's agents and progress until it ends", setup: cmdWatch, args: justID},
		{use: "history ID", about: "export a run's history as JSON (for replay tests)", setup: cmdHistory, args: justID,
			example: "  starter history ID --output-file run.json"},
		{use: "approve ID [--call CALL_ID | -y]", about: "show the tool calls that wait for approval, whole, and approve the one --call names; with none, approve the plan that waits (any agent of the tree)", setup: cmdApprove, args: justID,
			example: "  starter approve ID                                # shows the calls waiting, answers none\n  starter approve ID --call CALL_ID --remember"},
		{use: "reject ID --feedback TEXT [--call CALL_ID | -y]", about: "reject the tool call --call names, or the plan that waits, saying why", setup: cmdReject, args: justID,
			example: "  starter reject ID --feedback \"one file at a time\" --call CALL_ID"},
		{use: "resume ID [TEXT]", about: "resume a paused agent of the run's tree (TEXT: what changed)", setup: cmdResume, args: idArgs(0, -1, ""),
			example: "  starter resume ID \"the key is in place\""},
		{use: "continuation ID on|off", about: "switch todo continuation on or off (set_continuation)", setup: cmdContinuation, complete: completeOnOff, args: idArgs(1, 1, "on or off")},
		{use: "end ID", about: "end a session after its current turn (end_session)", setup: cmdEnd, args: justID},
		{use: "retry ID", about: "run again a turn that failed on the model (retry_turn)", setup: cmdRetry, args: justID},
		{use: "stop ID", about: "stop the running turn, keeping what it did (interrupt)", setup: cmdStop, args: justID},
		{use: "rewind ID --to-turn N", about: "take the session back to just before its turn N (a reset: later turns stay in the old run's history)", setup: cmdRewind, args: justID},
		{use: "compact ID", about: "summarise a session's older messages now (compact_context)", setup: cmdCompact, args: justID},
		{use: "chat [--id ID] [--model REF]", about: "chat with a session in the terminal (a new one, or --id to come back to one)", setup: cmdChat, args: countArgs(0, 0, ""),
			example: "  starter chat --id chat-1 --model openai:gpt-4o-mini"},
	}
}

// idArgs is the argument count of a command that addresses a run: its workflow ID, the
// first argument unless -w/--workflow-id gives it, then from min to max more (max -1: any
// number); missing names what a shortfall lacks.
func idArgs(min, max int, missing string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		id, _ := cmd.Flags().GetString("workflow-id")
		if !cmd.Flags().Changed("workflow-id") && len(args) > 0 {
			id, args = args[0], args[1:]
		}
		if strings.TrimSpace(id) == "" {
			return fmt.Errorf("missing the workflow ID: starter %s", cmd.Use)
		}
		return countArgs(min, max, missing)(cmd, args)
	}
}

// countArgs is an argument count from min to max (max -1: any number); missing names what
// a shortfall lacks.
func countArgs(min, max int, missing string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) < min:
			return fmt.Errorf("missing %s: starter %s", missing, cmd.Use)
		case max >= 0 && len(args) > max:
			return fmt.Errorf("unexpected argument %q: starter %s", args[max], cmd.Use)
		}
		return nil
	}
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
		Use:   "starter",
		Short: "todoflow's command line: run agents, start and steer runs, export their histories",
		Long: `todoflow's command line: run agents, start and steer runs, export their histories.

Every command takes --address HOST:PORT (or TEMPORAL_ADDRESS), --namespace NS (or
TEMPORAL_NAMESPACE) and --task-queue QUEUE; the commands that address a run take its ID
as the first argument or as -w/--workflow-id ID, and -o json is --json. Flags may come
before or after the arguments; "--" ends them (starter send ID -- -n text).`,
		Version: formatVersion(debug.ReadBuildInfo()),
		// The errors and usages are printed by runCLI, once, as this CLI's conventions say.
		SilenceErrors:     true,
		SilenceUsage:      true,
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	cobra.EnableCommandSorting = false // commandList's order
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetVersionTemplate("{{.Version}}")
	root.InitDefaultHelpFlag() // now, for the usage of a bare "starter"
	root.InitDefaultVersionFlag()
	x := &cli{root: root, lines: map[string]*cmdline{}}
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
		Use:     spec.use,
		Short:   spec.about,
		Example: spec.example,
		Args:    spec.args,
		ValidArgsFunction: func(_ *cobra.Command, pos []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if spec.complete == nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return spec.complete(c, pos), cobra.ShellCompDirectiveNoFileComp
		},
	}
	c.fs = cc.Flags()
	c.conn.flags(c.fs)
	run := spec.setup(c)
	cc.InitDefaultHelpFlag() // now, for longFlags to know -help
	completeFlags(cc)
	cc.RunE = func(_ *cobra.Command, pos []string) error {
		c.pos = pos
		err := run(pos)
		c.conn.finish() // the command's last spans, when it traced
		if _, ok := errors.AsType[*exitError](err); err != nil && !ok {
			err = &exitError{code: 1, err: err}
		}
		return err
	}
	x.lines[spec.name()] = c
	return cc
}

// longFlags rewrites the single-dash long flags of the command that args run with two
// dashes (cliflags.LongFlags).
func (x *cli) longFlags(args []string) []string {
	cmd, _, err := x.root.Find(args)
	if err != nil || cmd == x.root {
		return args
	}
	return cliflags.LongFlags(cmd.Flags(), args)
}

// usageErr is an argument error: one line, then the command's usage, exit code 2.
func (c *cmdline) usageErr(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...), usage: true}
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
