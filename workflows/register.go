package workflows

import (
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/activities"
)

// Register registers AgentWorkflow and the activities under their public
// names on a worker (or a test environment).
func Register(r worker.Registry, acts *activities.Activities) {
	r.RegisterWorkflowWithOptions(AgentWorkflow, workflow.RegisterOptions{Name: WorkflowName})
	r.RegisterActivityWithOptions(acts.CallModel, activity.RegisterOptions{Name: activities.CallModelName})
	r.RegisterActivityWithOptions(acts.RunTool, activity.RegisterOptions{Name: activities.RunToolName})
	r.RegisterActivityWithOptions(acts.Report, activity.RegisterOptions{Name: activities.ReportName})
}
