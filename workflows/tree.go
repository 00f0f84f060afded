package workflows

import (
	"slices"

	"github.com/todoflow/todoflow/todo"
)

// The bus of a run tree, in the files tree*.go: the messages and the bus
// state here, the broker (tree_broker.go), delivery in order
// (tree_delivery.go), the subtree's counters and human waits
// (tree_waits.go), a subagent's end (tree_lifecycle.go). Its promise:
// every agent's events reach every agent that subscribed to them or depends
// on them, whatever their places in the tree, and no one else.
//
//   - The keeper of an agent's events is its parent (the root keeps its
//     own): each agent signals its own events to its parent, with a Brief of
//     the counters the parent shows. The keeper's log therefore holds every
//     event of its children, and it answers for them even after they ended.
//   - An agent that wants another agent's events (a subscription, or a
//     dependency that addDependentStep could not bind from its own log) sends
//     a Want to the root, which holds the roster of the tree (every spawn
//     is announced to it) and hands the Want to the producer's keeper, or
//     refuses it when no such agent is in the tree and none is being
//     spawned. A subscription to every agent ("*") is kept by the root and
//     handed to the keeper of each agent, including those spawned later.
//   - The keeper records the interest, answers with the events the asker
//     lacks (for a dependency: the binding to the producer's current plan
//     and that plan's events; when the producer has ended, how it ended) and
//     from then on forwards each new event of the producer that matches.
//     When the producer ends, the keeper tells every interested agent.
//
// Messages travel as task_event signals (signalled with an empty run id,
// so they survive the receiver's continue-as-new); history therefore grows
// with the events times the agents interested in them, not with the tree.

// Want asks a producer's keeper for its events.
type Want struct {
	// Agent and WorkflowID say who wants them and where to send them.
	Agent      string `json:"agent"`
	WorkflowID string `json:"workflow_id"`
	// Of is the producer; "*" (only on the way to the root) every agent.
	Of string `json:"of"`
	// Filter is a subscription's filter; nil asks for a dependency: every
	// event of the producer, bound to its current plan or a later one.
	Filter *todo.Subscription `json:"filter,omitempty"`
	// MinPlan is the producer's latest plan the asker knows of: the binding
	// is never earlier.
	MinPlan string `json:"min_plan,omitempty"`
}

// Binding answers a dependency's Want: events of plan Plan of agent Of (or
// later plans) settle the asker's dependencies on Of.
type Binding struct {
	Of   string `json:"of"`
	Plan string `json:"plan"`
}

// Member is an agent of the tree, as the root's roster holds it.
type Member struct {
	AgentID    string `json:"agent_id"`
	WorkflowID string `json:"workflow_id"`
	Parent     string `json:"parent"`
	// Ended says how the agent ended; "" while it runs.
	Ended string `json:"ended,omitempty"`
}

// interest is an agent that asked a keeper for a producer's events.
type interest struct {
	Of         string             `json:"of"`
	Agent      string             `json:"agent"`
	WorkflowID string             `json:"workflow_id"`
	Filter     *todo.Subscription `json:"filter,omitempty"`
}

// Brief is what a subagent tells its parent with each of its events and
// each change of its status: the counters the parent shows, not its whole
// state (the child's own run answers for that).
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
	// Waiting are the human waits of the child's subtree, its own first.
	Waiting []Wait `json:"waiting,omitempty"`
	// Seq numbers the signals a child sends its parent, each of which
	// carries a brief: the parent takes them in in that
	// order, whatever order they arrive in (agent.inOrder).
	Seq int `json:"seq,omitempty"`
}

// Wait is a human wait of an agent of the tree (CONTRACT.md state.waiting).
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

// TreeCarry is the bus state a run hands to its continuation. A run
// continues as new only when no child runs, so the keeper's interests in
// its children are over; the root's roster and its subscriptions to every
// agent stay.
type TreeCarry struct {
	Roster    []Member   `json:"roster,omitempty"`
	StarWants []Want     `json:"star_wants,omitempty"`
	Interests []interest `json:"interests,omitempty"`
	Asked     []string   `json:"asked,omitempty"`
	Subs      int        `json:"subs,omitempty"`
	// Got and Held: the delivery order of the agents this one still hears
	// from (bus.got, bus.held).
	Got    map[string]int `json:"got,omitempty"`
	Held   []AgentEnd     `json:"held,omitempty"`
	Briefs int            `json:"briefs,omitempty"`
}

