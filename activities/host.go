package activities

import "context"

// WorkspaceHostName is the activity a session asks, on the shared task
// queue, which host will hold its workspace.
const WorkspaceHostName = "WorkspaceHost"

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
