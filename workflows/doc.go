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
// messages to send (spans of the transcript), not the messages themselves;
// the activity reads them back with the internal transcript query
// (activities.TranscriptQuery), in pages bounded in bytes so that no answer
// nears the server's 2 MiB cap, a large message in parts. Each message
// therefore enters history once (as the model's answer, a tool's result or a
// user's signal), and history grows with the conversation, not with its
// square.
// When the server suggests it, the run continues as new between turns with
// its input, todo state and transcript carried in the Carry field.
//
// # The agent tree
//
// A subagent is a child AgentWorkflow (subagents.go). The agents of one run
// tree share a bus (tree.go): each agent signals its own plan events to its
// parent, which keeps them; the root holds the roster and hands an agent's
// subscriptions and dependencies to the producer's parent, which forwards
// what matches. Dependencies bind to the producer's current plan
// (todo.PlanState.Bind). Human waits anywhere in the tree surface in the
// root's state and status, and the root hands resume and approve_plan on.
// Runs started before this version keep relaying through their parent; the
// change is guarded by workflow.GetVersion("agent-tree") and a child speaks
// the bus only when its parent does (AgentInput.TreeBus).
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
// WorkspaceHost activity (a local activity since folded-versions: the
// worker that runs the workflow task answers), and whichever worker
// answers holds the workspace. The answer is in history; the run keeps it, carries
// it through continue-as-new (AgentInput.WorkspaceHost), and hands it to
// its subagents, which share its workspace. Model calls, reporters and the
// workflow itself still run on any worker.
//
// Each tool call goes to the host's queue with a ScheduleToStart timeout
// (host_wait_s). Since folded-versions 3 it goes first to the workflow's own
// queue as RunToolOnHost, naming the host: the worker that completes the
// workflow task is handed it at once (eager activity execution, which the
// host's queue cannot have), and that worker is the host as a rule, the one
// that answered the host question and that the server keeps sending the
// run's workflow tasks to. Any other worker refuses the call unrun, and the
// run then sends it, and its later calls, to the host's queue as RunTool.
// When the host is gone the call is answered with an error
// tool message that says which host is not answering and that nothing ran
// elsewhere; the session goes on (its model calls do not need the host),
// state.workspace shows since when the host is silent, and the tools work
// again once a worker with that state folder, hence that queue and those
// files, polls again. A session never moves to another host by itself. A
// workspace on storage every worker mounts (workspace_shared) is not
// pinned: its tools run on any worker.
//
// # Waiting
//
// Between turns a session waits durably for the next message, for
// end_session, or for its idle timeout; nothing polls. Updates are validated
// before they reach history; a rejected update leaves no trace.
//
// # Versions
//
// Each change of the command sequence is guarded by workflow.GetVersion, and
// testsuite replays histories recorded before and after it
// (testsuite/testdata/histories, NAME-vN.json):
//
//   - "durable-sessions" (v1 histories): model retries in the workflow,
//     failed turns, compaction, the session loop of session.go;
//   - "agent-tree" (v2): the tree's bus;
//   - "buffered-signals" (v3): signals wait in the channels' buffers
//     (agent.pollSignals), so that the main coroutine drains one delivered
//     in the same workflow task as the run's end;
//   - "summary-parts": a stretch too large for one summarising call is
//     summarised in parts; the version is asked only where that happens;
//   - "workspace-host": tool activities run on the workspace's host, which
//     a run learns with a WorkspaceHost activity; asked at a run's first
//     tool activity or subagent, so a run that started before it keeps
//     sending its tools to the shared queue;
//   - "tree-delivery-order" (v4): a subagent numbers its signals to its
//     parent, which takes them in in that order;
//   - "folded-versions" (v5): a run started since records every version
//     above but summary-parts under this one marker (agent.versions), since
//     each marker also costs the run an upsert of the TemporalChangeVersion
//     search attribute; and it asks for its workspace's host with a local
//     activity, which the worker running its workflow task answers.
//   - "folded-versions" version 2 (v6): lean publishing (agent.publish): a
//     run does not upsert the search attributes it was started with
//     (StartSearchAttributes, which the starters and a parent set, or what
//     a continued run inherits), and while it is busy it upserts at most
//     once a second, every status it waits in at once.
//   - "folded-versions" version 3 (v7): tool calls for the host go to the
//     workflow's own queue first, as RunToolOnHost (host.go, runTool),
//     where eager dispatch spares them the host queue's wait.
//
// What an activity's input holds is not part of the command sequence (a
// replay matches an activity by its id and type), so changing it needs no
// version: model calls carry the transcript's new messages since that
// change, old runs included (see activities.TranscriptCache).
package workflows
