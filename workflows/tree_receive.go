package workflows

// Taking in the tree's messages.

import (
	"encoding/json"
	"slices"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/workflow"
)

func (a *agent) treeLen() int {
	b := &a.tree.bus
	return b.join.Len() + b.want.Len() + b.events.Len() + b.end.Len() + b.hand.Len()
}

// drainTree takes in the tree's messages already delivered. Those that
// reach a run in one workflow task lose their order across signal names, so
// they are taken in kind by kind, in the order that matters: a member's
// join before anything else of it, an agent's events before its end.
func (a *agent) drainTree(ctx workflow.Context) {
	n, root := a.treeLen(), a.isRoot() // only the root takes joins and wants
	drain(a.tree.join, func(m Join) {
		if a.heard(ctx, JoinSignal, m.Protocol, m.Key) && root {
			a.onJoin(ctx, m.Member)
		}
	})
	drain(a.tree.want, func(w Ask) {
		if a.heard(ctx, WantSignal, w.Protocol, w.Key) && root {
			a.route(ctx, w.Want)
		}
	})
	drain(a.tree.events, func(e Events) {
		if a.heard(ctx, api.TaskEventSignal, e.Protocol, e.Key) {
			a.onEvents(ctx, e)
		}
	})
	drain(a.tree.end, func(e End) {
		if a.heard(ctx, EndSignal, e.Protocol, e.Key) {
			a.onEnd(ctx, e)
		}
	})
	drain(a.tree.hand, func(h Handed) {
		if a.heard(ctx, HandSignal, h.Protocol, h.Key) {
			a.onHanded(ctx, h)
		}
	})
	if n > 0 {
		a.failEnded(ctx)
		a.askPeers(ctx)
		a.publish(ctx)
	}
}

// heard reports whether a tree message is taken in: one without the tree's
// key is dropped (tree_key.go). It logs one of another protocol, taken as
// it came: what it lacks is zero, what this build does not know was
// ignored (tree messages are decoded leniently, and a sender of another
// protocol is refused its own history by its worker, not here).
func (a *agent) heard(ctx workflow.Context, signal string, p int, key string) bool {
	if !a.proven(ctx, signal, key) {
		return false
	}
	if p != api.Protocol {
		workflow.GetLogger(ctx).Warn("a tree message of another protocol", "signal", signal, "protocol", p, "this_protocol", api.Protocol)
	}
	return true
}

func drain[T any](ch workflow.ReceiveChannel, take func(T)) {
	for {
		var v T
		if !ch.ReceiveAsync(&v) {
			return
		}
		take(v)
	}
}

// onEvents takes in another agent's events, the binding that answers a
// want, and its counters; at the root, a member's own, then forwards them.
// Each event joins this agent's log, is reported as logged here (with this
// log's event_id, so that a reporter's idempotency key never collides with
// this agent's own events), and what it resolved is emitted.
func (a *agent) onEvents(ctx workflow.Context, e Events) {
	for _, ev := range e.Events {
		n := len(a.plans.Events)
		own := a.plans.Receive(ev)
		if len(a.plans.Events) > n {
			plan, _ := json.Marshal(a.plans.Current())
			a.reporters.report(a.plans.Events[n], plan)
		}
		a.emit(ctx, own)
	}
	if e.Bind != nil {
		a.emit(ctx, a.plans.Bind(e.Of, *e.Bind))
	}
	if e.Brief != nil {
		a.tree.briefs[e.Of] = e.Brief
		a.forgetHanded()
	}
	if a.isRoot() {
		a.forward(ctx, e.Of, e.Events, e.Brief)
	}
}

func (a *agent) onEnd(ctx workflow.Context, e End) {
	// A child cancelled by this agent says only "cancelled"; its parent
	// knows why, and says so to the steps that waited on it.
	if ch := a.tree.children[e.AgentID]; ch != nil && ch.why != "" && e.How == "cancelled" {
		e.How += ": " + ch.why
	}
	if a.isRoot() {
		a.endAtRoot(ctx, e)
	} else {
		a.takeEnd(ctx, e)
	}
}

// takeEnd fails what waited on an agent that ended, or that can never
// appear (then a later dependency on it asks again).
func (a *agent) takeEnd(ctx workflow.Context, e End) {
	if e.Never {
		a.tree.asked = slices.DeleteFunc(a.tree.asked, func(id string) bool { return id == e.AgentID })
		a.emit(ctx, a.plans.FailDependency(e.AgentID, e.How))
		return
	}
	a.tree.gone[e.AgentID] = e.How
	a.adoptedEnded(e)
	a.emit(ctx, a.plans.AgentEnded(e.AgentID, e.How))
}

// failEnded fails the steps that wait on agents known to have ended: a
// dependency added after its agent ended would wait for ever.
func (a *agent) failEnded(ctx workflow.Context) {
	for _, id := range a.plans.BlockedOn() {
		if how, ok := a.tree.gone[id]; ok {
			a.emit(ctx, a.plans.AgentEnded(id, how))
		}
	}
}
