package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/todoflow/todoflow/api"

	"github.com/google/uuid"
	"github.com/spf13/pflag"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	tfclient "github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/worker/agentworker"
	"github.com/todoflow/todoflow/worker/devserver"
	"github.com/todoflow/todoflow/worker/telemetry"
)

// conn holds the flags every command that talks to a server shares.
type conn struct {
	address   string
	namespace string
	taskQueue string
	local     bool // the embedded server: no cluster configuration applies
	// log receives the SDK client's warnings; nil means standard error
	// (the chat draws on the terminal, and logs to a file instead).
	log io.Writer
	// tracing, with OpenTelemetry's OTEL_EXPORTER_OTLP_ENDPOINT set, traces
	// what the command does (see package worker/telemetry); started by the
	// first dial, its last spans sent by finish.
	tracing *telemetry.Tracing
}

func (c *conn) flags(fs *pflag.FlagSet) {
	fs.StringVar(&c.address, "address", "", "Temporal server `HOST:PORT` (default: $TEMPORAL_ADDRESS or the active profile, else localhost:7233)")
	fs.StringVar(&c.namespace, "namespace", "", "Temporal namespace `NS` (default: $TEMPORAL_NAMESPACE or the active profile, else default)")
	fs.StringVar(&c.taskQueue, "task-queue", api.TaskQueue, "task `QUEUE` of the todoflow workers")
}

// dial connects to the server, quietly: the SDK's info logs would drown the
// progress lines a user watches. TLS and API keys come from the SDK's
// environment configuration, as for the temporal CLI. With tracing on, the
// runs the command starts, signals or updates continue its trace.
func (c *conn) dial(ctx context.Context) (client.Client, error) {
	if c.tracing == nil {
		tr, err := telemetry.StartTracing(ctx, "todoflow-starter")
		if err != nil {
			return nil, err
		}
		c.tracing = tr
	}
	warnings := slog.New(slog.NewTextHandler(cmp.Or[io.Writer](c.log, os.Stderr), &slog.HandlerOptions{Level: slog.LevelWarn}))
	cl, ns, err := agentworker.DialWith(ctx, agentworker.DialOptions{
		Address: c.address, Namespace: c.namespace, Local: c.local, Logger: sdklog.NewStructuredLogger(warnings),
		Interceptors: c.tracing.Interceptors(),
	})
	if err != nil {
		return nil, err
	}
	c.namespace = ns
	return cl, nil
}

// finish sends the command's last spans, when it traced: a process that
// exits with spans in its batch loses them.
func (c *conn) finish() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.tracing.Shutdown(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "starter: %v\n", err)
	}
}

// dialReady connects and makes sure the server has todoflow's search
// attributes, registering missing ones, so that no run starts into a
// workflow-task retry loop.
func (c *conn) dialReady(ctx context.Context) (client.Client, error) {
	cl, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	if err := devserver.EnsureSearchAttributes(ctx, cl, c.namespace, api.SearchAttributes()); err != nil {
		cl.Close()
		return nil, err
	}
	return cl, nil
}

func interruptible() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// forRun is the shape of every command that addresses one run: its own flags beside
// the connection flags and -w/--workflow-id, the run's ID (the first positional argument
// unless -w gives it; idArgs has counted them), then the positional arguments after it.
// check judges the arguments after the ID before anything is dialled (a bad argument is
// exit 2 even with no server); then it connects and hands the run's session over to do.
func (c *cmdline) forRun(check func(rest []string) error,
	do func(ctx context.Context, s *tfclient.Session, rest []string) error) action {
	c.fs.StringVarP(&c.workflowID, "workflow-id", "w", "", "the run's workflow `ID`, instead of the first argument")
	return func(pos []string) error {
		id, rest := c.workflowID, pos
		if !c.fs.Changed("workflow-id") {
			id, rest = pos[0], pos[1:]
		}
		c.id = id
		if check != nil {
			if err := check(rest); err != nil {
				return err
			}
		}
		ctx, stop := interruptible()
		defer stop()
		cl, err := c.conn.dial(ctx)
		if err != nil {
			return err
		}
		defer cl.Close()
		return do(ctx, c.conn.client(cl).Session(id), rest)
	}
}

// client is the todoflow client over cl, on the command's task queue: every run the
// starter starts or talks to goes through it (package client).
func (c *conn) client(cl client.Client) *tfclient.Client {
	return tfclient.New(cl, tfclient.Options{TaskQueue: c.taskQueue, Namespace: c.namespace})
}

// newRunID defines --id and its temporal CLI spelling -w/--workflow-id for the commands
// that start a run, and returns what reads the ID once the flags are parsed: the one
// given, or a fresh todoflow-<uuid>.
func (c *cmdline) newRunID() func() (string, error) {
	id := c.runID("workflow `ID` of the run (default: todoflow-<uuid>)")
	return func() (string, error) {
		if _, err := id(); err != nil || c.id != "" {
			return c.id, err
		}
		c.id = "todoflow-" + uuid.NewString()
		return c.id, nil
	}
}

// runID defines --id (help says what it is) and its temporal CLI spelling
// -w/--workflow-id, and returns what reads the ID once the flags are parsed: the one
// given, or "".
func (c *cmdline) runID(help string) func() (string, error) {
	id := c.fs.String("id", "", help)
	c.fs.StringVarP(&c.workflowID, "workflow-id", "w", "", "the same as --id")
	return func() (string, error) {
		if c.fs.Changed("workflow-id") {
			if c.fs.Changed("id") && *id != c.workflowID {
				return "", c.usageErr("--id %q and --workflow-id %q: give the ID once", *id, c.workflowID)
			}
			*id = c.workflowID
		}
		c.id = *id
		return c.id, nil
	}
}
