package workflows

import (
	"github.com/todoflow/todoflow/api"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/activities"
)

// Register registers AgentWorkflow and the activities under their public
// names on a worker (or a test environment).
func Register(r worker.Registry, acts *activities.Activities) {
	RegisterWithOptions(r, acts, Options{})
}

// RegisterWithOptions is Register with the worker's settings of the
// workflow.
func RegisterWithOptions(r worker.Registry, acts *activities.Activities, opts Options) {
	r.RegisterWorkflowWithOptions(WithOptions(opts), workflow.RegisterOptions{Name: api.WorkflowName})
	r.RegisterActivityWithOptions(acts.CallModel, activity.RegisterOptions{Name: api.ModelCallActivity})
	r.RegisterActivityWithOptions(acts.RunTool, activity.RegisterOptions{Name: api.ToolActivity})
	r.RegisterActivityWithOptions(acts.Report, activity.RegisterOptions{Name: activities.ReportName})
	r.RegisterActivityWithOptions(acts.WorkspaceHost, activity.RegisterOptions{Name: activities.WorkspaceHostName})
	r.RegisterActivityWithOptions(acts.RunToolOnHost, activity.RegisterOptions{Name: api.ToolOnHostActivity})
	r.RegisterActivityWithOptions(acts.CheckWorkspace, activity.RegisterOptions{Name: activities.CheckWorkspaceName})
	r.RegisterActivityWithOptions(acts.PreviewTool, activity.RegisterOptions{Name: activities.PreviewToolName})
}

// WithOptions is AgentWorkflow as a worker with opts runs it, for a
// replayer or a worker that registers workflows only. Without opts.BuildID
// the worker is taken to record the SDK's default build id
// (DefaultBuildID): set it to the worker's own (worker.Options.BuildID)
// when that is set. AgentWorkflow registered as it is knows no build as its
// own (protocol.go).
func WithOptions(opts Options) func(workflow.Context, api.AgentInput) (api.AgentResult, error) {
	if opts.BuildID == "" {
		opts.BuildID = DefaultBuildID()
	}
	return func(ctx workflow.Context, in api.AgentInput) (api.AgentResult, error) {
		return agentWorkflow(ctx, in, opts)
	}
}

// RegisterHost registers what a worker's host queue (acts.HostQueue)
// serves: the tool calls of the sessions whose workspace it holds, and the
// previews of those that wait for approval.
func RegisterHost(r worker.Registry, acts *activities.Activities) {
	r.RegisterActivityWithOptions(acts.RunTool, activity.RegisterOptions{Name: api.ToolActivity})
	r.RegisterActivityWithOptions(acts.PreviewTool, activity.RegisterOptions{Name: activities.PreviewToolName})
}
