package workflows

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// The bus of a run tree (runs started since the agent-tree version; see
// agent.tree). Its promise: every agent's events reach every agent that
// subscribed to them or depends on them, whatever their places in the tree,
// and no one else.
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
	// carries a brief (agent.treeOrder): the parent takes them in in that
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
	// The asker's side: producers whose binding was asked for, and how many
	// of its subscriptions were sent.
	asked []string
	subs  int
	// The last brief sent to the parent.
	brief *Brief
	// handed are the root's waits a human answered, handed on to their
	// agent and not yet seen ending.
	handed []Wait
	// Delivery order (agent.treeOrder). sent counts, by producer and
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

// Peer is todo.Peers for addDependentStep: a child's events are in this
// log; any other agent is asked for. An agent that is not in the tree yet
// may still be spawned (by the root, while its turn runs, or by another
// running agent): the dependency waits for it, and fails once no one can
// spawn it any more (settleUnknown). Only an id that cannot name an agent is
// refused at once.
func (a *agent) Peer(id string) todo.PeerKind {
	switch {
	case a.children[id] != nil:
		return todo.PeerLocal
	case !agentIDPattern.MatchString(id):
		return todo.PeerUnknown
	}
	return todo.PeerRemote
}

// Known lists the agents of the tree the root knows, for a refusal.
func (a *agent) Known() []string {
	ids := []string{a.cfg.agentID}
	for _, m := range a.bus.roster {
		ids = append(ids, m.AgentID)
	}
	ids = append(ids, a.bus.pending...)
	slices.Sort(ids)
	return slices.Compact(ids)
}

// askPeers sends the wants this agent's plan needs and has not sent yet:
// bindings of new dependencies, new subscriptions. Called after each plan
// tool.
func (a *agent) askPeers(ctx workflow.Context) {
	for _, id := range a.plans.PendingBindings() {
		if slices.Contains(a.bus.asked, id) {
			continue
		}
		a.bus.asked = append(a.bus.asked, id)
		a.ask(ctx, Want{Of: id, MinPlan: a.plans.CurrentPlanOf(id)})
	}
	for ; a.bus.subs < len(a.plans.Subscriptions); a.bus.subs++ {
		s := a.plans.Subscriptions[a.bus.subs]
		of := s.AgentID
		if of == "" {
			of = "*"
		}
		a.ask(ctx, Want{Of: of, Filter: &s})
	}
}

// ask sends a want on its way: served here when this agent keeps the
// producer's events, routed by the root otherwise.
func (a *agent) ask(ctx workflow.Context, w Want) {
	w.Agent, w.WorkflowID = a.cfg.agentID, workflow.GetInfo(ctx).WorkflowExecution.ID
	switch {
	case w.Of != "*" && a.keeps(w.Of):
		a.serve(ctx, w)
	case a.isRoot():
		a.route(ctx, w)
	default:
		a.signal(ctx, a.bus.rootID, TaskEvent{From: a.cfg.agentID, Want: &w})
	}
}

// route is the root's part: it hands a want to the producer's keeper, keeps
// it until a pending spawn happens, or refuses it.
func (a *agent) route(ctx workflow.Context, w Want) {
	if w.Of == "*" {
		a.bus.starWants = append(a.bus.starWants, w)
		for _, id := range append([]string{a.cfg.agentID}, a.memberIDs()...) {
			if id != w.Agent {
				one := w
				one.Of = id
				a.deliver(ctx, one)
			}
		}
		return
	}
	switch {
	case w.Of == a.cfg.agentID || a.bus.member(w.Of) != nil:
		a.deliver(ctx, w)
	case slices.Contains(a.bus.pending, w.Of) || a.maySpawn(false, w.Agent):
		// A spawn of this response, of the rest of the root's turn or of
		// a running agent of the tree may bring it.
		a.bus.pendingWants = append(a.bus.pendingWants, w)
	default:
		a.respond(ctx, w, TaskEvent{From: a.cfg.agentID, Refused: &AgentEnd{AgentID: w.Of, How: a.notInTree(w.Of)}})
	}
}

func (a *agent) notInTree(id string) string {
	return fmt.Sprintf("agent %q is not in this run tree and no spawn of it is pending (its agents are %s)", id, strings.Join(a.Known(), ", "))
}

