package todo

import (
	"fmt"

	"github.com/todoflow/todoflow/internal/text"
)

// Caps on what one agent's model may ask for. The model is not trusted: a
// file it reads can tell it to do anything, and each of these grows the
// workflow's history, its state or the worker's load without bound. They
// are code, not worker settings, so every worker replays a run alike; a
// change to one changes commands, and follows the versioning policy.
const (
	// MaxItems is the most items a todo list holds: write_todos with
	// more is refused. The list is in every state query and reminder.
	MaxItems = 100
	// MaxItemBytes is the longest an item's content may be, and
	// MaxItemIDBytes its id: an item is a short description, and the list,
	// in every state query, carry and reminder, stays bounded (MaxItems of
	// them) by construction.
	MaxItemBytes   = 2000
	MaxItemIDBytes = 128
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

// Caps on what whoever starts or talks to a run may hand it. The prompt
// stays in the transcript's head, so in every carry; messages wait in the
// inbox, which a continuation carries too; a resume text may be handed on
// to another agent in a signal. Each is refused where it can be (the start,
// an update, a tool call) and cut, visibly, where it cannot (a signal).
const (
	// MaxMessageBytes is the longest a prompt, a user message, a resume
	// text or a subagent's task may be. Longer material belongs in a file
	// the agent reads.
	MaxMessageBytes = 128 << 10
	// MaxSystemPromptBytes is the longest a system prompt may be.
	MaxSystemPromptBytes = 32 << 10
	// MaxQueuedBytes is what the messages waiting for their turn may take
	// in all.
	MaxQueuedBytes = 256 << 10
)

// CutMessage fits a message that came by signal, which cannot be refused,
// into room bytes: the longest head that fits, at a rune boundary, and a note
// for the model and the user saying what was left out. room below the
// note's length leaves the note alone.
func CutMessage(msg string, room int) string {
	if len(msg) <= room {
		return msg
	}
	note := fmt.Sprintf("\n\n[This message was %d bytes; only its first %%d were kept (at most %d per message, %d queued in all). Ask for the rest, or put it in a file.]", len(msg), MaxMessageBytes, MaxQueuedBytes)
	head := text.Cut(msg, max(0, room-len(note)-8))
	return head + fmt.Sprintf(note, len(head))
}

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
