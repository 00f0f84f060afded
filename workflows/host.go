package workflows

import (
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
)

// The workspace's host (see the package doc, "One workspace per session").
const (
	// DefaultHostWait is how long a tool call waits for the workspace's
	// host to take it (host_wait_s) before it is answered with an error.
	DefaultHostWait = time.Minute
)

// hostLocal asks the worker that runs the workflow task which worker is the
// session's host, as a local activity: every worker answers for itself at
// once, so this spares a run an activity's round trip through the server
// and a workflow task (BENCHMARKS.md).
var hostLocal = workflow.LocalActivityOptions{
	ScheduleToCloseTimeout: 2 * time.Minute,
	StartToCloseTimeout:    10 * time.Second,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval:    time.Second,
		BackoffCoefficient: 2,
		MaximumInterval:    10 * time.Second,
		MaximumAttempts:    5,
	},
	Summary: "workspace host",
}

// checkWorkspaceRoot asks the worker that runs this workflow task which
// folder a named workspace is (activities.CheckWorkspace): whoever started
// the run chose it, and only the operator's workspace roots may hold it. The
// answer, an absolute folder, is recorded, so the run replays the same
// wherever it replays; every tool call checks it again on its own worker.
// A run that names no workspace asks nothing.
func checkWorkspaceRoot(ctx workflow.Context, workspace string) (string, error) {
	if workspace == "" {
		return "", nil
	}
	var dir string
	err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, checkLocal), activities.CheckWorkspaceName, workspace).Get(ctx, &dir)
	if err != nil {
		return "", errors.New(rootMessage(err))
	}
	return dir, nil
}

// checkLocal runs CheckWorkspace: a look at the worker's own disk, which a
// refusal ends at once (non-retryable).
var checkLocal = workflow.LocalActivityOptions{
	StartToCloseTimeout: 10 * time.Second,
	RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
	Summary:             "check the workspace",
}

// WorkspaceState is state.workspace: where the session's tools run.
type WorkspaceState struct {
	// HostQueue is the task queue of the worker that holds the workspace
	// (its --host-queue); "" when the workspace is shared.
	HostQueue string `json:"host_queue"`
	// Shared: the workspace is on storage every worker mounts
	// (workspace_shared), so any worker runs the tools.
	Shared bool `json:"shared"`
	// UnansweredSince is when a tool call found the host not answering;
	// nil again once a call ran there.
	UnansweredSince *time.Time `json:"unanswered_since"`
}

// workspaceState is state.workspace: nil until the run knows its host.
func (a *agent) workspaceState() *WorkspaceState {
	switch {
	case a.cfg.in.WorkspaceShared:
		return &WorkspaceState{Shared: true}
	case a.hostQueue != "":
		return &WorkspaceState{HostQueue: a.hostQueue, UnansweredSince: a.hostSilent}
	}
	return nil
}

// toolQueue is the task queue of the run's tool activities: "" (the
// workflow's own queue) for a shared workspace, else the host's, which a
// run that has none learns first. Its error means no host could be learned: the tool calls
// are then answered with it, not run on a worker that may not hold the
// files.
func (a *agent) toolQueue(ctx workflow.Context) (string, error) {
	if a.cfg.in.WorkspaceShared {
		return "", nil
	}
	if a.hostQueue != "" || a.hostNone {
		return a.hostQueue, nil
	}
	var h activities.HostInfo
	err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, hostLocal), activities.WorkspaceHostName).Get(ctx, &h)
	switch {
	case err != nil:
		return "", fmt.Errorf("no worker could take this session's workspace: %s", rootMessage(err))
	case h.Queue == "":
		// A worker that polls no host queue: the deployment pins nothing
		// (see activities.WorkspaceHost). Asked again after
		// continue-as-new, once per run.
		a.hostNone = true
		return "", nil
	}
	a.hostQueue = h.Queue
	workflow.GetLogger(ctx).Info("workspace host", "queue", h.Queue)
	return h.Queue, nil
}

// hostOptions are opts for a tool call on queue: a call to a host waits at
// most host_wait_s for it, so that a host that is gone is told, not waited
// for until the tool's own timeouts.
func (a *agent) hostOptions(opts workflow.ActivityOptions, queue string) workflow.ActivityOptions {
	if queue != "" {
		opts.TaskQueue = queue
		opts.ScheduleToStartTimeout = a.cfg.hostWait
	}
	return opts
}

