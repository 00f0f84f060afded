package workflows

import (
	"github.com/todoflow/todoflow/api"
	"go.temporal.io/sdk/workflow"
)

// startedWith is what the run's search attributes held when it started
// (read before its first upsert): the zero published, which no state
// matches, unless all four are set.
func startedWith(ctx workflow.Context) published {
	sa := workflow.GetTypedSearchAttributes(ctx)
	total, ok1 := sa.GetInt64(api.TodoTotalKey)
	completed, ok2 := sa.GetInt64(api.TodoCompletedKey)
	current, ok3 := sa.GetKeyword(api.TodoCurrentKey)
	status, ok4 := sa.GetKeyword(api.AgentStatusKey)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return published{}
	}
	return published{total: total, completed: completed, current: current, status: status, set: true}
}
