package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os"
	"strings"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/todoflow/todoflow/worker/agentworker"
	"github.com/todoflow/todoflow/worker/devserver"
	"github.com/todoflow/todoflow/workflows"
)

// conn holds the flags every command that talks to a server shares.
type conn struct {
	address   string
	namespace string
	taskQueue string
	local     bool // the embedded server: no cluster configuration applies
}

func (c *conn) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.address, "address", "", "Temporal server `HOST:PORT` (default: $TEMPORAL_ADDRESS or the active profile, else localhost:7233)")
	fs.StringVar(&c.namespace, "namespace", "", "Temporal namespace (default: $TEMPORAL_NAMESPACE or the active profile, else default)")
	fs.StringVar(&c.taskQueue, "task-queue", workflows.TaskQueue, "task queue of the todoflow workers")
}

// dial connects to the server, quietly: the SDK's info logs would drown the
// progress lines a user watches. TLS and API keys come from the SDK's
// environment configuration, as for the temporal CLI.
func (c *conn) dial(ctx context.Context) (client.Client, error) {
	cl, ns, err := agentworker.Dial(ctx, c.address, c.namespace, c.local, quietLogger(os.Stderr))
	if err != nil {
		return nil, err
	}
	c.namespace = ns
	return cl, nil
}

// dialReady connects and makes sure the server has todoflow's search
// attributes, registering missing ones, so that no run starts into a
// workflow-task retry loop.
func (c *conn) dialReady(ctx context.Context) (client.Client, error) {
	cl, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	if err := devserver.EnsureSearchAttributes(ctx, cl, c.namespace, workflows.SearchAttributes()); err != nil {
		cl.Close()
		return nil, err
	}
	return cl, nil
}

func quietLogger(w io.Writer) sdklog.Logger {
	return sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn})))
}

// parse parses flags that may come before or after the positional
// arguments ("state ID --json" and "state --json ID" both work).
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if err == flag.ErrHelp {
				fs.SetOutput(os.Stderr)
				fs.Usage()
				return nil, &exitError{code: 0}
			}
			return nil, usageErr("%v", err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// runCommand is the shape of every command that addresses one run: its own
// flags beside the connection flags, the run's ID, then the positional
// arguments after it.
type runCommand struct {
	name string
	fs   *flag.FlagSet
	conn conn
}

func newRunCommand(name string) *runCommand {
	rc := &runCommand{name: name, fs: flag.NewFlagSet(name, flag.ContinueOnError)}
	rc.conn.flags(rc.fs)
	return rc
}

// run parses args and takes the ID; check judges the remaining arguments
// before anything is dialled (a bad argument is exit 2 even with no server);
// then it connects and hands over to do.
func (rc *runCommand) run(args []string, check func(rest []string) error,
	do func(ctx context.Context, cl client.Client, id string, rest []string) error) error {
	pos, err := parse(rc.fs, args)
	if err != nil {
		return err
	}
	id, rest, err := workflowID(pos, rc.name)
	if err != nil {
		return err
	}
	if check != nil {
		if err := check(rest); err != nil {
			return err
		}
	}
	ctx, stop := interruptible()
	defer stop()
	cl, err := rc.conn.dial(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	return do(ctx, cl, id, rest)
}

// noMoreArgs is the check of commands that take nothing after the ID.
func noMoreArgs(shape string) func([]string) error {
	return func(rest []string) error {
		if len(rest) > 0 {
			return usageErr("unexpected argument %q: %s", rest[0], shape)
		}
		return nil
	}
}

// workflowID takes the ID argument of the commands that address a run.
func workflowID(pos []string, cmd string) (string, []string, error) {
	if len(pos) == 0 || strings.TrimSpace(pos[0]) == "" {
		return "", nil, usageErr("missing the workflow ID: starter %s ID", cmd)
	}
	return pos[0], pos[1:], nil
}
