package activities

import "path"

// EnvSubagentModels is the environment variable of the worker's
// SubagentModels: patterns separated by commas.
const EnvSubagentModels = "TODOFLOW_SUBAGENT_MODELS"

// subagentModelAllowed reports whether ref matches one of the worker's
// SubagentModels.
func (a *Activities) subagentModelAllowed(ref string) bool {
	for _, p := range a.SubagentModels {
		if ok, _ := path.Match(p, ref); ok {
			return true
		}
	}
	return false
}
