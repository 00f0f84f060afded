package workflows

// The root's part of the tree: it records who joins and who ended, answers
// wants from its log, and forwards each event to the agents interested
// (the decisions are todo.Broker's; this file sends what they say).

import (
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/todo"
)

// Peer is todo.Peers for addDependentStep. The root's log holds every event
// of the tree, so at the root an agent of the tree (or a child whose join is
// on its way) is bound at once; anywhere else the root is asked. An agent
// that is not in the tree yet may still be spawned: the dependency waits
// for it, and fails once no one can spawn it any more (settleUnknown). Only
// an id that cannot name an agent is refused at once.
func (a *agent) Peer(id string) todo.PeerKind {
	switch {
	case !agentIDPattern.MatchString(id):
		return todo.PeerUnknown
	case a.isRoot() && a.inTree(id):
		return todo.PeerLocal
	}
	return todo.PeerRemote
}

// Known lists the agents of the tree the root knows, for a refusal.
func (a *agent) Known() []string {
	ids := append([]string{a.cfg.agentID}, a.childOrder...)
	for _, m := range a.bus.Members {
		ids = append(ids, m.AgentID)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// inTree reports whether the root knows agent id: itself, an agent that
// joined, or one of its own children.
func (a *agent) inTree(id string) bool {
	return id == a.cfg.agentID || a.bus.Member(id) != nil || a.children[id] != nil
}

// maySpawn reports whether an agent not in the tree yet may still appear
// for the agent asker, which waits for it: the root's turn runs (unless
// turnOver: it is ending), or another agent of the tree runs.
func (a *agent) maySpawn(turnOver bool, asker string) bool {
	return (a.status == StatusRunning && !turnOver) || a.bus.MaySpawn(asker)
}

func (a *agent) notInTree(id string) string {
	return fmt.Sprintf("agent %q is not in this run tree and no spawn of it is pending (its agents are %s)", id, strings.Join(a.Known(), ", "))
}

// onJoin records an agent that started, and serves the wants that waited
// for it.
func (a *agent) onJoin(ctx workflow.Context, m todo.Member) {
	for _, w := range a.bus.Join(m) {
		a.serve(ctx, w)
	}
}

// route decides a want: answered, kept until its producer joins, or
// refused.
func (a *agent) route(ctx workflow.Context, w todo.Want) {
	switch a.bus.Route(w, a.inTree(w.Of), a.maySpawn(false, w.Agent)) {
	case todo.Serve:
		a.serve(ctx, w)
	case todo.Refuse:
		a.refuse(ctx, w)
	}
}

// serve answers a want from the root's log: the binding of a dependency,
// the backlog the asker lacks, and the producer's end when it has ended.
// The root's own want is a binding only.
func (a *agent) serve(ctx workflow.Context, w todo.Want) {
	ans := a.bus.Serve(w, a.plans)
	if w.Agent == a.cfg.agentID {
		if ans.Bind != nil {
			a.emit(ctx, a.plans.Bind(w.Of, *ans.Bind))
		}
		return
	}
	if len(ans.Backlog) > 0 || ans.Bind != nil {
		a.send(ctx, w.WorkflowID, TaskEventSignal, Events{Of: w.Of, Events: ans.Backlog, Bind: ans.Bind})
	}
	if ans.Gone != "" {
		a.send(ctx, w.WorkflowID, EndSignal, End{AgentID: w.Of, How: ans.Gone})
	}
}

// refuse tells the asker that the agent it wants cannot appear any more.
func (a *agent) refuse(ctx workflow.Context, w todo.Want) {
	end := End{AgentID: w.Of, How: a.notInTree(w.Of), Never: true}
	if w.Agent == a.cfg.agentID {
		a.takeEnd(ctx, end)
		return
	}
	a.send(ctx, w.WorkflowID, EndSignal, end)
}

// eventsAtRoot takes in an agent's own events and counters: into the
// tree's log, then on to whoever wants them.
func (a *agent) eventsAtRoot(ctx workflow.Context, e Events) {
	for _, ev := range e.Events {
		a.receive(ctx, ev)
	}
	a.forward(ctx, e.Of, e.Events, e.Brief)
	if e.Brief != nil {
		a.bus.briefs[e.Of] = e.Brief
		a.forgetHanded()
	}
}

// forward sends an agent's new events to every agent interested in them,
// in one message each, and its counters to its parent when that is not the
// root.
func (a *agent) forward(ctx workflow.Context, of string, events []todo.Event, brief *Brief) {
	var to []string
	msgs := map[string]*Events{} // by workflow, looked up; to gives the order
	at := func(wf string) *Events {
		if msgs[wf] == nil {
			to = append(to, wf)
			msgs[wf] = &Events{Of: of}
		}
		return msgs[wf]
	}
	for _, ev := range events {
		for _, in := range a.bus.Deliveries(ev) {
			e := at(in.WorkflowID)
			e.Events = append(e.Events, ev)
		}
	}
	if m := a.bus.Member(of); brief != nil && m != nil && m.Parent != a.bus.rootID {
		if p := slices.IndexFunc(a.bus.Members, func(p todo.Member) bool { return p.WorkflowID == m.Parent }); p >= 0 && a.bus.Members[p].Ended == "" {
			at(m.Parent).Brief = brief
		}
	}
	for _, wf := range to {
		a.send(ctx, wf, TaskEventSignal, *msgs[wf])
	}
}

// endAtRoot records that an agent ended (its own last message, or its
// parent's word): the agents that wanted its events are told, after them;
// it leaves every table and nothing more is sent to it; its running
// children, cancelled with it, end too; and what waited for agents that
// only it could still have spawned is settled.
func (a *agent) endAtRoot(ctx workflow.Context, e End) {
	tell, orphans, first := a.bus.End(e.AgentID, e.How)
	if !first {
		return
	}
	if m := a.bus.Member(e.AgentID); m.WorkflowID != "" {
		a.purge(m.WorkflowID)
	}
	delete(a.bus.briefs, e.AgentID)
	a.takeEnd(ctx, e)
	for _, in := range tell {
		a.send(ctx, in.WorkflowID, EndSignal, e)
	}
	for _, id := range orphans {
		a.endAtRoot(ctx, End{AgentID: id, How: fmt.Sprintf("cancelled: its parent %s ended (%s)", e.AgentID, e.How)})
	}
	a.settleUnknown(ctx, false)
}

// settleUnknown runs at the root when its turn stops running (its answer
// has no tool calls) and when an agent of the tree ends: the wants whose
// producer joined are served, and those for agents that no one can spawn
// any more fail, visibly, rather than wait for ever.
func (a *agent) settleUnknown(ctx workflow.Context, turnOver bool) {
	if !a.isRoot() {
		return
	}
	serve, refuse := a.bus.Settle(a.inTree, func(asker string) bool { return a.maySpawn(turnOver, asker) })
	for _, w := range serve {
		a.serve(ctx, w)
	}
	for _, w := range refuse {
		a.refuse(ctx, w)
	}
}

// handOn sends a human's answer to the agent of the tree it is for.
func (a *agent) handOn(ctx workflow.Context, agentID string, h Handed) error {
	m := a.bus.Member(agentID)
	if m == nil || m.Ended != "" {
		return fmt.Errorf("agent %q is not running in this run tree", agentID)
	}
	h.From = a.cfg.agentID
	a.send(ctx, m.WorkflowID, HandSignal, h)
	return nil
}
