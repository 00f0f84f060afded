package workflows

import (
	"errors"
	"fmt"
	"time"

	"github.com/todoflow/todoflow/api"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/transcript"
)

// hostLocal asks the worker that runs the workflow task which worker is the
// session's host, as a local activity: every worker answers for itself at
// once, which spares a round trip through the server.
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
// folder a named workspace is (activities.CheckWorkspace), within the
// operator's workspace roots. The answer is recorded, so the run replays
// the same anywhere; every tool call checks it again on its own worker.
func checkWorkspaceRoot(ctx workflow.Context, workspace string) (string, error) {
	if workspace == "" {
		return "", nil
	}
	var dir string
	err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, checkLocal), activities.CheckWorkspaceName, workspace).Get(ctx, &dir)
	if err != nil {
		return "", errors.New(api.RootMessage(err))
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

// host is where the run's tools run, a component of the run: built from
// the input (a shared workspace, or the host an earlier run learned,
// AgentInput.WorkspaceHost), it learns the host at the first tool call and
// says how the host answers.
type host struct {
	shared bool          // the workspace is on storage every worker mounts
	wait   time.Duration // host_wait_s
	// queue is the task queue of the host that holds the workspace; ""
	// until the run learns it. none: the worker asked polls no host queue,
	// tools run on the shared queue. silent is when a tool call last found
	// that host not answering, nil once one ran there.
	queue  string
	none   bool
	silent *time.Time
	// direct: the run sends its tool calls to the host on the shared
	// queue (RunToolOnHost) until one is refused.
	direct bool
}

func newHost(in api.AgentInput, wait time.Duration) *host {
	return &host{shared: in.WorkspaceShared, wait: wait, queue: in.WorkspaceHost, direct: true}
}

// state is state.workspace: nil until the run knows its host.
func (h *host) state() *api.WorkspaceState {
	switch {
	case h.shared:
		return &api.WorkspaceState{Shared: true}
	case h.queue != "":
		return &api.WorkspaceState{HostQueue: h.queue, UnansweredSince: h.silent}
	}
	return nil
}

// toolQueue is the task queue of the run's tool activities: "" (the
// workflow's own queue) for a shared workspace, else the host's, which a
// run that has none learns first. On an error the tool calls are answered
// with it, not run on a worker that may not hold the files.
func (h *host) toolQueue(ctx workflow.Context) (string, error) {
	if h.shared {
		return "", nil
	}
	if h.queue != "" || h.none {
		return h.queue, nil
	}
	var info activities.HostInfo
	err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, hostLocal), activities.WorkspaceHostName).Get(ctx, &info)
	switch {
	case err != nil:
		return "", fmt.Errorf("no worker could take this session's workspace: %s", api.RootMessage(err))
	case info.Queue == "":
		// A worker that polls no host queue: the deployment pins nothing
		// (see activities.WorkspaceHost). Asked again after
		// continue-as-new, once per run.
		h.none = true
		return "", nil
	}
	h.queue = info.Queue
	workflow.GetLogger(ctx).Info("workspace host", "queue", info.Queue)
	return info.Queue, nil
}

// options are opts for a tool call on queue: a call to a host waits at
// most host_wait_s for it, so that a host that is gone is told, not waited
// for until the tool's own timeouts.
func (h *host) options(opts workflow.ActivityOptions, queue string) workflow.ActivityOptions {
	if queue != "" {
		opts.TaskQueue = queue
		opts.ScheduleToStartTimeout = h.wait
	}
	return opts
}

// answered records how the host answered a tool call (err from the
// activity), and reports whether it did not take the call at all.
func (h *host) answered(ctx workflow.Context, err error) (gone bool) {
	gone = notTaken(err)
	switch {
	case gone && h.silent == nil:
		now := workflow.Now(ctx)
		h.silent = &now
	case err == nil:
		h.silent = nil
	}
	return gone
}

// gone is the tool message of a call that the workspace's host did not
// take: what happened, that nothing ran elsewhere, and what brings the
// tools back.
func (h *host) gone(tool string) string {
	return fmt.Sprintf("Tool %s was not run: the workspace's host %s is not answering (no worker took the call within %s). "+
		"This session's files are on that host, so the call was not sent to another worker. "+
		"Tell the user; the tools work again once that host's worker is back (a worker with the same state folder, or started with --host-queue %s).",
		tool, h.queue, h.wait, h.queue)
}

// toolCall is a call of the model's answer, for runTool.
type toolCall struct {
	c           model.ToolCall
	from        *transcript.CallRef // where c stands in the transcript
	workspaceOf string              // the workflow whose workspace the call works in
	queue       string              // the host's queue; "" for the workflow's own
	// direct sends a call for the host on the workflow's own queue, as
	// RunToolOnHost.
	direct bool
	// approved: a human approved the call after the worker held it (see
	// holdsDestructive); it is not held again.
	approved bool
}

// runTool schedules a tool activity for t. A direct call goes to the
// workflow's own task queue, where the worker completing this workflow task
// (the host, as a rule) is handed it at once by eager execution; any other
// worker refuses it unrun (activities.RunToolOnHost), and the caller sends
// it to the host's queue (notRun).
func (a *agent) runTool(ctx workflow.Context, t toolCall) workflow.Future {
	opts := a.host.options(toolActivity, t.queue)
	opts.Summary = fmt.Sprintf("%s: %s", a.cfg.AgentID, t.c.Name)
	in := a.toolInput(t.c, t.from, t.workspaceOf)
	in.HoldDestructive = !t.approved && a.holdsDestructive(t.c.Name)
	name := api.ToolActivity
	if t.direct {
		name, in.Host = api.ToolOnHostActivity, t.queue
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

// toolInput is the input of a tool activity for call c, which stands in
// the transcript where from says, in the workspace of workflow
// workspaceOf.
func (a *agent) toolInput(c model.ToolCall, from *transcript.CallRef, workspaceOf string) activities.RunToolInput {
	in := activities.RunToolInput{
		WorkflowID:  workspaceOf,
		Session:     a.cfg.session,
		AgentID:     a.cfg.AgentID,
		Workspace:   a.cfg.in.Workspace,
		Call:        model.ToolCall{ID: c.ID, Name: c.Name},
		WorkerTools: a.cfg.in.Tools,
	}
	// Small arguments travel with the call; large ones are in the
	// transcript already (the answer just appended), and the activity
	// reads them from there.
	if n := len(c.Arguments); n > 0 && n <= transcript.HeldOver {
		in.Call.Arguments = c.Arguments
	} else {
		in.From = from
	}
	return in
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
