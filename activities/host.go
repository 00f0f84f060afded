package activities

import (
	"context"
	"errors"

	"go.temporal.io/sdk/temporal"
)

// WorkspaceHostName is the activity a session asks, on the shared task
// queue, which host will hold its workspace.
const WorkspaceHostName = "WorkspaceHost"

// ErrTypeNoHostQueue is WorkspaceHost's failure on a worker that polls no
// host queue of its own: it cannot hold a workspace for a session.
const ErrTypeNoHostQueue = "NoHostQueue"

// HostInfo is the answer of WorkspaceHost.
type HostInfo struct {
	// Queue is the task queue that only this worker, and the workers
	// that share its state folder, poll for tool calls.
	Queue string `json:"queue"`
}

// WorkspaceHost answers with this worker's host queue. Whichever worker of
// the shared queue takes the call becomes the session's host: the session
// records the answer (it is in its history) and sends every later tool call
// to that queue, so that its files are always on the disk they were written
// to. See package agentworker for how a worker names its queue.
func (a *Activities) WorkspaceHost(context.Context) (HostInfo, error) {
	if a.HostQueue == "" {
		err := errors.New("this worker polls no host queue of its own (Activities.HostQueue is empty), so it cannot hold a session's workspace")
		return HostInfo{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeNoHostQueue, nil)
	}
	return HostInfo{Queue: a.HostQueue}, nil
}
