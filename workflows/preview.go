package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/internal/text"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/transcript"
)

// The diff a waiting call would make (patch preview-write; docs/protocol.md,
// "Approve what you see"). A preview never holds the wait back: one that
// cannot be made says why instead.

// previewActivity runs PreviewTool: a look at one file, so a short
// attempt, tried twice at most, and given up within half a minute.
var previewActivity = workflow.ActivityOptions{
	ScheduleToCloseTimeout: 30 * time.Second,
	StartToCloseTimeout:    10 * time.Second,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval: time.Second,
		MaximumAttempts: 2,
		// A worker of a build without PreviewTool: asking again may land
		// on it again.
		NonRetryableErrorTypes: []string{activityNotRegistered, transcript.ErrTypeMismatch},
	},
}

// previewHostWait is the most a preview waits for the host to take it
// (less when host_wait_s is less).
const previewHostWait = 10 * time.Second

// previewsWrites reports whether the run takes patchPreviewWrite: read
// when a run first would preview, and kept.
func (a *agent) previewsWrites(ctx workflow.Context) bool {
	return patchedOnce(ctx, &a.previews, patchPreviewWrite)
}

// previewOf is the diff call c (standing in the transcript where from
// says) would make, for its wait; nil for a call that shows none.
func (a *agent) previewOf(ctx workflow.Context, c model.ToolCall, from *transcript.CallRef) *api.CallDiff {
	if !activities.Previews(c.Name) || a.inWorkflow(c.Name) || a.ended || a.stopping() || !a.previewsWrites(ctx) {
		return nil
	}
	queue, err := a.host.toolQueue(ctx)
	switch {
	case err != nil:
		return noPreview(err.Error())
	case queue != "" && a.host.silent != nil:
		return noPreview(fmt.Sprintf("the workspace's host %s has not been answering since %s", queue, a.host.silent.Format(time.RFC3339)))
	}
	opts := withSummary(a.host.options(previewActivity, queue), fmt.Sprintf("%s: preview %s", a.cfg.AgentID, c.Name))
	if queue != "" && (a.host.wait <= 0 || a.host.wait > previewHostWait) {
		opts.ScheduleToStartTimeout = previewHostWait
	}
	var diff api.CallDiff
	err = workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), activities.PreviewToolName, a.toolInput(c, from, a.tree.rootID)).Get(ctx, &diff)
	if queue != "" {
		a.host.answered(ctx, err)
	}
	if err != nil {
		return noPreview(api.RootMessage(err))
	}
	return &diff
}

// noPreview is a wait's diff that says why there is none.
func noPreview(why string) *api.CallDiff {
	return &api.CallDiff{Unavailable: text.Cut(why, api.MaxUnavailableBytes)}
}
