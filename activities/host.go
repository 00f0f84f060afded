package activities

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/temporal"
)

// WorkspaceHostName is the activity a session asks, on the shared task
// queue, which host will hold its workspace.
const WorkspaceHostName = "WorkspaceHost"

// ErrTypeNotHost is the error type of a RunToolOnHost call that a worker
// other than the workspace's host refused: nothing ran, and the workflow
// sends the call to the host's queue instead.
const ErrTypeNotHost = "ToolNotHost"

// HostInfo is the answer of WorkspaceHost.
type HostInfo struct {
	// Queue is the task queue that only this worker, and the workers
	// that share its state folder, poll for tool calls. Empty: this worker
	// polls none, and runs tool calls from the shared queue.
	Queue string `json:"queue"`
}

// WorkspaceHost answers with this worker's host queue. Whichever worker of
// the shared queue takes the call becomes the session's host: the session
// records the answer (it is in its history) and sends every later tool call
// to that queue, so that its files are always on the disk they were written
// to. See package agentworker for how a worker names its queue.
//
// A worker built by hand with workflows.Register alone polls no host queue
// (HostQueue is empty) and answers so: its sessions are not pinned, and
// their tool calls go to the shared queue as they did before hosts existed.
// Such a deployment is one host, or has its workspaces on shared storage.
func (a *Activities) WorkspaceHost(context.Context) (HostInfo, error) {
	return HostInfo{Queue: a.HostQueue}, nil
}

// RunToolOnHost is RunTool for the worker whose host queue is in.Host, sent
// on the shared task queue rather than the host's own. The worker that
// completes a workflow task is handed the activities it schedules on its
// own queue at once (eager activity execution), without a trip through the
// server's matching; the host queue cannot have that, since the workflow
// task did not come from it. The worker that runs a session's workflow
// tasks is its host as a rule (the host is the worker that ran the first
// one, and the server keeps sending them there), so the call usually runs
// where it was scheduled, a queue wait sooner.
//
// Any other worker refuses the call before it reads or runs anything
// (ErrTypeNotHost, not retryable), and the workflow sends it to the host's
// queue as RunTool: a call that lands elsewhere (the workflow moved to
// another worker, or eager dispatch had no free slot) costs a round trip,
// never a file on the wrong disk. A worker of a version without this
// activity does not have it registered, and refuses it too.
func (a *Activities) RunToolOnHost(ctx context.Context, in RunToolInput) (RunToolResult, error) {
	if in.Host == "" || in.Host != a.HostQueue {
		return RunToolResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("tool %s: this worker (host queue %q) is not the workspace's host %s; the call did not run here", in.Call.Name, a.HostQueue, in.Host),
			ErrTypeNotHost, nil)
	}
	return a.RunTool(ctx, in)
}