// maySpawn reports whether an agent not in the tree yet may still appear
// for the agent asker, which waits for it: the root's turn runs (unless
// turnOver: it is ending), or another agent of the tree runs and may spawn
// it.
func (a *agent) maySpawn(turnOver bool, asker string) bool {
	if a.status == StatusRunning && !turnOver {
		return true
	}
	return slices.ContainsFunc(a.bus.roster, func(m *Member) bool { return m.Ended == "" && m.AgentID != asker })
}

// settleUnknown runs at the root when its turn stops running (its answer
// has no tool calls) and when an agent of the tree ends: once no agent can
// spawn them any more, the agents that its own dependencies and the wants
// it kept wait for cannot appear, so those dependencies fail, visibly,
// rather than wait for ever.
func (a *agent) settleUnknown(ctx workflow.Context, turnOver bool) {
	if !a.tree || !a.isRoot() {
		return
	}
	a.bus.pending = nil
	wants := a.bus.pendingWants
	a.bus.pendingWants = nil
	for _, w := range wants {
		switch {
		case w.Of == a.cfg.agentID || a.bus.member(w.Of) != nil:
			a.deliver(ctx, w)
		case a.maySpawn(turnOver, w.Agent):
			a.bus.pendingWants = append(a.bus.pendingWants, w)
		default:
			a.respond(ctx, w, TaskEvent{From: a.cfg.agentID, Refused: &AgentEnd{AgentID: w.Of, How: a.notInTree(w.Of)}})
		}
	}
	if a.maySpawn(turnOver, a.cfg.agentID) {
		return
	}
	for _, id := range a.plans.BlockedOn() {
		if id != a.cfg.agentID && a.bus.member(id) == nil && a.children[id] == nil {
			a.emit(ctx, a.plans.FailDependency(id, a.notInTree(id)))
		}
	}
}

// deliver hands a routed want to the keeper of its producer.
func (a *agent) deliver(ctx workflow.Context, w Want) {
	if a.keeps(w.Of) {
		a.serve(ctx, w)
		return
	}
	m := a.bus.member(w.Of)
	keeper := a.bus.member(m.Parent)
	if keeper == nil || keeper.Ended != "" {
		// The keeper is gone, so the producer is too; its events went with
		// its keeper's log.
		how := m.Ended
		if how == "" {
			how = "ended"
		}
		a.respond(ctx, w, TaskEvent{From: a.cfg.agentID, Gone: []AgentEnd{{AgentID: w.Of, How: how}}})
		return
	}
	a.signal(ctx, keeper.WorkflowID, TaskEvent{From: a.cfg.agentID, Want: &w})
}

// serve is the keeper's part: it records the interest, and answers with
// the producer's events the asker lacks, its binding and its end.
func (a *agent) serve(ctx workflow.Context, w Want) {
	if w.Agent == a.cfg.agentID {
		// This log holds the producer's events already.
		if w.Filter == nil {
			a.emit(ctx, a.plans.Bind(w.Of, laterPlan(w.MinPlan, a.plans.CurrentPlanOf(w.Of))))
		}
		return
	}
	var had []interest
	for _, in := range a.bus.interests {
		if in.Of == w.Of && in.Agent == w.Agent {
			had = append(had, in)
		}
	}
	in := interest{Of: w.Of, Agent: w.Agent, WorkflowID: w.WorkflowID, Filter: w.Filter}
	a.bus.interests = append(a.bus.interests, in)
	te := TaskEvent{From: a.cfg.agentID}
	from := ""
	if w.Filter == nil {
		from = laterPlan(w.MinPlan, a.plans.CurrentPlanOf(w.Of))
		te.Bind = &Binding{Of: w.Of, Plan: from}
	}
	for _, ev := range a.plans.EventsOf(w.Of, from) {
		if in.matches(ev) && !anyMatches(had, ev) {
			te.Backlog = append(te.Backlog, ev)
		}
	}
	if how, ok := a.gone[w.Of]; ok {
		te.Gone = []AgentEnd{{AgentID: w.Of, How: how}}
	}
	a.bus.countSent(w.Of, w.WorkflowID, len(te.Backlog))
	a.respond(ctx, w, te)
}

