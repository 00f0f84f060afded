package workflows

// Taking in the tree's messages.

import (
	"encoding/json"
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/todo"
)

// treeLen counts the tree's messages delivered and not taken in yet.
func (a *agent) treeLen() int {
	b := &a.bus
	return b.join.Len() + b.want.Len() + b.events.Len() + b.end.Len() + b.hand.Len()
}

// drainTree takes in the tree's messages already delivered. Each sender's
// messages to this run come in the order they were sent (flush), but those
// of one workflow task reach the channels together, and across channels
// their order is lost. So they are taken in kind by kind, in an order that
// keeps each sender's order where it matters: at the root, a member's join
// before anything else of it, and its events before its end; at any agent,
// a producer's events (and the binding that answers a want) before the
// news that it ended. The kinds are otherwise independent: a want concerns
// another agent's events than the asker's own, a hand-on this agent's own
// wait.
func (a *agent) drainTree(ctx workflow.Context) {
	took := false
	for {
		var m todo.Member
		if !a.bus.join.ReceiveAsync(&m) {
			break
		}
		took = true
		if a.isRoot() {
			a.onJoin(ctx, m)
		}
	}
	for {
		var w todo.Want
		if !a.bus.want.ReceiveAsync(&w) {
			break
		}
		took = true
		if a.isRoot() {
			a.route(ctx, w)
		}
	}
	for {
		var e Events
		if !a.bus.events.ReceiveAsync(&e) {
			break
		}
		took = true
		a.onEvents(ctx, e)
	}
	for {
		var e End
		if !a.bus.end.ReceiveAsync(&e) {
			break
		}
		took = true
		a.onEnd(ctx, e)
	}
	for {
		var h Handed
		if !a.bus.hand.ReceiveAsync(&h) {
			break
		}
		took = true
		a.onHanded(ctx, h)
	}
	if took {
		a.failEnded(ctx)
		a.askPeers(ctx)
		a.publish(ctx)
	}
}

// onEvents takes in the events of another agent (at the root: a member's
// own), its binding, and its counters.
func (a *agent) onEvents(ctx workflow.Context, e Events) {
	if a.isRoot() {
		a.eventsAtRoot(ctx, e)
		return
	}
	for _, ev := range e.Events {
		a.receive(ctx, ev)
	}
	if e.Bind != nil {
		a.emit(ctx, a.plans.Bind(e.Of, *e.Bind))
	}
	if e.Brief != nil {
		a.bus.briefs[e.Of] = e.Brief
	}
}

// onEnd takes in the end of an agent whose events this one wanted (at the
// root: of any agent of the tree).
func (a *agent) onEnd(ctx workflow.Context, e End) {
	if a.isRoot() {
		a.endAtRoot(ctx, e)
		return
	}
	a.takeEnd(ctx, e)
}

// takeEnd fails what waited on an agent that ended, or that can never
// appear (then a later dependency on it asks again).
func (a *agent) takeEnd(ctx workflow.Context, e End) {
	if e.Never {
		a.bus.asked = slices.DeleteFunc(a.bus.asked, func(id string) bool { return id == e.AgentID })
		a.emit(ctx, a.plans.FailDependency(e.AgentID, e.How))
		return
	}
	a.gone[e.AgentID] = e.How
	a.emit(ctx, a.plans.AgentEnded(e.AgentID, e.How))
}

// onHanded takes a parent's request to finish, or a human's answer that
// only the root hands on (after its update's validator took it): one sent
// straight to an agent would skip that check.
func (a *agent) onHanded(ctx workflow.Context, h Handed) {
	switch {
	case h.Finish != nil:
		a.onFinish(*h.Finish)
	case a.isRoot() || h.From != DefaultAgentID:
		workflow.GetLogger(ctx).Warn("ignoring a human's answer that did not come from the root of the run tree", "from", h.From)
	case h.Resume != nil:
		a.onResume(ctx, ResumeArgs{Text: *h.Resume, AgentID: a.cfg.agentID})
	case h.Approve != nil && a.plans.AwaitingApproval && a.answer == nil:
		a.answer = &approval{approved: h.Approve.Approved != nil && *h.Approve.Approved, feedback: h.Approve.Feedback}
	case h.Approve != nil:
		workflow.GetLogger(ctx).Warn("ignoring a handed-on plan approval: no plan waits for one")
	case h.ApproveTool != nil:
		a.onHandedToolApproval(ctx, *h.ApproveTool)
	}
}

// receive records another agent's event in this agent's log, reports it as
// logged here (with this log's event_id, so that a reporter's idempotency
// key never collides with this agent's own events) and emits what it
// resolved.
func (a *agent) receive(ctx workflow.Context, ev todo.Event) {
	n := len(a.plans.Events)
	own := a.plans.Receive(ev)
	if len(a.plans.Events) > n {
		plan, _ := json.Marshal(a.plans.Current())
		a.report(a.plans.Events[n], plan)
	}
	a.emit(ctx, own)
}

// failEnded fails the steps that wait on agents already known to have
// ended: a dependency added after its agent ended would otherwise wait for
// an event that can no longer come.
func (a *agent) failEnded(ctx workflow.Context) {
	for _, id := range a.plans.BlockedOn() {
		if how, ok := a.gone[id]; ok {
			a.emit(ctx, a.plans.AgentEnded(id, how))
		}
	}
}