// hostAnswered records how the host answered a tool call (err from the
// activity), and reports whether it did not take the call at all.
func (a *agent) hostAnswered(ctx workflow.Context, err error) (gone bool) {
	gone = notTaken(err)
	switch {
	case gone && a.hostSilent == nil:
		now := workflow.Now(ctx)
		a.hostSilent = &now
	case err == nil:
		a.hostSilent = nil
	}
	return gone
}

// hostGone is the tool message of a call that the workspace's host did not
// take: what happened, that nothing ran elsewhere, and what brings the
// tools back.
func (a *agent) hostGone(tool string) string {
	return fmt.Sprintf("Tool %s was not run: the workspace's host %s is not answering (no worker took the call within %s). "+
		"This session's files are on that host, so the call was not sent to another worker. "+
		"Tell the user; the tools work again once that host's worker is back (a worker with the same state folder, or started with --host-queue %s).",
		tool, a.hostQueue, a.cfg.hostWait, a.hostQueue)
}

// toolCall is a call of the model's answer, for runTool.
type toolCall struct {
	c           model.ToolCall
	from        *activities.CallRef // where c stands in the transcript
	workspaceOf string              // the workflow whose workspace the call works in
	queue       string              // the host's queue; "" for the workflow's own
	// direct sends a call for the host on the workflow's own queue, as
	// RunToolOnHost.
	direct bool
	// approved: a human approved the call after the worker held it (see
	// holdsDestructive); it is not held again.
	approved bool
}

// runTool schedules a tool activity for t.
//
// A direct call goes to the workflow's own task queue,
// where the worker completing this workflow task is handed it at once
// (eager activity execution): that worker is the host as a rule, and a
// worker that is not refuses the call without running it (see
// activities.RunToolOnHost), which the caller answers by sending it to the
// host's queue (notRun). Either way the call runs on the host and nowhere
// else, and waits at most host_wait_s for a worker to take it.
func (a *agent) runTool(ctx workflow.Context, t toolCall) workflow.Future {
	opts := a.hostOptions(toolActivity, t.queue)
	opts.Summary = fmt.Sprintf("%s: %s", a.cfg.agentID, t.c.Name)
	in := activities.RunToolInput{
		WorkflowID: t.workspaceOf,
		AgentID:    a.cfg.agentID,
		Workspace:  a.cfg.in.Workspace,
		// The arguments are in the transcript already (the answer just
		// appended); the activity reads them from there.
		Call:            model.ToolCall{ID: t.c.ID, Name: t.c.Name},
		From:            t.from,
		WorkerTools:     a.cfg.in.Tools,
		HoldDestructive: !t.approved && a.holdsDestructive(t.c.Name),
	}
	name := activities.RunToolName
	if t.direct {
		name, in.Host = activities.RunToolOnHostName, t.queue
		opts.TaskQueue = ""
		// A worker of a version without RunToolOnHost fails the task as
		// not registered: nothing ran there either, and another attempt
		// on the shared queue could land on it again.
		retry := *opts.RetryPolicy
		retry.NonRetryableErrorTypes = append(append([]string(nil), retry.NonRetryableErrorTypes...), activityNotRegistered)
		opts.RetryPolicy = &retry
	}
	return workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), name, in)
}

// activityNotRegistered is the error type of a task that a worker does not
// have the activity of (the SDK's ActivityNotRegisteredError).
const activityNotRegistered = "ActivityNotRegisteredError"

// notRun reports whether err, the end of a direct tool call, says that the
// call ran nowhere: refused by a worker that is not the host (or does not
// know RunToolOnHost), or taken by no worker within host_wait_s.
func notRun(err error) bool {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Type() == activities.ErrTypeNotHost || app.Type() == activityNotRegistered
	}
	return notTaken(err)
}

// notTaken reports whether err, the end of an activity, says that no
// worker took it within its ScheduleToStart timeout.
func notTaken(err error) bool {
	var timeout *temporal.TimeoutError
	return errors.As(err, &timeout) && timeout.TimeoutType() == enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START
}