// respond sends te to the asker of w (or takes it in, when that is this
// agent).
func (a *agent) respond(ctx workflow.Context, w Want, te TaskEvent) {
	if w.Agent == a.cfg.agentID {
		a.onTaskEvent(ctx, te)
		return
	}
	a.signal(ctx, w.WorkflowID, te)
}

func (in interest) matches(ev todo.Event) bool {
	return ev.AgentID == in.Of && (in.Filter == nil || in.Filter.Matches(ev))
}

func anyMatches(ins []interest, ev todo.Event) bool {
	return slices.ContainsFunc(ins, func(in interest) bool { return in.matches(ev) })
}

// forward sends a producer's new event to every agent interested in it,
// once each.
func (a *agent) forward(ctx workflow.Context, ev todo.Event) {
	var sent []string
	for _, in := range a.bus.interests {
		if in.matches(ev) && !slices.Contains(sent, in.Agent) {
			sent = append(sent, in.Agent)
			a.bus.countSent(ev.AgentID, in.WorkflowID, 1)
			a.signal(ctx, in.WorkflowID, TaskEvent{From: a.cfg.agentID, Event: &ev})
		}
	}
}

// announceEnd tells the agents interested in a child that it ended, and
// the root (for its roster) when this agent is not the root.
//
// Temporal delivers the signals of one sender in no set order, so an end
// notice could overtake the events forwarded before it, and the receiver
// would fail a dependency that the producer did complete. Each notice says
// how many of the agent's events this keeper sent its receiver
// (AgentEnd.Sent), which waits for them (holdEnd).
func (a *agent) announceEnd(ctx workflow.Context, id, how string) {
	var sent []string
	end := func(workflowID string) *AgentEnd {
		e := &AgentEnd{AgentID: id, How: how}
		if a.treeOrder {
			e.Sent = a.bus.sent[sentKey(id, workflowID)]
		}
		return e
	}
	for _, in := range a.bus.interests {
		if in.Of == id && !slices.Contains(sent, in.Agent) {
			sent = append(sent, in.Agent)
			a.signal(ctx, in.WorkflowID, TaskEvent{From: a.cfg.agentID, Ended: end(in.WorkflowID)})
		}
	}
	if a.isRoot() {
		a.memberEnded(ctx, id, how)
		return
	}
	a.signal(ctx, a.bus.rootID, TaskEvent{From: a.cfg.agentID, Ended: end(a.bus.rootID)})
}

// memberEnded records in the root's roster that an agent ended, and settles
// what waited for agents that only it could still have spawned.
func (a *agent) memberEnded(ctx workflow.Context, id, how string) {
	if !a.isRoot() {
		return
	}
	if m := a.bus.member(id); m != nil {
		m.Ended = how
		a.settleUnknown(ctx, false)
	}
}

// join records a spawned agent in the root's roster and hands it the wants
// that waited for it and the subscriptions to every agent.
func (a *agent) join(ctx workflow.Context, m Member) {
	if a.bus.member(m.AgentID) == nil {
		mm := m
		a.bus.roster = append(a.bus.roster, &mm)
	}
	a.bus.pending = slices.DeleteFunc(a.bus.pending, func(id string) bool { return id == m.AgentID })
	var keep []Want
	for _, w := range a.bus.pendingWants {
		if w.Of == m.AgentID {
			a.deliver(ctx, w)
		} else {
			keep = append(keep, w)
		}
	}
	a.bus.pendingWants = keep
	for _, w := range a.bus.starWants {
		if w.Agent != m.AgentID {
			one := w
			one.Of = m.AgentID
			a.deliver(ctx, one)
		}
	}
}

func (a *agent) memberIDs() []string {
	ids := make([]string, len(a.bus.roster))
	for i, m := range a.bus.roster {
		ids[i] = m.AgentID
	}
	return ids
}

