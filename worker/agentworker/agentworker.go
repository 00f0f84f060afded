// Package agentworker builds a todoflow worker: the activities with the
// worker's model clients and tools, AgentWorkflow, all registered on one
// task queue. The worker binary and the starter's in-process worker (for
// `starter run` on the embedded server) share it, so both run the same code.
//
// # Several workers
//
// Every worker of a task queue runs any workflow task, model call and
// report, but a session's files are on one disk. So each worker also polls
// a host queue of its own for tool calls (HostQueue, host.go), which
// survives a restart with the same state folder; see docs/operations.md,
// "Several workers". With Options.Deployment and Options.BuildID the
// worker is one version of a worker deployment, and the sessions it starts
// are pinned to it (deployment.go); the host queue is never versioned.
//
// # Your own worker
//
// A program of your own runs New's worker, or Run, with a tools.Registry
// of its own tools (examples/customtool); one that builds its own SDK
// worker adds todoflow to it with NewPlugin (plugin.go). Dial and DialWith
// connect as the worker binary does, DialWith with a metrics handler and
// interceptors (package worker/telemetry): the activities report todoflow's
// metrics through the handler of the client the worker is built on. See
// docs/operations.md, "Embedding".
package agentworker

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/model/openai"
	"github.com/todoflow/todoflow/model/script"
	"github.com/todoflow/todoflow/worker/devserver"
)

// New returns a worker for c with AgentWorkflow and its activities: an SDK
// worker of opts.TaskQueue with opts.Worker and todoflow's plugin (see
// NewPlugin). Its MCP servers start when first needed and stop when the
// worker stops (Stop, or the end of Run).
func New(c client.Client, opts Options) (worker.Worker, error) {
	p, err := NewPlugin(c, opts)
	if err != nil {
		return nil, err
	}
	wo := opts.Worker
	wo.Plugins = append(slices.Clone(wo.Plugins), p)
	return worker.New(c, p.taskQueue, wo), nil
}

// Run is the worker binary's main loop, for a main of your own: it
// registers todoflow's search attributes on namespace when they are missing,
// builds the worker (see New) and runs it until ctx is done.
func Run(ctx context.Context, c client.Client, namespace string, opts Options) error {
	if err := devserver.EnsureSearchAttributes(ctx, c, namespace, api.SearchAttributes()); err != nil {
		return err
	}
	w, err := New(c, opts)
	if err != nil {
		return err
	}
	logger := cmp.Or(opts.Logger, slog.Default())
	logger.Info("Worker polling; an interrupt stops it", "TaskQueue", cmp.Or(opts.TaskQueue, api.TaskQueue), "Namespace", namespace)
	interrupt := make(chan any)
	defer context.AfterFunc(ctx, func() { close(interrupt) })()
	if err := w.Run(interrupt); err != nil {
		return fmt.Errorf("worker stopped: %w", err)
	}
	return nil
}

// NewModels resolves the model references of workflow inputs. The OpenAI
// client is built once, on first use, from the worker's environment, so a
// worker that only plays scenarios needs no API key. script: references
// are served only when scriptDir is set, from the files inside it.
func NewModels(defaultRef, scriptDir string) activities.ModelResolver {
	var (
		once     sync.Once
		oa       *openai.Client
		oaErr    error
		scripted *script.Client
	)
	if scriptDir != "" {
		scripted = script.New(scriptDir)
	}
	return func(ref string) (model.Client, string, error) {
		if ref == "" {
			ref = defaultRef
		}
		kind, name, ok := strings.Cut(ref, ":")
		if !ok || name == "" {
			return nil, "", fmt.Errorf("want openai:<model name> or script:<scenario file>")
		}
		switch kind {
		case "openai":
			once.Do(func() { oa, oaErr = openai.NewFromEnv() })
			if oaErr != nil {
				return nil, "", oaErr
			}
			return oa, name, nil
		case "script":
			if scripted == nil {
				return nil, "", fmt.Errorf("this worker does not serve script: models; its operator enables them for tests and demos with worker --script-dir DIR (%s)", EnvScriptDir)
			}
			return scripted, name, nil
		}
		return nil, "", fmt.Errorf("unknown model kind %q: want openai or script", kind)
	}
}
