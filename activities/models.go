package activities

import "github.com/todoflow/todoflow/todo"

// EnvSubagentModels is the environment variable of the worker's
// SubagentModels: patterns separated by commas.
const EnvSubagentModels = "TODOFLOW_SUBAGENT_MODELS"

// subagentModelAllowed reports whether ref matches one of the worker's
// SubagentModels (patterns as the input's "tools" are; none allows none).
func (a *Activities) subagentModelAllowed(ref string) bool {
	return len(a.SubagentModels) > 0 && todo.Allowed(a.SubagentModels, ref)
}