// flushEarly takes in, in their order, the signals of a child that has
// ended and still wait for one they follow: all its signals came before it
// ended, so none should; if one does, its news are not dropped.
func (a *agent) flushEarly(ctx workflow.Context, ch *child) {
	slices.SortFunc(ch.early, func(x, y TaskEvent) int { return x.Brief.Seq - y.Brief.Seq })
	early := ch.early
	ch.early = nil
	for _, te := range early {
		workflow.GetLogger(ctx).Warn("a subagent's task_event never came; taking in the ones after it", "from", te.From, "seq", te.Brief.Seq)
		a.takeTreeEvent(ctx, te)
		ch.seq = te.Brief.Seq
	}
}

// onTreeEvent takes in a task_event of the tree's bus.
func (a *agent) onTreeEvent(ctx workflow.Context, te TaskEvent) {
	if a.treeOrder && te.Brief != nil && te.Brief.Seq > 0 {
		// Numbered: a child's (only children send briefs).
		switch ch := a.children[te.From]; {
		case ch == nil:
			a.bus.unborn = append(a.bus.unborn, te) // see adopt
			return
		case !ch.Done:
			a.inOrder(ctx, ch, te)
			return
		}
	}
	a.takeTreeEvent(ctx, te)
}

// takeTreeEvent takes in one task_event, in its turn.
func (a *agent) takeTreeEvent(ctx workflow.Context, te TaskEvent) {
	ch := a.children[te.From]
	if te.Brief != nil && ch != nil && !ch.Done {
		ch.Brief = te.Brief
		a.forgetHanded()
	}
	handed := te.Resume != nil || te.Approve != nil || te.ApproveTool != nil
	switch {
	case handed && (a.isRoot() || te.From != DefaultAgentID):
		// Only the root hands a human's answer on (after its update's
		// validator took it); one sent straight to an agent as a signal
		// would skip that check.
		workflow.GetLogger(ctx).Warn("ignoring a human's answer that did not come from the root of the run tree", "from", te.From)
	case te.Finish != nil:
		a.onFinish(*te.Finish)
	case te.Resume != nil:
		a.onResume(ctx, ResumeArgs{Text: *te.Resume, AgentID: a.cfg.agentID})
	case te.Approve != nil && a.plans.AwaitingApproval && a.answer == nil:
		a.answer = &approval{approved: te.Approve.Approved != nil && *te.Approve.Approved, feedback: te.Approve.Feedback}
	case te.Approve != nil:
		workflow.GetLogger(ctx).Warn("ignoring a handed-on plan approval: no plan waits for one")
	case te.ApproveTool != nil:
		a.onHandedToolApproval(ctx, *te.ApproveTool)
	case te.Want != nil && a.isRoot():
		a.route(ctx, *te.Want)
	case te.Want != nil:
		a.serve(ctx, *te.Want)
	case te.Joined != nil && a.isRoot():
		a.join(ctx, *te.Joined)
	}
	for _, ev := range te.Backlog {
		a.receive(ctx, ev)
		a.bus.countGot(ev)
	}
	if te.Event != nil {
		a.receive(ctx, *te.Event)
		a.bus.countGot(*te.Event)
		if ch != nil && te.Event.AgentID == te.From {
			a.forward(ctx, *te.Event)
		}
	}
	if te.Bind != nil {
		a.emit(ctx, a.plans.Bind(te.Bind.Of, te.Bind.Plan))
	}
	if te.Refused != nil {
		a.emit(ctx, a.plans.FailDependency(te.Refused.AgentID, te.Refused.How))
	}
	ended := te.Gone
	if te.Ended != nil {
		ended = append(ended, *te.Ended)
	}
	for _, e := range ended {
		if !a.holdEnd(e) {
			a.takeEnd(ctx, e)
		}
	}
	a.releaseEnds(ctx)
	a.failEnded(ctx)
	a.askPeers(ctx)
	a.publish(ctx)
}

// takeEnd records that an agent of the tree ended, and fails what waited
// on it.
func (a *agent) takeEnd(ctx workflow.Context, e AgentEnd) {
	a.gone[e.AgentID] = e.How
	a.emit(ctx, a.plans.AgentEnded(e.AgentID, e.How))
	a.memberEnded(ctx, e.AgentID, e.How)
}

