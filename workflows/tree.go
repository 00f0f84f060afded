package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/todo"
)

// The run tree: how the agents of one run tree hear of each other. The root
// is the only broker. Every other agent signals its own events, its wants
// and its end to the root and to no one else; the root keeps the tree's one
// event log (its todo.PlanState, bounded at each continue-as-new with its
// counts), the roster and the interests (todo.Broker: subscriptions and
// dependencies, "*" included), and forwards each event to the agents
// interested in it, once each. An agent that ends leaves every table.
//
// The files, by the message's journey: the messages here; sending, in
// order, one coroutine per destination (tree_send.go); the root's routing
// (tree_broker.go); taking messages in (tree_receive.go); the human waits
// and the counters a parent shows (tree_waits.go); a subagent's end
// (tree_lifecycle.go). The decisions are todo.Broker's, tested as tables.
//
// One event, from a child's setStepStatus to its parent's unblocked step
// (the parent here is the root; a deeper parent is one forward further):
//
//	child   planTool -> PlanState.ApplyPlan (setStepStatus: step_completed)
//	        emit -> send(root, task_event: Events{Of: child, Events, Brief})
//	        flush: SignalExternalWorkflow, waits until it is delivered
//	root    pollSignals -> drainSignals -> drainTree -> onEvents
//	        receive -> PlanState.Receive: the dependent step turns pending
//	        (step_unblocked), and waitBlocked's Await sees it
//	        forward -> Broker.Deliveries -> send(each interested agent)
//
// Order is kept by the sender: an agent's messages to one destination go
// one at a time, each after the previous one was delivered (flush), so the
// receiver's history holds them as they were sent, and no message needs a
// number or waits in a buffer for one before it. Signals of different
// names that reach a run in one workflow task come in no known order, so a
// receiver takes them in kind by kind (drainTree), in an order that keeps
// every sender's order where it matters: a member's join before its
// messages, events before ends. A child's end is its last signal; the
// child-workflow future is the backstop for a child that dies without one
// (its parent reports the end).
//
// Messages travel with an empty run id, so they survive the receiver's
// continue-as-new; history grows with the events times the agents
// interested in them, not with the depth of the tree.

// Signal names of the tree. They are signals because workflow code sends
// them (SignalExternalWorkflow); TaskEventSignal is in messages.go.
const (
	// JoinSignal carries a todo.Member: a subagent's first signal, to the
	// root, which records it in the roster.
	JoinSignal = "tree_join"
	// WantSignal carries a todo.Want: an agent asks the root for another
	// agent's events (a subscription or a dependency).
	WantSignal = "tree_want"
	// EndSignal carries an End: to the root, that an agent ended (its own
	// last signal, or its parent's word when it died); from the root, to
	// the agents that wanted its events.
	EndSignal = "tree_end"
	// HandSignal carries a Handed: a human's answer the root hands on to
	// the waiting agent, or a parent's request to finish.
	HandSignal = "tree_hand"
)

// Events are events of one agent of the tree (Of; "*" for a backlog of
// several), in the order it emitted them: sent by an agent to the root with
// its counters, and by the root to an agent that wants them (a backlog
// answers a want, with the binding of a dependency) or to the parent of Of
// (the counters only). The task_event signal.
type Events struct {
	Of     string       `json:"of"`
	Events []todo.Event `json:"events,omitempty"`
	// Brief are the counters of Of, which its parent shows.
	Brief *Brief `json:"brief,omitempty"`
	// Bind answers a dependency: the plan of Of it is bound to.
	Bind *string `json:"bind,omitempty"`
}

// End says that agent AgentID ended, and how.
type End struct {
	AgentID string `json:"agent_id"`
	How     string `json:"how"`
	// Never: the agent was not in the tree and no one can spawn it any
	// more (How says so); the asker's dependencies on it fail.
	Never bool `json:"never,omitempty"`
}

// Handed is a human's answer (Resume, Approve or ApproveTool) that the
// root hands on to the agent of its tree that waits for it, or a parent's
// request that its child finish within Finish seconds (end_session).
type Handed struct {
	From        string            `json:"from"`
	Resume      *string           `json:"resume,omitempty"`
	Approve     *ApprovalArgs     `json:"approve,omitempty"`
	ApproveTool *ToolApprovalArgs `json:"approve_tool,omitempty"`
	Finish      *int              `json:"finish,omitempty"`
}

// TreeCarry is the tree's state a run hands to its continuation. A run
// continues as new only when no child runs, so every agent of the tree has
// ended: the root's roster stays (an id stays taken, a late want learns how
// its producer ended), and the asker's side.
type TreeCarry struct {
	Broker todo.Broker `json:"broker"`
	Asked  []string    `json:"asked,omitempty"`
	Subs   int         `json:"subs,omitempty"`
}

// bus is an agent's part of the tree.
type bus struct {
	rootID string // the root's workflow id
	// The root's routing table.
	todo.Broker
	// The asker's side: producers whose binding was asked for, and the
	// number of the last subscription asked for (todo.Subscription.Number).
	asked []string
	subs  int
	// brief is the last brief sent to the root; briefs the latest ones
	// received, by agent: at the root every agent's, elsewhere its
	// children's (the root forwards them). Looked up, never ranged.
	brief  *Brief
	briefs map[string]*Brief
	// handed are the root's waits a human answered, handed on to their
	// agent and not yet seen ending.
	handed []Wait
	// The outboxes, by destination workflow (looked up, never ranged), and
	// the messages queued or in flight in all of them.
	out    map[string]*outbox
	unsent int
	// The signal channels.
	join, want, events, end, hand workflow.ReceiveChannel
}

func (a *agent) isRoot() bool { return a.parentID == "" }

// carryTree is the tree's state for the continuation.
func (a *agent) carryTree() *TreeCarry {
	return &TreeCarry{Broker: a.bus.Broker, Asked: a.bus.asked, Subs: a.bus.subs}
}

func (b *bus) restore(tc *TreeCarry) {
	b.briefs = map[string]*Brief{}
	if tc != nil {
		b.Broker, b.asked, b.subs = tc.Broker, tc.Asked, tc.Subs
	}
}

func (c *Carry) tree() *TreeCarry {
	if c == nil {
		return nil
	}
	return c.Tree
}
