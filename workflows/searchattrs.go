package workflows

import "go.temporal.io/sdk/temporal"

// Custom search attributes shown in the Web UI's run list and usable in
// visibility queries (`AgentStatus = "awaiting_approval"`).
var (
	TodoTotalKey     = temporal.NewSearchAttributeKeyInt64("TodoTotal")
	TodoCompletedKey = temporal.NewSearchAttributeKeyInt64("TodoCompleted")
	TodoCurrentKey   = temporal.NewSearchAttributeKeyKeyword("TodoCurrent")
	AgentStatusKey   = temporal.NewSearchAttributeKeyKeyword("AgentStatus")
)

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
