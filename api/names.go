package api

import (
	"strings"

	"github.com/todoflow/todoflow/todo"
)

// TaskQueue is the default task queue of workers and starters.
const TaskQueue = "todoflow"

// WorkflowName is the registered workflow type, the name users type with
// `temporal workflow start --type`.
const WorkflowName = "AgentWorkflow"

// Message names: the public contract (docs/protocol.md). A caller that
// needs an answer or must know its input was accepted uses an update; a
// fire-and-forget notification is a signal.
const (
	// SendMessageUpdate delivers a user message and returns the agent's reply
	// for that turn: an update because the caller waits for the answer, and
	// its validator refuses an empty message without touching history.
	SendMessageUpdate = "send_message"
	// UserMessageSignal delivers a user message without waiting for the
	// reply: a signal, so a script or a webhook can queue work and leave.
	UserMessageSignal = "user_message"
	// ApprovePlanUpdate answers a startPlan request: an update, so the
	// approver learns at once whether a plan was actually waiting.
	ApprovePlanUpdate = "approve_plan"
	// ResumeSignal continues a run paused by todo_pause: a signal, since
	// resuming needs no answer and may come from any tool.
	ResumeSignal = "resume"
	// SetContinuationUpdate switches todo continuation at run time: an
	// update, so malformed input is rejected to the caller.
	SetContinuationUpdate = "set_continuation"
	// EndSessionSignal finishes a chat session after the current turn: a
	// signal, because ending must never wait on the agent.
	EndSessionSignal = "end_session"
	// RetryTurnUpdate runs again a turn that failed on the model, once the
	// user fixed the cause: an update, so the caller gets the turn's reply,
	// and the validator refuses it when no turn failed.
	RetryTurnUpdate = "retry_turn"
	// ApproveToolUpdate answers a tool call that waits for approval (input
	// `approval`): an update, so the approver learns at once whether that
	// call was actually waiting, and a wrong call_id is refused.
	ApproveToolUpdate = "approve_tool"
	// InterruptUpdate stops the running turn (a chat's Esc): the model call
	// in flight is cancelled, a tool approval waiting is refused, and the
	// turn ends with what it did; the list and plan stay. An update, so
	// the caller learns whether a turn was running: one that comes
	// between turns is refused, not kept for the next one.
	InterruptUpdate = "interrupt"
	// TurnReplyUpdate waits for the reply of a turn that was handed over to
	// a later run (TurnReplyArgs; workflows/replies.go): an update, because its
	// caller waits for that reply, and an id no turn answers is refused.
	TurnReplyUpdate = "turn_reply"
	// CompactContextUpdate summarises the older messages now (Gemini CLI's
	// /compress): an update, so the caller learns what was compacted.
	CompactContextUpdate = "compact_context"
	// TaskEventSignal carries plan events of an agent of the same run tree
	// (Events; the tree's other messages are in workflows/tree.go): a signal, because
	// it is sent by workflow code (SignalExternalWorkflow), which survives
	// the receiver's continue-as-new.
	TaskEventSignal = "task_event"
	// PlanQuery returns the user's plan checklist as text, never shown to
	// the model.
	PlanQuery = "plan"
	// StateQuery returns the run's state as JSON (see State).
	StateQuery = "state"
	// MessagesQuery returns the stored transcript, oldest first; it takes an
	// optional offset and limit for paging.
	MessagesQuery = "messages"
)

// Agent statuses, the AgentStatus search attribute and State.Status.
const (
	StatusRunning          = "running"
	StatusWaitingUser      = "waiting_user"
	StatusAwaitingApproval = "awaiting_approval"
	StatusPaused           = "paused"
	StatusBlocked          = "blocked"
	StatusCompleted        = "completed"
	StatusFailed           = "failed"
	// StatusContinued is the last status of a run that continued as new:
	// the session goes on in its next run.
	StatusContinued = "continued"
)

// Names of the messages the loop injects into the transcript (role user).
const (
	NameTodoReminder       = todo.NameReminder
	NameCompletionReminder = todo.NameCompletionReminder
	NameStaleReminder      = todo.NameStaleReminder
	NameContinuation       = todo.NameContinuation
	NameBlocked            = todo.NameBlocked
	NameTaskEvent          = "task_event"
	// NameModelError names the assistant message that a turn ended with
	// when its model call failed for good; a retry_turn removes it.
	NameModelError = "model_error"
	// NameInterrupted names the assistant message that a turn the user
	// interrupted (InterruptUpdate) ended with: the model reads, in its
	// next turn, that it was stopped there, and what it had written of the
	// reply it was writing (InterruptedCut).
	NameInterrupted = "interrupted"
	// NamePlanVerdict names the user's answer to a startPlan whose wait for
	// approval was handed over to a continuation: the tool call was
	// answered that the verdict comes in a message, and this is it.
	NamePlanVerdict = "plan_verdict"
)

// ToolDiffsQuery returns the diffs the run keeps of the tool calls named by
// its argument, a list of call ids, as {call_id: diff}; a call without one
// (no diff, or one too old to be kept) is not in the answer. A query: it
// reads the run and leaves nothing in its history.
const ToolDiffsQuery = "tool_diffs"

// NameContextSummary names the message that stands for the compacted older
// messages (role user).
const NameContextSummary = "context_summary"

// InterruptedCut, in the content of a NameInterrupted message, follows the
// reply the model was writing when the user interrupted it (the text its
// model call had written, as the worker reported it: what the user read)
// and comes before the note that says so. A turn stopped when no reply was
// being written ends with the note alone. SplitInterrupted splits one.
const InterruptedCut = "\n\n✂ "

// SplitInterrupted splits the content of a NameInterrupted message into the
// reply cut short ("" when none) and the note.
func SplitInterrupted(content string) (cut, note string) {
	i := strings.LastIndex(content, InterruptedCut)
	if i < 0 {
		return "", content
	}
	return content[:i], content[i+len(InterruptedCut):]
}
