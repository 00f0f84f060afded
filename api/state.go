package api

import (
	"encoding/json"
	"time"

	"github.com/todoflow/todoflow/todo"
)

// State is the answer of the state query (docs/protocol.md, `starter run --json`).
type State struct {
	AgentID          string           `json:"agent_id"`
	Status           string           `json:"status"`
	Turns            int              `json:"turns"`
	ModelCalls       int              `json:"model_calls"`
	Todos            []todo.Item      `json:"todos"`
	Plan             *todo.Plan       `json:"plan"`
	Extra            todo.Extra       `json:"extra"`
	Paused           bool             `json:"paused"`
	PauseReason      string           `json:"pause_reason"`
	AwaitingApproval bool             `json:"awaiting_approval"`
	Continuation     bool             `json:"continuation"`
	Events           []todo.Event     `json:"events"`
	Subagents        map[string]State `json:"subagents"`
	Reporters        []ReporterStatus `json:"reporters"`
	// EventsTotal counts every event of the log; Events holds at most the
	// latest 100 of them (workflows/state.go).
	EventsTotal int         `json:"events_total"`
	ModelError  *ModelError `json:"model_error"`
	Usage       Usage       `json:"usage"`
	// Model is the agent's model reference as its input names it, or,
	// when it names none, the name of the worker's default model as its
	// latest call reported it (empty before the session's first call; a
	// continuation has it from the run before), which a client prices its
	// usage by.
	Model string `json:"model"`
	// TreeUsage adds the usage of every agent under this one (see
	// workflows/modelcall.go).
	TreeUsage Usage `json:"tree_usage"`
	// Compactions counts the times the model's view was compacted.
	Compactions int `json:"compactions"`
	// Waiting are the human waits of the agent's tree, its own first
	// (docs/protocol.md); the root's resume and approve_plan reach them.
	Waiting []Wait `json:"waiting"`
	// PendingApproval is the agent's tool call waiting for approve_tool.
	PendingApproval *PendingApproval `json:"pending_approval"`
	// Workspace says where the agent's tools run: the host that holds its
	// workspace, or any worker for a shared one; null until it is known.
	Workspace *WorkspaceState `json:"workspace"`
	// Session is the session's key, which names its folders on the
	// workers: <state folder>/sessions/<key>, the workspace of a run that
	// names none, and <state folder>/reports/<key>/, its file reports.
	Session string `json:"session,omitempty"`
	// Live is set in a parent's entry for a running child: the counters the
	// child sent with its latest event or status change (its own run's
	// state query has the rest).
	Live *Brief `json:"live,omitempty"`
	// Ended is set in a parent's entry for a finished child older than the
	// 20 most recent ones (workflows/state.go): its bounded summary (the child's own
	// closed run has its whole state).
	Ended *EndedChild `json:"ended,omitempty"`
	// SubagentsPruned counts the finished children left out of Subagents,
	// the oldest first (beyond 200, workflows/state.go).
	SubagentsPruned int `json:"subagents_pruned,omitempty"`
}

// EndedChild is the bounded summary of a finished subagent.
type EndedChild struct {
	TodosTotal     int    `json:"todos_total"`
	TodosCompleted int    `json:"todos_completed"`
	PlanStatus     string `json:"plan_status,omitempty"`
	StepsTotal     int    `json:"steps_total,omitempty"`
	StepsCompleted int    `json:"steps_completed,omitempty"`
	// Result is the head of the child's final answer.
	Result string `json:"result,omitempty"`
}

// Brief is what an agent tells the root with each of its events and each
// change of its status, and the root its parent: the counters the parent
// shows (state.subagents[id].live), not its whole state (the agent's own
// run answers for that).
type Brief struct {
	Status           string      `json:"status"`
	Turns            int         `json:"turns"`
	ModelCalls       int         `json:"model_calls"`
	TodosTotal       int         `json:"todos_total"`
	TodosCompleted   int         `json:"todos_completed"`
	Current          string      `json:"current,omitempty"`
	PlanID           string      `json:"plan_id,omitempty"`
	PlanStatus       string      `json:"plan_status,omitempty"`
	StepsTotal       int         `json:"steps_total,omitempty"`
	StepsCompleted   int         `json:"steps_completed,omitempty"`
	Paused           bool        `json:"paused,omitempty"`
	PauseReason      string      `json:"pause_reason,omitempty"`
	AwaitingApproval bool        `json:"awaiting_approval,omitempty"`
	ModelError       *ModelError `json:"model_error,omitempty"`
	Usage            Usage       `json:"usage"`
	TreeUsage        Usage       `json:"tree_usage"`
	// Model is the agent's model as its state says it (State.Model): a
	// parent shows it, and a client prices the usage by it.
	Model string `json:"model,omitempty"`
	// Waiting are the agent's own human waits (the root gathers every
	// agent's).
	Waiting []Wait `json:"waiting,omitempty"`
}

