package workflows

import (
	"cmp"

	"github.com/todoflow/todoflow/todo"
)

// State is the answer of the state query (CONTRACT.md, `starter run --json`).
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
	// last maxStateEvents of them.
	EventsTotal int         `json:"events_total"`
	ModelError  *ModelError `json:"model_error"`
	Usage       Usage       `json:"usage"`
	// Model is the agent's model reference as its input names it, or,
	// when it names none, the name of the worker's default model as its
	// latest call reported it (empty before the first call of a run),
	// which a client prices its usage by.
	Model string `json:"model"`
	// TreeUsage adds the usage of every agent under this one (see
	// agent.treeUsage).
	TreeUsage Usage `json:"tree_usage"`
	// Compactions counts the times the model's view was compacted.
	Compactions int `json:"compactions"`
	// Waiting are the human waits of the agent's tree, its own first
	// (CONTRACT.md); the root's resume and approve_plan reach them.
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
	// fullChildren most recent ones: its bounded summary (the child's own
	// closed run has its whole state).
	Ended *EndedChild `json:"ended,omitempty"`
	// SubagentsPruned counts the finished children left out of Subagents,
	// the oldest first (maxChildren).
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

// Bounds of the payloads that carry a state (the state query, AgentResult,
// task_event, the carry): whatever the run's length and the tree's size,
// they stay far below the 2 MiB payload limit.
const (
	// maxStateEvents is how many of the latest events a state shows, in at
	// most stateEventBytes; the whole log is in the run's history and in
	// getTaskEvents.
	maxStateEvents  = 100
	stateEventBytes = 64 << 10
	// childEvents is how many of a child's latest events its parent shows.
	childEvents = 20
	// fullChildren is how many of the finished children, the most recent,
	// a state shows with their list, plan and latest events (summary), in
	// at most fullChildrenBytes together (a child's list and plan may each
	// take hundreds of KB); older ones, and those past the bytes, show
	// their bounded summary (ended), about 300 bytes.
	fullChildren      = 20
	fullChildrenBytes = 128 << 10
	// maxChildren is how many finished children a state and a carry keep
	// at most; older ones are counted in subagents_pruned. A session of
	// any number of subagents therefore carries at most about
	// fullChildren*5 KB + maxChildren*0.3 KB of them.
	maxChildren = 200
	// resultHead is how much of a finished child's answer its summary keeps.
	resultHead = 200
	// carryEvents is how many of the latest events a continuation carries,
	// in at most carryEventBytes, besides what dependency resolution needs
	// (todo.PlanState.Prune).
	carryEvents     = 200
	carryEventBytes = 128 << 10
)

func (a *agent) state() State {
	events := a.events()
	st := State{
		AgentID:          a.cfg.agentID,
		Status:           a.status,
		Turns:            a.turns,
		ModelCalls:       a.modelCalls,
		Todos:            a.todo.List(),
		Extra:            a.todo.Extra(),
		Paused:           a.todo.Paused,
		PauseReason:      a.todo.PauseReason,
		Continuation:     a.continuation,
		Plan:             a.plans.Current(),
		AwaitingApproval: a.plans.AwaitingApproval || a.approvals.toolWait != nil,
		PendingApproval:  a.approvals.toolWait,
		Events:           todo.Latest(events, maxStateEvents, stateEventBytes),
		EventsTotal:      a.plans.Pruned + len(events),
		Subagents:        a.subagentStates(),
		SubagentsPruned:  a.tree.pruned + max(0, a.finishedChildren()-maxChildren),
		Reporters:        a.reporters.states(),
		ModelError:       a.modelError,
		Usage:            a.usage,
		Model:            cmp.Or(a.cfg.in.Model, a.served),
		TreeUsage:        a.treeUsage(),
		Compactions:      a.window.comp.Count,
		Waiting:          []Wait{},
		Workspace:        a.host.state(),
		Session:          a.cfg.session,
	}
	st.Status = a.shownStatus()
	if ws := a.waiting(); ws != nil {
		st.Waiting = ws
	}
	return st
}

// summary is a state as a parent keeps it for a child: its own figures,
// list and plan and its latest childEvents events, without its own
// subagents (each agent's run answers for those), so that a parent's state
// grows with its children, not with its whole tree's history.
func (s State) summary() State {
	s.Events = todo.Latest(s.Events, childEvents, stateEventBytes/4)
	if s.Events == nil {
		s.Events = []todo.Event{}
	}
	if len(s.Subagents) > 0 {
		s.Subagents = map[string]State{}
	}
	return s
}

func (a *agent) events() []todo.Event {
	if a.plans.Events == nil {
		return []todo.Event{}
	}
	return a.plans.Events
}

// ended is a finished child's bounded summary, with the head of its answer.
func (s State) ended(reply string) State {
	e := &EndedChild{TodosTotal: len(s.Todos), TodosCompleted: todo.CountStatus(s.Todos, todo.Completed), Result: cutUTF8(reply, resultHead)}
	if s.Ended != nil {
		e = s.Ended // already summarised, in an earlier run
	} else if p := s.Plan; p != nil {
		e.PlanStatus, e.StepsTotal = p.Status, len(p.Steps)
		for _, st := range p.Steps {
			if st.Status == todo.StepCompleted {
				e.StepsCompleted++
			}
		}
	}
	return State{AgentID: s.AgentID, Status: s.Status, Turns: s.Turns, ModelCalls: s.ModelCalls, Usage: s.Usage, Model: s.Model, TreeUsage: s.TreeUsage,
		Todos: []todo.Item{}, Events: []todo.Event{}, Subagents: map[string]State{}, Ended: e}
}
