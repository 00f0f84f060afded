package workflows

import (
	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/internal/text"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/todo"
)

// The run tree (docs/protocol.md, "The agent tree"). Its root is the only
// broker: it keeps the tree's one event log and a todo.Broker, and forwards
// each event to the agents that want it. The files follow the message's
// journey: the messages (here), sending (tree_send.go), routing at the root
// (tree_broker.go), taking in (tree_receive.go); then the counters and human
// waits (tree_waits.go), a subagent's end (tree_lifecycle.go).
//
// One event, from a child's setStepStatus to its parent's unblocked step
// (here the parent is the root; a deeper one is one forward further):
//
//	child  planTool -> PlanState.ApplyPlan (step_completed) -> emit
//	       -> send(root, task_event Events{Of: child, Events, Brief})
//	       -> flush: SignalExternalWorkflow, and wait until delivered
//	root   pollSignals -> drainSignals -> drainTree -> drain -> onEvents
//	       -> PlanState.Receive: the step turns pending (step_unblocked),
//	       and waitBlocked's Await sees it; forward -> send(each interested)
//
// Order is kept by the sender: its messages to one destination go one at a
// time, each once the one before was delivered (flush), so none needs a
// number. A child's end is its last signal; its parent's child-workflow
// future (or, for an adopted child, its deadline) is the backstop for a
// child that dies without one. Messages go with an empty run id, so they
// reach the receiver's run after a continue-as-new.

// The tree's signals besides TaskEventSignal (Events, messages.go). Each
// message says the protocol of its sender's build (protocol.go): an agent
// of one tree may run on a build of another after an upgrade.
const (
	JoinSignal = "tree_join" // Join: a subagent's first message, to the root
	WantSignal = "tree_want" // Ask: an agent asks the root for another's events
	EndSignal  = "tree_end"  // End: to the root, and from it to those who wanted its events
	HandSignal = "tree_hand" // Handed: a human's answer the root hands on, or a parent's finish
)

// Events are events of agent Of ("*" for a backlog of several), in the
// order they were emitted: an agent's own, with its counters, to the root;
// the root's forward of them to an agent that wants them (a backlog answers
// a want, with the binding of a dependency), or of the counters to Of's
// parent.
type Events struct {
	Of       string       `json:"of"`
	Events   []todo.Event `json:"events,omitempty"`
	Brief    *api.Brief   `json:"brief,omitempty"`
	Bind     *string      `json:"bind,omitempty"`
	Protocol int          `json:"protocol,omitempty"`
	Key      string       `json:"key,omitempty"` // the tree's key (tree_key.go)
}

// Join is a member's join, and Ask a want, as the tree's signals carry
// them: the member's or the want's fields, and the sender's protocol.
type (
	Join struct {
		todo.Member
		Protocol int    `json:"protocol,omitempty"`
		Key      string `json:"key,omitempty"`
	}
	Ask struct {
		todo.Want
		Protocol int    `json:"protocol,omitempty"`
		Key      string `json:"key,omitempty"`
	}
)

// End says that agent AgentID ended, and how; Never, that it was never in
// the tree and no one can spawn it any more.
type End struct {
	AgentID string `json:"agent_id"`
	How     string `json:"how"`
	Never   bool   `json:"never,omitempty"`
	// Final is the ended agent's own bounded summary, and Reply the head
	// of its answer, sent with its end: a parent that adopted it keeps
	// them as its result (endMessage).
	Final    *api.State `json:"final,omitempty"`
	Reply    string     `json:"reply,omitempty"`
	Protocol int        `json:"protocol,omitempty"`
	Key      string     `json:"key,omitempty"`
}

// Handed is a human's answer the root hands on to the agent that waits for
// it, or a parent's request that its child finish within Finish seconds.
type Handed struct {
	From        string                `json:"from"`
	Resume      *string               `json:"resume,omitempty"`
	Approve     *api.ApprovalArgs     `json:"approve,omitempty"`
	ApproveTool *api.ToolApprovalArgs `json:"approve_tool,omitempty"`
	Finish      *int                  `json:"finish,omitempty"`
	Protocol    int                   `json:"protocol,omitempty"`
	Key         string                `json:"key,omitempty"`
}

