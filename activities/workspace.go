package activities

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/temporal"
)

// CheckWorkspaceName is the local activity a run with a `workspace` asks
// at its start: whoever starts a run writes its input, and only the
// worker's operator decides which folders the tools may touch.
const CheckWorkspaceName = "CheckWorkspace"

// CheckWorkspace answers, for a run that names a workspace, the folder it
// names on this worker (see tools.Roots.Resolve), or refuses it
// (non-retryable, type ErrTypeWorkspace), saying why: outside the roots,
// inside version control metadata, or on a worker whose roots hold its
// state folder (tools.Roots.CheckStateDir). The run records the answer and
// passes the absolute folder to every tool call, which RunTool checks again
// against its own worker's roots.
func (a *Activities) CheckWorkspace(_ context.Context, workspace string) (string, error) {
	if err := a.stateApart(workspace); err != nil {
		return "", temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeWorkspace, nil)
	}
	dir, err := a.Roots.Resolve(workspace)
	if err != nil {
		return "", temporal.NewNonRetryableApplicationError("workspace "+err.Error(), ErrTypeWorkspace, nil)
	}
	return dir, nil
}

// stateApart refuses a run's workspace on a worker whose roots are not
// apart from its state folder (tools.Roots.CheckStateDir): agentworker refuses
// to start so, but a worker built by hand may not have asked.
func (a *Activities) stateApart(workspace string) error {
	if err := a.Roots.CheckStateDir(a.StateDir); err != nil {
		return fmt.Errorf("workspace %q: this worker's workspace %w", workspace, err)
	}
	return nil
}