// holdEnd keeps an end notice that came before some of the events its
// keeper had sent (AgentEnd.Sent): until they come, the agent counts as
// live, and its end fails nothing.
func (a *agent) holdEnd(e AgentEnd) bool {
	if !a.treeOrder || e.Sent <= a.bus.got[e.AgentID] {
		return false
	}
	a.bus.held = append(a.bus.held, e)
	return true
}

// releaseEnds takes in the held end notices whose events have come.
func (a *agent) releaseEnds(ctx workflow.Context) {
	var still []AgentEnd
	for _, e := range a.bus.held {
		if e.Sent <= a.bus.got[e.AgentID] {
			a.takeEnd(ctx, e)
		} else {
			still = append(still, e)
		}
	}
	a.bus.held = still
}

// laterPlan is the later of two plan ids "plan_N" ("" is before any).
func laterPlan(p, q string) string {
	if planNumber(q) > planNumber(p) {
		return q
	}
	return p
}

func planNumber(id string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(id, "plan_"))
	if err != nil {
		return 0
	}
	return n
}

// brief is this agent's counters for its parent.
func (a *agent) brief() Brief {
	items := a.todo.List()
	b := Brief{
		Status:           a.status,
		Turns:            a.turns,
		ModelCalls:       a.modelCalls,
		TodosTotal:       len(items),
		TodosCompleted:   todo.CountStatus(items, todo.Completed),
		Paused:           a.todo.Paused,
		PauseReason:      a.todo.PauseReason,
		AwaitingApproval: a.plans.AwaitingApproval || a.toolWait != nil,
		ModelError:       a.modelError,
		Usage:            a.usage,
		TreeUsage:        a.treeUsage(),
		Waiting:          a.waiting(),
	}
	if cur, ok := todo.Current(items); ok {
		b.Current = shorten(cur.Content, 200)
	}
	if p := a.plans.Current(); p != nil {
		pr := todo.ComputeProgress(p.Steps)
		b.PlanID, b.PlanStatus, b.StepsTotal, b.StepsCompleted = p.PlanID, p.Status, pr.Total, pr.Completed
	}
	return b
}

// sendBrief tells the parent of a status change that came without an
// event (a pause, a wait, a subtree's wait), once per change.
func (a *agent) sendBrief(ctx workflow.Context) {
	if a.isRoot() || !a.tree {
		return
	}
	if a.bus.brief != nil && sameBrief(*a.bus.brief, a.brief()) {
		return
	}
	b := a.nextBrief()
	a.signal(ctx, a.parentID, TaskEvent{From: a.cfg.agentID, Brief: &b})
}

// nextBrief is the brief to send the parent now, numbered, and remembered
// as the last one sent.
func (a *agent) nextBrief() Brief {
	b := a.brief()
	if a.treeOrder {
		a.bus.briefs++
		b.Seq = a.bus.briefs
	}
	a.bus.brief = &b
	return b
}

// inOrder takes in a running child's numbered signal (an event with its
// brief, or a brief) in the order the child sent them: Temporal delivers one
// sender's signals in no set order (two sent in one workflow task included),
// so a signal that comes before one it follows waits in ch.early. Taken in
// out of order, an older brief would undo a pause or a wait a newer one
// showed, and the child's events would stand in another order in this log,
// in what reporters deliver and in what the model reads. Every numbered
// signal comes (the child waits for its signals before it ends), so none
// waits for ever.
func (a *agent) inOrder(ctx workflow.Context, ch *child, te TaskEvent) {
	if te.Brief.Seq <= ch.seq {
		workflow.GetLogger(ctx).Warn("ignoring a repeated task_event", "from", te.From, "seq", te.Brief.Seq)
		return
	}
	ch.early = append(ch.early, te)
	a.takeEarly(ctx, ch)
}

// takeEarly takes in the child's waiting signals that are next in turn.
func (a *agent) takeEarly(ctx workflow.Context, ch *child) {
	for {
		i := slices.IndexFunc(ch.early, func(e TaskEvent) bool { return e.Brief.Seq == ch.seq+1 })
		if i < 0 {
			return
		}
		next := ch.early[i]
		ch.early = slices.Delete(ch.early, i, i+1)
		a.takeTreeEvent(ctx, next)
		ch.seq = next.Brief.Seq
	}
}

