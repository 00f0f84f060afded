package workflows

// Routing at the root: who joins and who ended, wants answered from the
// root's log, events forwarded to the agents that want them. The decisions
// are todo.Broker's; this file sends what they say.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/todo"
)

// Peer is todo.Peers for addDependentStep: at the root, whose log has every
// event, an agent of the tree is bound at once; anywhere else the root is
// asked (settleUnknown). Only an id that cannot name an agent is refused.
func (a *agent) Peer(id string) todo.PeerKind {
	switch {
	case api.CheckAgentID(id) != nil:
		return todo.PeerUnknown
	case a.isRoot() && a.inTree(id):
		return todo.PeerLocal
	}
	return todo.PeerRemote
}

// Known lists the agents of the tree this agent knows, for a refusal.
func (a *agent) Known() []string {
	ids := append([]string{a.cfg.AgentID}, a.tree.childOrder...)
	for _, m := range a.tree.Members {
		ids = append(ids, m.AgentID)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

func (a *agent) inTree(id string) bool {
	return id == a.cfg.AgentID || a.tree.Member(id) != nil || a.tree.children[id] != nil
}

// maySpawn reports whether an agent not in the tree yet may still appear
// for asker: the root's turn runs (unless turnOver), or another agent does.
func (a *agent) maySpawn(turnOver bool, asker string) bool {
	return (a.status == api.StatusRunning && !turnOver) || a.tree.MaySpawn(asker)
}

func (a *agent) onJoin(ctx workflow.Context, m todo.Member) {
	for _, w := range a.tree.Join(m) {
		a.serve(ctx, w)
	}
}

// route answers a want, keeps it until its producer joins, or refuses it.
func (a *agent) route(ctx workflow.Context, w todo.Want) {
	switch {
	case w.Drop && w.Filter != nil:
		a.tree.Drop(w.Agent, w.Filter.ID)
	case w.Of == "*" || a.inTree(w.Of):
		a.serve(ctx, w)
	case a.maySpawn(false, w.Agent):
		a.tree.Pending = append(a.tree.Pending, w)
	default:
		a.refuse(ctx, w)
	}
}

// serve answers a want from the root's log (the root's own is a binding).
func (a *agent) serve(ctx workflow.Context, w todo.Want) {
	ans := a.tree.Serve(w, a.plans)
	switch {
	case w.Agent == a.cfg.AgentID:
		if ans.Bind != nil {
			a.emit(ctx, a.plans.Bind(w.Of, *ans.Bind))
		}
		return
	case len(ans.Backlog) > 0 || ans.Bind != nil:
		a.send(ctx, w.WorkflowID, api.TaskEventSignal, Events{Of: w.Of, Events: ans.Backlog, Bind: ans.Bind})
	}
	if ans.Gone != "" {
		a.send(ctx, w.WorkflowID, EndSignal, End{AgentID: w.Of, How: ans.Gone})
	}
}

// refuse tells the asker that the agent it wants cannot appear any more.
func (a *agent) refuse(ctx workflow.Context, w todo.Want) {
	how := fmt.Sprintf("agent %q is not in this run tree and no spawn of it is pending (its agents are %s)", w.Of, strings.Join(a.Known(), ", "))
	if end := (End{AgentID: w.Of, How: how, Never: true}); w.Agent != a.cfg.AgentID {
		a.send(ctx, w.WorkflowID, EndSignal, end)
	} else {
		a.takeEnd(ctx, end)
	}
}

// forward sends an agent's new events to each agent that wants them, in one
// message each, and its counters to its parent unless that is the root.
func (a *agent) forward(ctx workflow.Context, of string, events []todo.Event, brief *api.Brief) {
	var to []string
	msgs := map[string]*Events{}
	at := func(wf string) *Events {
		if msgs[wf] == nil {
			to, msgs[wf] = append(to, wf), &Events{Of: of}
		}
		return msgs[wf]
	}
	for _, ev := range events {
		for _, in := range a.tree.Deliveries(ev) {
			at(in.WorkflowID).Events = append(at(in.WorkflowID).Events, ev)
		}
	}
	if m := a.tree.Member(of); brief != nil && m != nil && m.Parent != a.tree.rootID {
		if p := slices.IndexFunc(a.tree.Members, func(p todo.Member) bool { return p.WorkflowID == m.Parent }); p >= 0 && a.tree.Members[p].Ended == "" {
			at(m.Parent).Brief = brief
		}
	}
	for _, wf := range to {
		a.send(ctx, wf, api.TaskEventSignal, *msgs[wf])
	}
}

// endAtRoot records that an agent ended (its own last message, or its
// parent's word): those that wanted its events are told, after them; it
// leaves every table and its outbox; its running children, cancelled with
// it, end too; and what waited for agents only it could spawn is settled.
func (a *agent) endAtRoot(ctx workflow.Context, e End) {
	tell, orphans, first := a.tree.End(e.AgentID, e.How)
	if !first {
		return
	}
	m := a.tree.Member(e.AgentID)
	a.purge(m.WorkflowID)
	a.takeEnd(ctx, e)
	delete(a.tree.briefs, e.AgentID)
	for _, in := range tell {
		a.send(ctx, in.WorkflowID, EndSignal, e)
	}
	// Its parent below the root learns it too: a parent that adopted it
	// from an earlier run has no future to learn it from.
	if p := m.Parent; p != "" && p != a.tree.rootID && !slices.ContainsFunc(tell, func(w todo.Want) bool { return w.WorkflowID == p }) {
		a.send(ctx, p, EndSignal, e)
	}
	for _, id := range orphans {
		a.endAtRoot(ctx, End{AgentID: id, How: fmt.Sprintf("cancelled: its parent %s ended (%s)", e.AgentID, e.How)})
	}
	a.settleUnknown(ctx, false)
}

// settleUnknown runs at the root when its turn stops running (turnOver) and
// when an agent ends: pending wants whose producer joined are served, those
// no one can spawn any more are refused, visibly, rather than wait for ever.
func (a *agent) settleUnknown(ctx workflow.Context, turnOver bool) {
	if !a.isRoot() {
		return
	}
	serve, refuse := a.tree.Settle(a.inTree, func(asker string) bool { return a.maySpawn(turnOver, asker) })
	for _, w := range serve {
		a.serve(ctx, w)
	}
	for _, w := range refuse {
		a.refuse(ctx, w)
	}
}