// TreeCarry is the tree's part of a carry: the root's roster and
// interests, what this agent asked for, what it knows of the agents still
// running (their last briefs, the waits whose answer it handed on), and its
// children: the running ones by name, which the continuation adopts
// (tree_lifecycle.go), the finished ones by their final states.
type TreeCarry struct {
	// Key is the root's tree key (tree_key.go); a subagent's is in its
	// input.
	Key    string                `json:"key,omitempty"`
	Broker todo.Broker           `json:"broker"`
	Asked  []string              `json:"asked,omitempty"`
	Subs   int                   `json:"subs,omitempty"`
	Briefs map[string]*api.Brief `json:"briefs,omitempty"`
	Handed []api.Wait            `json:"handed,omitempty"`
	// Running are the children still working, in the order they were
	// spawned.
	Running []RunningChild `json:"running,omitempty"`
	// Subagents are the final states of the finished children, as
	// summaries, at most maxChildren of them; SubagentsPruned counts those
	// left out.
	Subagents       map[string]api.State `json:"subagents,omitempty"`
	SubagentsPruned int                  `json:"subagents_pruned,omitempty"`
}

// tree is an agent's place in its run tree: the bus its messages go by, its
// children (looked up in children, in the order childOrder gives), and the
// agents of the tree it knows to have ended.
type tree struct {
	bus
	parentID string // the parent's workflow id; "" for the root
	// leave stops the run's loop: its root is gone (tree_send.go).
	leave      workflow.CancelFunc
	children   map[string]*child
	childOrder []string
	gone       map[string]string // agent id -> how it ended
	// pruned counts the finished children earlier runs left out of the
	// carry (maxChildren).
	pruned int
	// finishNote tells the model, before its next call, that its parent's
	// session is ending (a subagent asked to finish).
	finishNote string
	// key proves a tree message came from the tree (tree_key.go).
	key string
}

// bus is an agent's part of the tree's messaging. Its maps are looked up, never ranged.
type bus struct {
	rootID      string // the root's workflow id, whose workspace the tree's tools work in
	todo.Broker        // at the root
	// asked are the producers whose binding was asked for; subs the number
	// of the last subscription asked for (todo.Subscription.Number).
	asked []string
	subs  int
	// brief is the last brief sent; briefs the latest received, by agent:
	// at the root every agent's, elsewhere its children's.
	brief  *api.Brief
	briefs map[string]*api.Brief
	// handed are waits whose human answer the root handed on.
	handed                        []api.Wait
	out                           map[string]*outbox // by destination workflow
	unsent                        int                // messages queued or in flight
	join, want, events, end, hand workflow.ReceiveChannel
}

func (a *agent) isRoot() bool { return a.tree.parentID == "" }

// newTree is a run's place in the tree as its carry left it: the children
// of earlier runs, finished ones by their states and running ones to adopt,
// and the bus's tables. Its channels and ids are set when the run starts.
func newTree(c *Carry) tree {
	t := tree{children: map[string]*child{}, gone: map[string]string{}}
	t.briefs = map[string]*api.Brief{}
	if c == nil || c.Tree == nil {
		return t
	}
	tc := c.Tree
	t.key = tc.Key
	t.Broker, t.asked, t.subs, t.handed = tc.Broker, tc.Asked, tc.Subs, tc.Handed
	if tc.Briefs != nil {
		t.briefs = tc.Briefs
	}
	for _, id := range text.SortedKeys(tc.Subagents) {
		st := tc.Subagents[id]
		t.children[id] = &child{AgentID: id, State: &st, Done: true}
		t.gone[id] = st.Status
		t.childOrder = append(t.childOrder, id)
	}
	for _, r := range tc.Running {
		t.children[r.AgentID] = &child{AgentID: r.AgentID, WorkflowID: r.WorkflowID, deadline: r.Deadline}
		t.childOrder = append(t.childOrder, r.AgentID)
	}
	t.pruned = tc.SubagentsPruned
	return t
}

// carryTree is the tree's part of a carry. The running children are handed
// over by name; only the finished ones stand in Subagents, by their final
// states, the latest maxChildren of them.
func (a *agent) carryTree() *TreeCarry {
	a.tree.PruneEnded()
	running := a.runningChildList()
	ended := a.subagentStates()
	for _, r := range running {
		delete(ended, r.AgentID)
	}
	return &TreeCarry{Key: a.tree.key, Broker: a.tree.Broker, Asked: a.tree.asked, Subs: a.tree.subs, Briefs: a.tree.briefs, Handed: a.tree.handed,
		Running: running, Subagents: ended,
		// The children left out of Subagents are left out of the next
		// run's count too, but still counted as pruned.
		SubagentsPruned: a.tree.pruned + max(0, a.finishedChildren()-maxChildren)}
}