// adopt takes in, in their order, the signals a child sent before this
// agent recorded it (a child can signal while its spawn waits for the
// server to say it started).
func (a *agent) adopt(ctx workflow.Context, ch *child) {
	if !a.treeOrder {
		return
	}
	a.bus.unborn = slices.DeleteFunc(a.bus.unborn, func(te TaskEvent) bool {
		if te.From == ch.AgentID {
			ch.early = append(ch.early, te)
			return true
		}
		return false
	})
	a.takeEarly(ctx, ch)
}

// sameBrief compares what a parent shows without an event: the status and
// the waits (the counters go with the next event).
func sameBrief(x, y Brief) bool {
	return x.Status == y.Status && slices.Equal(x.Waiting, y.Waiting) && x.Paused == y.Paused && x.AwaitingApproval == y.AwaitingApproval
}

// waiting lists the human waits of this agent's subtree, its own first.
func (a *agent) waiting() []Wait {
	var ws []Wait
	switch {
	case a.todo.Paused && len(a.inbox) == 0:
		ws = append(ws, Wait{AgentID: a.cfg.agentID, Kind: WaitPaused, Reason: a.todo.PauseReason})
	case a.plans.AwaitingApproval && a.answer == nil:
		ws = append(ws, Wait{AgentID: a.cfg.agentID, Kind: WaitPlanApproval, Reason: a.plans.ApprovalMessage})
	case a.toolWait != nil && a.toolAnswer == nil:
		ws = append(ws, Wait{AgentID: a.cfg.agentID, Kind: WaitToolApproval, Reason: a.toolWait.reason(), CallID: a.toolWait.CallID})
	}
	for _, id := range a.childOrder {
		if ch := a.children[id]; !ch.Done && ch.Brief != nil {
			for _, w := range ch.Brief.Waiting {
				if !slices.Contains(a.bus.handed, w) {
					ws = append(ws, w)
				}
			}
		}
	}
	return ws
}

// forgetHanded drops the handed-on answers whose waits are over.
func (a *agent) forgetHanded() {
	a.bus.handed = slices.DeleteFunc(a.bus.handed, func(w Wait) bool {
		for _, id := range a.childOrder {
			if ch := a.children[id]; !ch.Done && ch.Brief != nil && slices.Contains(ch.Brief.Waiting, w) {
				return false
			}
		}
		return true
	})
}

