package api

import "go.temporal.io/sdk/temporal"

// SearchAttributes maps each custom search attribute to its type name, as
// `temporal server start-dev --search-attribute NAME=TYPE` and
// `temporal operator search-attribute create` take them.
func SearchAttributes() map[string]string {
	return map[string]string{
		TodoTotalKey.GetName():     "Int",
		TodoCompletedKey.GetName(): "Int",
		TodoCurrentKey.GetName():   "Keyword",
		AgentStatusKey.GetName():   "Keyword",
	}
}

// StartSearchAttributes are the search attributes of a run that has just
// started (running, an empty list), for StartWorkflowOptions and
// ChildWorkflowOptions. A run started with them does not upsert them again
// (workflows/publish.go), which spares it a command, an event and a write to the
// visibility store; a run started without them (by `temporal workflow
// start`, say) upserts them in its first workflow task, as before.
func StartSearchAttributes() temporal.SearchAttributes {
	return temporal.NewSearchAttributes(
		TodoTotalKey.ValueSet(0),
		TodoCompletedKey.ValueSet(0),
		TodoCurrentKey.ValueSet(""),
		AgentStatusKey.ValueSet(StatusRunning),
	)
}

// Custom search attributes shown in the Web UI's run list and usable in
// visibility queries (`AgentStatus = "awaiting_approval"`).
var (
	TodoTotalKey     = temporal.NewSearchAttributeKeyInt64("TodoTotal")
	TodoCompletedKey = temporal.NewSearchAttributeKeyInt64("TodoCompleted")
	TodoCurrentKey   = temporal.NewSearchAttributeKeyKeyword("TodoCurrent")
	AgentStatusKey   = temporal.NewSearchAttributeKeyKeyword("AgentStatus")
)
