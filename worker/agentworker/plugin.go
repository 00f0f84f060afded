package agentworker

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/nexus-rpc/sdk-go/nexus"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/activities/mcp"
	"github.com/todoflow/todoflow/activities/tools"
	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/transcript"
	"github.com/todoflow/todoflow/worker/codec"
	"github.com/todoflow/todoflow/workflows"
)

// Plugin is todoflow as an SDK worker plugin (worker.Options.Plugins): it
// registers AgentWorkflow and its activities on the worker it is given to,
// sets that worker's options as New's worker has them, and runs beside it
// the worker of its host queue, its MCP servers and its reply stream
// server, which stop when the worker stops. Give one Plugin to one worker.
type Plugin struct {
	worker.PluginBase
	c         client.Client
	acts      *activities.Activities
	logger    *slog.Logger
	taskQueue string // Options.TaskQueue, until ConfigureWorker says the worker's
	encrypted bool
	// deployment are the Worker Versioning options the plugin's worker gets.
	deployment worker.DeploymentOptions
	closers    []closer

	// Set by ConfigureWorker.
	build    string
	hostOpts worker.Options
	host     worker.Worker
	stopOnce sync.Once
}

// NewPlugin prepares what a todoflow worker serves from opts, as New does:
// the tools and MCP servers, the workspace roots, the host queue and the
// reply stream server (which listens from now on). opts.TaskQueue and
// opts.Worker are the SDK worker's business here: the plugin's worker polls
// its own task queue with its own options, to which the plugin adds
// HeartbeatThrottle (unless set), the deployment of opts.Deployment and
// opts.BuildID, and the stream server's URL in Identity. A deployment set
// both ways is an error of worker.New (a panic: it returns no error).
func NewPlugin(c client.Client, opts Options) (*Plugin, error) {
	p := &Plugin{c: c, taskQueue: cmp.Or(opts.TaskQueue, api.TaskQueue), logger: cmp.Or(opts.Logger, slog.Default())}
	opts.Logger = p.logger
	if opts.StateDir == "" {
		dir, err := StateDir()
		if err != nil {
			return nil, err
		}
		opts.StateDir = dir
	}
	opts.DefaultModel = cmp.Or(opts.DefaultModel, os.Getenv("TODOFLOW_MODEL"), DefaultModel)
	if opts.Tools == nil {
		opts.Tools = tools.DefaultRegistry()
	}
	// The activities decode the run's history (the transcript is read
	// from there, and from nowhere else) with the converter the client
	// was dialed with.
	opts.Encrypted = opts.Encrypted || os.Getenv(codec.EnvKey) != ""
	dc, err := payloadConverter(opts)
	if err != nil {
		return nil, err
	}
	p.encrypted = opts.Encrypted
	outputMax, err := toolOutputMax(opts.ToolOutputMax)
	if err != nil {
		return nil, err
	}
	if p.deployment, err = deploymentOptions(opts); err != nil {
		return nil, err
	}
	hostQueue, err := HostQueue(opts.StateDir, opts.HostQueue)
	if err == nil && hostQueue == p.taskQueue {
		err = fmt.Errorf("the host queue is %q, the shared task queue: name one that only this worker polls (--host-queue, %s)", hostQueue, EnvHostQueue)
	}
	if err != nil {
		return nil, err
	}
	roots, err := workspaceRoots(opts)
	if err != nil {
		return nil, err
	}
	if opts.ScriptDir = cmp.Or(opts.ScriptDir, os.Getenv(EnvScriptDir)); opts.ScriptDir != "" {
		if opts.ScriptDir, err = filepath.Abs(opts.ScriptDir); err != nil {
			return nil, fmt.Errorf("script folder: %w", err)
		}
		p.logger.Info("Serving script: models from scenario files in one folder", "ScriptDir", opts.ScriptDir)
	}
	if opts.SubagentModels == nil {
		for _, m := range strings.Split(os.Getenv(activities.EnvSubagentModels), ",") {
			if m = strings.TrimSpace(m); m != "" {
				opts.SubagentModels = append(opts.SubagentModels, m)
			}
		}
	}
	vcsWrites, _ := strconv.ParseBool(strings.TrimSpace(os.Getenv(EnvVCSWrites))) // false when not a boolean
	opts.VCSWrites = opts.VCSWrites || vcsWrites
	// What starts a process or a server comes last, once nothing else can
	// fail, and is closed if what follows it does.
	opts.MCPConfig = cmp.Or(opts.MCPConfig, os.Getenv(mcp.EnvConfig))
	if opts.MCPConfig != "" {
		servers, err := mcp.Open(opts.MCPConfig, mcp.Options{Logger: p.logger})
		if err != nil {
			return nil, err
		}
		p.closers = append(p.closers, closer{"MCP servers", servers.Close})
		if err := servers.Register(opts.Tools); err != nil {
			p.close()
			return nil, fmt.Errorf("mcp config %s: %w", opts.MCPConfig, err)
		}
		p.logger.Info("MCP servers configured; each starts when first needed", "config", opts.MCPConfig, "servers", strings.Join(servers.Names(), ", "))
	}
	p.acts = &activities.Activities{
		Models:         NewModels(opts.DefaultModel, opts.ScriptDir),
		Roots:          roots,
		VCSWrites:      opts.VCSWrites,
		SubagentModels: opts.SubagentModels,
		Tools:          opts.Tools,
		StateDir:       opts.StateDir,
		ToolOutputMax:  outputMax,
		HostQueue:      hostQueue,
		Transcripts:    transcript.NewReader(c.WorkflowService(), dc, opts.TranscriptCacheBytes),
	}
	if opts.AnswerCacheBytes >= 0 {
		p.acts.Answers = activities.NewAnswerCache(opts.AnswerCacheBytes, 0)
	}
	streams, err := serveStreams(&opts, dc)
	if err != nil {
		p.close()
		return nil, err
	}
	if streams != nil {
		p.acts.Streams = streams
		p.closers = append(p.closers, closer{"the reply stream server", streams.Close})
	}
	p.logger.Info("Sessions whose workspace this worker holds run their tools on its host queue", "HostQueue", hostQueue, "WorkspaceRoots", roots.String(), "Sessions", filepath.Join(opts.StateDir, activities.SessionsFolder))
	return p, nil
}

