package todo

import "fmt"

// Caps on what one agent's model may ask for. The model is not trusted: a
// file it reads can tell it to do anything, and each of these grows the
// workflow's history, its state or the worker's load without bound. They
// are code, not worker settings, so every worker replays a run alike; a
// change to one changes commands, and follows the versioning policy.
const (
	// MaxItems is the most items a todo list holds: write_todos with
	// more is refused. The list is in every state query and reminder.
	MaxItems = 100
	// MaxItemBytes is the longest an item's content or id may be: an item
	// is a short description, and the list, in every state query, carry
	// and reminder, stays bounded (MaxItems of them) by construction.
	MaxItemBytes = 2000
	// MaxToolCallsPerResponse is the most tool calls of one model
	// response that run; the rest are answered with an error. Each call
	// is an activity, and the server allows a run 2,000 pending ones.
	MaxToolCallsPerResponse = 64
	// MaxSubagents is the most subagents one agent has running at once.
	// With MaxTreeDepth it bounds a tree at any moment: at most 16
	// children and 256 grandchildren. Finished ones leave a bounded
	// summary (package workflows), so a session may spawn any number over
	// its life.
	MaxSubagents = 16
	// MaxTreeDepth is the deepest an agent may be in its tree: the root is
	// at depth 0, its subagents at 1. An agent at this depth cannot spawn.
	MaxTreeDepth = 2
)

// TooManyToolCalls is the tool message of a call past
// MaxToolCallsPerResponse in a response of n calls.
func TooManyToolCalls(n int) string {
	return fmt.Sprintf("Not run: the response had %d tool calls, and at most %d run per response. Call the tools that are still needed again, fewer at a time.", n, MaxToolCallsPerResponse)
}

// SpawnRefusal says why an agent at depth (0 for the root) with running
// subagents at work may not spawn another, or returns "".
func SpawnRefusal(depth, running int) string {
	switch {
	case depth >= MaxTreeDepth:
		return fmt.Sprintf("you are a subagent at depth %d of the tree, and subagents at depth %d cannot spawn their own: do the task yourself, or report back to your parent", depth, MaxTreeDepth)
	case running >= MaxSubagents:
		return fmt.Sprintf("you have %d subagents running, the most one agent may have at once: wait for one to finish, or do the rest yourself", running)
	}
	return ""
}
