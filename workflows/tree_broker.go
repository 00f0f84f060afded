package workflows

// The broker of the tree's bus: wants routed by the root to the keeper of
// a producer's events, and events forwarded to the agents interested.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/todo"
)

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
	// Subscriptions are numbered in the order they were made, and an
	// unsubscribe removes one from the list: what is new is what has a
	// number past the last one asked for, not what stands past a count.
	for _, s := range a.plans.Subscriptions {
		if s.Number() <= a.bus.subs {
			continue
		}
		of := s.AgentID
		if of == "" {
			of = "*"
		}
		a.ask(ctx, Want{Of: of, Filter: &s})
	}
	a.bus.subs = a.plans.SubscriptionCount
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
	if !a.isRoot() {
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
	if r := (route{Asker: w.Agent, Keeper: keeper.WorkflowID}); !slices.Contains(a.bus.routed, r) {
		a.bus.routed = append(a.bus.routed, r)
	}
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