// Name is the plugin's name.
func (p *Plugin) Name() string { return "todoflow.AgentWorkflow" }

// ConfigureWorker sets the options of the plugin's worker, and those of its
// host queue's worker: the same, without workflows and unversioned.
func (p *Plugin) ConfigureWorker(_ context.Context, o worker.PluginConfigureWorkerOptions) error {
	w := o.WorkerOptions
	p.taskQueue = o.TaskQueue
	if w.MaxHeartbeatThrottleInterval == 0 {
		w.MaxHeartbeatThrottleInterval = HeartbeatThrottle
	}
	if d := p.deployment; d.UseVersioning {
		if w.DeploymentOptions.UseVersioning && w.DeploymentOptions != d {
			return fmt.Errorf("deployment %q set twice: in the plugin's options (or %s) and in the worker's DeploymentOptions; keep one", d.Version.DeploymentName, EnvDeployment)
		}
		w.DeploymentOptions = d
		p.logger.Info("Worker Versioning: sessions are pinned to the version that starts them", "Deployment", d.Version.DeploymentName, "BuildID", d.Version.BuildID, "TaskQueue", o.TaskQueue)
	}
	if s := p.acts.Streams; s != nil {
		w.Identity = s.Identity(cmp.Or(w.Identity, defaultIdentity()))
	}
	p.build = recordedBuild(w)
	p.hostOpts = *w
	p.hostOpts.DisableWorkflowWorker = true
	// Unversioned: a pinned session's call to a queue outside its version goes to that
	// queue's unversioned pollers, so it reaches its files after their worker is restarted
	// as another build, and the version's task queues do not grow by one per worker.
	p.hostOpts.DeploymentOptions = worker.DeploymentOptions{}
	p.hostOpts.Plugins = slices.DeleteFunc(slices.Clone(w.Plugins), func(x worker.Plugin) bool { return x == p })
	return nil
}

// StartWorker registers AgentWorkflow and its activities, then starts the
// host queue's worker before the plugin's own, so that a session that takes
// this worker as its host (WorkspaceHost, on the shared queue) finds its
// queue polled.
func (p *Plugin) StartWorker(ctx context.Context, o worker.PluginStartWorkerOptions, next func(context.Context, worker.PluginStartWorkerOptions) error) error {
	if p.acts.HostQueue == p.taskQueue {
		return fmt.Errorf("the host queue is %q, the worker's task queue: name one that only this worker polls (--host-queue, %s)", p.taskQueue, EnvHostQueue)
	}
	workflows.RegisterWithOptions(registry{o.WorkerRegistry}, p.acts, workflows.Options{Encrypted: p.encrypted, BuildID: p.build})
	p.host = worker.New(p.c, p.acts.HostQueue, p.hostOpts)
	workflows.RegisterHost(p.host, p.acts)
	if err := p.host.Start(); err != nil {
		return fmt.Errorf("start the host queue's worker: %w", err)
	}
	if err := next(ctx, o); err != nil {
		p.host.Stop()
		return err
	}
	return nil
}

// StopWorker stops the plugin's worker, then its host queue's, then closes
// the MCP servers and the reply stream server.
func (p *Plugin) StopWorker(ctx context.Context, o worker.PluginStopWorkerOptions, next func(context.Context, worker.PluginStopWorkerOptions)) {
	next(ctx, o)
	if p.host != nil {
		p.host.Stop()
	}
	p.close()
}

func (p *Plugin) close() {
	p.stopOnce.Do(func() {
		for _, c := range p.closers {
			if err := c.close(); err != nil {
				p.logger.Warn(c.what+" did not stop cleanly", "error", err)
			}
		}
	})
}

type closer struct {
	what  string
	close func() error
}

// registry is the registry a plugin is handed, as the worker.Registry that
// package workflows registers on.
type registry struct{ pluginRegistry }

// pluginRegistry is the type of worker.PluginStartWorkerOptions.WorkerRegistry.
type pluginRegistry interface {
	RegisterWorkflowWithOptions(any, workflow.RegisterOptions)
	RegisterDynamicWorkflow(any, workflow.DynamicRegisterOptions)
	RegisterActivityWithOptions(any, activity.RegisterOptions)
	RegisterDynamicActivity(any, activity.DynamicRegisterOptions)
	RegisterNexusService(*nexus.Service)
}

func (r registry) RegisterWorkflow(w any) {
	r.RegisterWorkflowWithOptions(w, workflow.RegisterOptions{})
}

func (r registry) RegisterActivity(a any) {
	r.RegisterActivityWithOptions(a, activity.RegisterOptions{})
}
