// Package workflows holds AgentWorkflow: one agent run or chat session as a
// Temporal workflow.
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
// A user message (the prompt, the send_message update or the user_message
// signal) starts a turn. The loop calls the model (CallModel), applies the
// todo tools of its answer inside the workflow, runs the other tools as
// concurrent RunTool activities, appends their results in call order, and
// calls the model again until it answers without tool calls or max_turns model
// calls were spent. After every step the state is published: the state query,
// the search attributes TodoTotal, TodoCompleted, TodoCurrent and AgentStatus
// (upserted when they change; while a run is busy at most once a second, see
// agent.publish), and the current details (the checklist as markdown) for the
// Web UI.
//
// # History stays linear
//
// The transcript lives in workflow state. A CallModel input names which
// messages to send (spans of the transcript) and carries those added since
// the previous call, its large fields by digest; a tool call carries its
// small arguments, and names large ones by reference. The activity finds
// the rest in its worker's cache or in the run's history, never by querying
// the run: package transcript tells how, and why each message enters
// history at most twice (the fields of the workflow's own making that an
// input leaves out are recorded once, in a marker: modelcall.go,
// recordMade). A call's input is in history once however often the server
// retries it (modelcall.go), and history grows with the conversation, not
// with its square or its attempts.
//
// # Every place a run stands can hand over
//
// When the server suggests it, or the history reaches its caps (bounds.go),
// the run continues as new wherever it stands (session.go, handOverDue):
// between turns, inside every wait, between two steps of a busy turn, with
// messages queued and reporters behind. Its input crosses with its state
// in the Carry field, one part per component (input.go). Its running
// subagents cross too: the continuation adopts them by workflow id
// (tree_lifecycle.go).
//
// The turn is a value: a turnCursor (turn.go) says where the running turn
// stands (its model calls, the waits of the response it answers), and a
// handover carries it, first in the inbox, as the Inbound's BlockedTurn;
// the continuation runs the turn from it. The run's other concerns are
// components, each built at the run's start from its part of the carry and
// handing that part to the continuation: the window (window.go: the
// transcript, the model's view of it after a compaction, the context
// budget learned), the inbox (replies.go: the queue, the replies owed,
// turn_reply), the approvals (approvals.go), the workspace's host
// (host.go), the reporters (reporters.go), and the tree (tree.go: the bus,
// the children, the agents known to have ended). A carry of the builds
// before parts, which was flat, is read into them (carry_older.go). A turn handed over answers the update that started it, and
// every queued update, that it goes on (TurnGoesOn), and keeps its reply
// for turn_reply: no caller waits on a run that has ended, and no reply is
// lost. A model call is retried by the server (its activity's RetryPolicy,
// modelcall.go), so an outage adds no event and is no place a handover
// must reach. The carry is measured before it goes, and a carry past
// MaxCarryBytes sheds its least needed parts, component by component, in a
// fixed order (fit.go);
// bounds.go names the cap of each kind of payload.
//
// # The agent tree
//
// A subagent is a child AgentWorkflow (subagents.go). The root of a run
// tree is its only broker (tree.go draws one event's path): every agent
// signals its own events, wants and end to the root, which keeps the
// tree's one event log, the roster and the interests (todo.Broker) and
// forwards each event to the agents that subscribed to it or depend on it.
// Each agent sends to a destination one message at a time, so order is kept
// by the sender. Dependencies bind to the producer's current plan, as the
// root's log knows it (todo.PlanState.Bind). Human waits anywhere in the
// tree surface in the root's state and status, and the root hands resume,
// approve_plan and approve_tool on; an agent takes a human's answer only
// from the root.
//
// # One workspace per session
//
// The tools that touch files (built-in, MCP, a worker's own) run as RunTool
// activities, and what they write stays on the disk of the worker that ran
// them. With several workers on the task queue, a session's tool calls
// would land on either host's disk, and a file written by one call would be
// missing for the calls that land elsewhere. So a session's tool activities
// all run on one host (host.go), as in the samples' worker-specific task
// queues: each worker also polls a host queue of its own, named in its
// state folder; at its first tool activity or subagent, a run asks the
// WorkspaceHost local activity (the worker that runs the workflow task
// answers), and whichever worker
// answers holds the workspace. The answer is in history; the run keeps it, carries
// it through continue-as-new (AgentInput.WorkspaceHost), and hands it to
// its subagents, which share its workspace. Model calls, reporters and the
// workflow itself still run on any worker.
//
// Each tool call goes to the host's queue with a ScheduleToStart timeout
// (host_wait_s). It goes first to the workflow's own
// queue as RunToolOnHost, naming the host: the worker that completes the
// workflow task is handed it at once (eager activity execution, which the
// host's queue cannot have), and that worker is the host as a rule, the one
// that answered the host question and that the server keeps sending the
// run's workflow tasks to. Any other worker refuses the call unrun, and the
// run then sends it, and its later calls, to the host's queue as RunTool.
// What the session and its operator see when the host is gone, and
// storage every worker mounts (workspace_shared), are in
// docs/operations.md, "Several workers".
//
// # Waiting
//
// Between turns a session waits durably for the next message, for
// end_session, or for its idle timeout; nothing polls. Updates are validated
// before they reach history; a rejected update leaves no trace.
//
// # Versions
//
// The versioning policy (the first release, v0.1.0, and its frozen corpus;
// a change to the command sequence as a patch, patches.go, with the release
// that removes it) is in docs/protocol.md, "Versions and upgrades"; the
// replay corpus in docs/testing.md.
//
// What a build writes says the protocol it speaks (Protocol, protocol.go):
// the input, the carry and the tree's signals, and the build id an
// unversioned worker records in each workflow task (MarkBuild). Before its
// first command a run checks who started it: a history of another protocol
// is refused on replay by a panic, which blocks the workflow task (the
// default WorkflowPanicPolicy) with a message that says which build to run,
// and never fails the run; a new run from an older build's carry is
// served, the fields it does not know ignored.
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
