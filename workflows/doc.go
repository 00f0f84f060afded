// Package workflows holds AgentWorkflow: one agent run or chat session as a
// Temporal workflow. The messages it answers are in docs/protocol.md; what
// survives what, and where the time goes, in docs/architecture.md.
//
// # What lives where
//
// The workflow sequences; it does not decide. Every rule about the todo list
// (validation, the parallel rule, the views, the guards' decisions) is a pure
// function in package todo, called here from deterministic code. Model calls
// and tool executions are activities, scheduled by name (package activities),
// so the worker chooses implementations and keeps secrets.
//
// # One turn
//
// A user message starts a turn (turn.go). The loop calls the model
// (modelcall.go), applies the todo tools of its answer inside the workflow,
// runs the other tools as concurrent activities (tools.go), appends their
// results in call order, and calls the model again until it answers without
// tool calls or max_turns model calls were spent. After every step the state
// is published (publish.go).
//
// # History stays linear
//
// The transcript lives in workflow state. A CallModel input names which
// messages to send and carries those added since the previous call; the
// activity finds the rest in its worker's cache or in the run's history,
// never by querying the run (package transcript tells how). The fields of
// the workflow's own making that an input leaves out are recorded once, in a
// marker (modelcall.go, recordMade).
//
// # Every place a run stands can hand over
//
// When the server suggests it, or the history reaches its caps (bounds.go),
// the run continues as new wherever it stands (session.go, handOverDue). Its
// input crosses with its state in the Carry field, one part per component
// (input.go): the window (window.go), the inbox (replies.go), the approvals
// (approvals.go), the host (host.go), the reporters (reporters.go) and the
// tree (tree.go), whose running subagents the continuation adopts
// (tree_lifecycle.go). The turn is a value: a turnCursor (turn.go) says where
// the running turn stands, and a handover carries it first in the inbox. A
// turn handed over answers its update TurnGoesOn and keeps its reply for
// turn_reply (replies.go). A carry past MaxCarryBytes sheds its least needed
// parts in a fixed order (fit.go); a carry of older builds is read into the
// parts (carry_older.go). What crosses is in docs/protocol.md, "The carry".
//
// # The agent tree
//
// A subagent is a child AgentWorkflow (subagents.go). The root of a run tree
// is its only broker: tree.go draws one event's path, and the files
// tree_*.go follow it. Human waits anywhere in the tree surface at the root,
// which hands the answers on; an agent takes a human's answer only from the
// root.
//
// # One workspace per session
//
// What a tool writes stays on the disk of the worker that ran it, so a
// session's tool activities all run on one host (host.go): the worker that
// answers the WorkspaceHost local activity at the run's first tool call or
// subagent. The answer is in history, carried through continue-as-new
// (AgentInput.WorkspaceHost) and handed to subagents. What the session and
// its operator see when the host is gone is in docs/operations.md, "Several
// workers".
//
// # Waiting
//
// Between turns a session waits durably for the next message, for
// end_session, or for its idle timeout (idle.go); nothing polls. Updates are
// validated before they reach history; a rejected update leaves no trace.
//
// # Versions
//
// The versioning policy (the first release, v0.1.0, and its frozen corpus; a
// change to the command sequence as a patch, patches.go) is in
// docs/protocol.md, "Versions and upgrades"; the replay corpus in
// docs/testing.md. A run refuses a history of another protocol before its
// first command (protocol.go).
//
// Nothing a worker is configured with changes a command: encryption changes
// what TodoCurrent holds (blank), never whether it is upserted; the caps are
// code (todo/limits.go); what depends on the worker's disk (the workspace's
// folder, its host) reaches the run as a recorded local activity's answer.
//
// What an activity's input holds is not part of the command sequence (a
// replay matches an activity by its id and type), so changing it needs no
// re-recording.
package workflows