// Wait is a human wait of an agent of the tree (state.waiting).
type Wait struct {
	AgentID string `json:"agent_id"`
	Kind    string `json:"kind"`
	Reason  string `json:"reason"`
	// CallID is the call a tool_approval waits for, which approve_tool
	// must name.
	CallID string `json:"call_id,omitempty"`
}

// Kinds of Wait.
const (
	WaitPaused       = "paused"
	WaitPlanApproval = "plan_approval"
)

// PendingApproval is state.pending_approval: the tool call that waits.
type PendingApproval struct {
	CallID string `json:"call_id"`
	Tool   string `json:"tool"`
	// Arguments are the call's arguments, as the model sent them when they
	// are short; longer ones are a JSON string holding their
	// start, so that the state stays small whatever the call carries.
	Arguments json.RawMessage `json:"arguments"`
	// Diff is what the call would change, worked out before it runs by
	// the worker that holds the workspace, for a call of a tool that
	// writes a file (write_file): for the user, never in the model's
	// messages. Nil for other calls, and in a run a build before the
	// patch preview-write started.
	Diff *CallDiff `json:"diff,omitempty"`
}

// CallDiff is state.pending_approval.diff: the diff a waiting call would
// make, or why there is none. It never holds the call back: a preview that
// fails says so, and the call waits all the same.
type CallDiff struct {
	// Hunks are the lines of a unified diff's hunks, without its file
	// header ('@' a hunk's header, ' ' context, '-' removed, '+' added,
	// '\' a note: what was left out, or why the texts were not compared),
	// at most 16 KiB. Empty when Unavailable says why.
	Hunks string `json:"hunks,omitempty"`
	// Added and Removed count the lines the call would add and remove,
	// all of them, shown or not.
	Added   int `json:"added"`
	Removed int `json:"removed"`
	// New: the file does not exist yet; the call would create it.
	New bool `json:"new,omitempty"`
	// Unavailable says why no diff could be worked out (the write would
	// be refused, the worker holding the workspace did not answer, ...),
	// at most 512 bytes.
	Unavailable string `json:"unavailable,omitempty"`
}

// MaxUnavailableBytes bounds CallDiff.Unavailable.
const MaxUnavailableBytes = 512

// WaitToolApproval is the Wait kind of a tool call waiting for approval.
const WaitToolApproval = "tool_approval"

// WaitingCall is the id of the tool call that waits for approval in the
// tree of the state's agent: agentID's when given, else the only one (the
// agent's own first). approve_tool takes it as call_id: a client sends the
// call it showed, so that an answer never approves a call nobody saw.
func (st State) WaitingCall(agentID string) (callID string, ok bool) {
	if p := st.PendingApproval; p != nil && (agentID == "" || agentID == st.AgentID) {
		return p.CallID, true
	}
	for _, w := range st.Waiting {
		if w.Kind == WaitToolApproval && (agentID == "" || agentID == w.AgentID) {
			return w.CallID, true
		}
	}
	return "", false
}

// ReporterStatus is one reporter's line in the state query.
type ReporterStatus struct {
	Type      string `json:"type"`
	Delivered int    `json:"delivered"`
	Failed    int    `json:"failed"`
	Pending   int    `json:"pending"`
	LastError string `json:"last_error,omitempty"`
}

// ModelError is state.model_error: what fails, since when and how often,
// while a model call is retried (retryable; clients fill it from the
// pending activity) or after it ended a turn.
type ModelError struct {
	Message   string    `json:"message"`
	Attempts  int       `json:"attempts"`
	Since     time.Time `json:"since"`
	Retryable bool      `json:"retryable"`
}

// Usage is state.usage: tokens summed over the run's model calls as the
// provider reported them.
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

// WorkspaceState is state.workspace: where the session's tools run.
type WorkspaceState struct {
	// HostQueue is the task queue of the worker that holds the workspace
	// (its --host-queue); "" when the workspace is shared.
	HostQueue string `json:"host_queue"`
	// Shared: the workspace is on storage every worker mounts
	// (workspace_shared), so any worker runs the tools.
	Shared bool `json:"shared"`
	// UnansweredSince is when a tool call found the host not answering;
	// nil again once a call ran there.
	UnansweredSince *time.Time `json:"unanswered_since"`
}

// CompactResult is the answer of the compact_context update.
type CompactResult struct {
	Compacted bool   `json:"compacted"`
	Message   string `json:"message"`
}