// carryTree is the bus state for the continuation.
func (a *agent) carryTree() *TreeCarry {
	if !a.tree {
		return nil
	}
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

// state is a running child's entry in state.subagents: its counters (Live),
// its status and its waits; the child's own state query answers the rest.
func (b *Brief) state(id string) State {
	return State{
		AgentID:          id,
		Status:           b.Status,
		Turns:            b.Turns,
		ModelCalls:       b.ModelCalls,
		Todos:            []todo.Item{},
		Events:           []todo.Event{},
		Subagents:        map[string]State{},
		Reporters:        []ReporterStatus{},
		Paused:           b.Paused,
		PauseReason:      b.PauseReason,
		AwaitingApproval: b.AwaitingApproval,
		ModelError:       b.ModelError,
		Usage:            b.Usage,
		TreeUsage:        b.TreeUsage,
		Waiting:          b.Waiting,
		Live:             b,
	}
}

// shownStatus is the status the root shows: a human wait anywhere in its
// tree, when it does not wait for a human itself, is its status too, so
// that a user (or a scenario) sees where the tree stands.
func (a *agent) shownStatus() string {
	switch a.status {
	case StatusPaused, StatusAwaitingApproval, StatusCompleted, StatusFailed:
		return a.status
	}
	if !a.isRoot() {
		return a.status
	}
	for _, w := range a.waiting() {
		switch w.Kind {
		case WaitPaused:
			return StatusPaused
		case WaitPlanApproval, WaitToolApproval:
			return StatusAwaitingApproval
		}
	}
	return a.status
}

// waitFor picks the wait of the tree a human's answer is for: the one of
// agentID, or the only one of that kind.
func (a *agent) waitFor(kind, agentID string) (Wait, error) {
	var match []Wait
	for _, w := range a.waiting() {
		if w.Kind == kind && (agentID == "" || w.AgentID == agentID) {
			match = append(match, w)
		}
	}
	switch {
	case len(match) == 1:
		return match[0], nil
	case len(match) > 1:
		ids := make([]string, len(match))
		for i, w := range match {
			ids[i] = w.AgentID
		}
		return Wait{}, fmt.Errorf("agents %s all wait for this; name one with agent_id", strings.Join(ids, ", "))
	case agentID != "":
		return Wait{}, fmt.Errorf("agent %q does not wait for this", agentID)
	}
	return Wait{}, fmt.Errorf("no agent of this run tree waits for this")
}

// handOn sends a human's answer to the agent of the tree it is for.
func (a *agent) handOn(ctx workflow.Context, agentID string, te TaskEvent) error {
	wfID := ""
	if m := a.bus.member(agentID); m != nil && m.Ended == "" {
		wfID = m.WorkflowID
	}
	if wfID == "" {
		return fmt.Errorf("agent %q is not running in this run tree", agentID)
	}
	te.From = a.cfg.agentID
	a.signal(ctx, wfID, te)
	return nil
}

// finishChildren asks the running children to finish, waits for them for
// subagent_grace_s, and cancels those still running.
func (a *agent) finishChildren(ctx workflow.Context) error {
	grace := int(a.cfg.subagentGrace / time.Second)
	for _, id := range a.childOrder {
		if ch := a.children[id]; !ch.Done && !ch.finishAsked {
			ch.finishAsked = true
			a.signal(ctx, ch.WorkflowID, TaskEvent{From: a.cfg.agentID, Finish: &grace})
		}
	}
	done, err := a.awaitOrTimeout(ctx, a.cfg.subagentGrace, "subagent grace", func() bool { return a.runningChildren() == 0 })
	if err != nil || done {
		return err
	}
	for _, id := range a.childOrder {
		if ch := a.children[id]; !ch.Done {
			a.stop(ch, fmt.Sprintf("the session ended and it did not finish within subagent_grace_s (%ds)", grace))
		}
	}
	return nil
}

// onFinish is a parent's request to finish: the model hears it before its
// next call, and the agent's own children are asked in turn when it winds
// down.
func (a *agent) onFinish(grace int) {
	a.ended = true
	a.finishNote = fmt.Sprintf("The session that started you is ending: you have %d seconds left before you are stopped. "+
		"Finish now: complete, fail or skip your remaining steps with what you have, and give your final answer.", grace)
}

// stop cancels a running child.
func (a *agent) stop(ch *child, why string) {
	if ch.why == "" {
		ch.why = why
	}
	ch.cancel()
}

// CancelArgs are the arguments of cancel_subagent.
type CancelArgs struct {
	AgentID string `json:"agent_id"`
	Reason  string `json:"reason,omitempty"`
}

// cancelSubagent is the cancel_subagent tool: a parent stops one of its
// children; the steps that wait on it fail once it has stopped.
func (a *agent) cancelSubagent(c model.ToolCall) todo.Result {
	var args CancelArgs
	dec := json.NewDecoder(bytes.NewReader(c.Arguments))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&args); err != nil {
		return todo.Result{IsError: true, Content: fmt.Sprintf(`cancel_subagent takes {"agent_id": "...", "reason"?: "..."}: %v`, err)}
	}
	ch := a.children[args.AgentID]
	switch {
	case ch == nil && len(a.childOrder) == 0:
		return todo.Result{IsError: true, Content: fmt.Sprintf("you have no subagent %q: you have not spawned any", args.AgentID)}
	case ch == nil:
		return todo.Result{IsError: true, Content: fmt.Sprintf("you have no subagent %q; yours are %s (you can only cancel your own)", args.AgentID, strings.Join(a.childOrder, ", "))}
	case ch.Done:
		return todo.Result{IsError: true, Content: fmt.Sprintf("subagent %q has already ended (%s)", args.AgentID, a.gone[args.AgentID])}
	}
	why := strings.TrimSpace(args.Reason)
	if why == "" {
		why = "cancelled by its parent"
	}
	a.stop(ch, why)
	return todo.Result{Content: fmt.Sprintf("Subagent %q is being cancelled. The steps that wait on it fail once it has stopped; its final state is kept.", args.AgentID)}
}