// bus is an agent's part of the tree's bus.
type bus struct {
	rootID string // the root's workflow id
	// The root's roster and wants.
	roster       []*Member
	pending      []string // spawn_subagent ids of the response being run
	pendingWants []Want   // wants of agents whose spawn is pending
	starWants    []Want
	// The keeper's interests, in the order they came.
	interests []interest
	// routed are the root's record of which keeper holds which asker's
	// interests (Want handed on by deliver), so that the asker's end
	// reaches them and its interests leave their tables. A run continues
	// as new only when no child runs, when every keeper but the root has
	// ended, so they are not carried.
	routed []route
	// The asker's side: producers whose binding was asked for, and the
	// number of the last subscription sent (todo.Subscription.Number).
	asked []string
	subs  int
	// The last brief sent to the parent.
	brief *Brief
	// handed are the root's waits a human answered, handed on to their
	// agent and not yet seen ending.
	handed []Wait
	// Delivery order (agent.inOrder). sent counts, by producer and
	// asker's workflow (sentKey), the producer's events this keeper sent
	// the asker; got counts, by producer, the events this agent received
	// from keepers; held are end notices that came before the events they
	// follow.
	sent map[string]int
	got  map[string]int
	held []AgentEnd
	// briefs counts the briefs sent to the parent (Brief.Seq).
	briefs int
	// unborn are signals of children not recorded yet (agent.adopt).
	unborn []TaskEvent
}

// route is a Want the root handed to a keeper: the asker's agent id and the
// keeper's workflow.
type route struct{ Asker, Keeper string }

// forget drops the interests of an agent that ended: nothing is forwarded
// to it any more.
func (b *bus) forget(agentID string) {
	b.interests = slices.DeleteFunc(b.interests, func(in interest) bool { return in.Agent == agentID })
	b.starWants = slices.DeleteFunc(b.starWants, func(w Want) bool { return w.Agent == agentID })
}

func sentKey(producer, workflowID string) string { return producer + "\x00" + workflowID }

// countSent records that n events of producer went to the asker workflowID.
func (b *bus) countSent(producer, workflowID string, n int) {
	if b.sent == nil {
		b.sent = map[string]int{}
	}
	b.sent[sentKey(producer, workflowID)] += n
}

// countGot records an event received from its producer's keeper.
func (b *bus) countGot(ev todo.Event) {
	if b.got == nil {
		b.got = map[string]int{}
	}
	b.got[ev.AgentID]++
}

func (b *bus) member(id string) *Member {
	for _, m := range b.roster {
		if m.AgentID == id {
			return m
		}
	}
	return nil
}

func (a *agent) isRoot() bool { return a.parentID == "" }

// keeps reports whether this agent's log holds every event of id: it is
// one of its children, or the root itself.
func (a *agent) keeps(id string) bool {
	return a.children[id] != nil || (a.isRoot() && id == a.cfg.agentID)
}

// carryTree is the bus state for the continuation.
func (a *agent) carryTree() *TreeCarry {
	tc := &TreeCarry{StarWants: a.bus.starWants, Asked: a.bus.asked, Subs: a.bus.subs, Got: a.bus.got, Held: a.bus.held, Briefs: a.bus.briefs}
	for _, m := range a.bus.roster {
		tc.Roster = append(tc.Roster, *m)
	}
	for _, in := range a.bus.interests {
		if in.Of == a.cfg.agentID {
			tc.Interests = append(tc.Interests, in) // in the root's own events
		}
	}
	return tc
}

func (b *bus) restore(tc *TreeCarry) {
	if tc == nil {
		return
	}
	for _, m := range tc.Roster {
		mm := m
		b.roster = append(b.roster, &mm)
	}
	b.starWants, b.interests, b.asked, b.subs = tc.StarWants, tc.Interests, tc.Asked, tc.Subs
	b.got, b.held, b.briefs = tc.Got, tc.Held, tc.Briefs
}

func (c *Carry) tree() *TreeCarry {
	if c == nil {
		return nil
	}
	return c.Tree
}
