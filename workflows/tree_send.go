package workflows

// Sending: what an agent tells the root, through outboxes that keep each
// destination's messages in the order they were sent.

import (
	"encoding/json"
	"errors"
	"slices"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/todo"
)

// outbox holds one destination's messages not delivered yet; busy while its
// coroutine sends them.
type outbox struct {
	queue []outgoing
	busy  bool
}

type outgoing struct {
	name string
	arg  any
}

// send queues a message for the workflow to. Events too many for one
// signal (a plan of many steps, a long backlog) go as several, in order,
// the counters and the binding with the last.
func (a *agent) send(ctx workflow.Context, to, name string, arg any) {
	if e, ok := arg.(Events); ok {
		if parts := todo.Batches(e.Events, signalEventsBudget); len(parts) > 1 {
			for _, p := range parts[:len(parts)-1] {
				a.queue(ctx, to, name, a.stamped(Events{Of: e.Of, Events: p}))
			}
			e.Events = parts[len(parts)-1]
			arg = e
		}
	}
	a.queue(ctx, to, name, a.stamped(arg))
}

// stamped is a tree message that says this build's protocol, with the
// tree's key.
func (a *agent) stamped(arg any) any {
	key := a.tree.key
	switch m := arg.(type) {
	case Events:
		m.Protocol, m.Key = api.Protocol, key
		return m
	case End:
		m.Protocol, m.Key = api.Protocol, key
		return m
	case Handed:
		m.Protocol, m.Key = api.Protocol, key
		return m
	case todo.Member:
		return Join{Member: m, Protocol: api.Protocol, Key: key}
	case todo.Want:
		return Ask{Want: m, Protocol: api.Protocol, Key: key}
	}
	return arg
}

func (a *agent) queue(ctx workflow.Context, to, name string, arg any) {
	if a.tree.out == nil {
		a.tree.out = map[string]*outbox{}
	}
	ob := a.tree.out[to]
	if ob == nil {
		ob = &outbox{}
		a.tree.out[to] = ob
	}
	ob.queue = append(ob.queue, outgoing{name, arg})
	a.tree.unsent++
	if !ob.busy {
		ob.busy = true
		workflow.Go(ctx, func(ctx workflow.Context) { a.flush(ctx, to, ob) })
	}
}

// flush signals the outbox's messages one at a time, each once the one
// before it was delivered: Temporal orders one sender's signals to one
// receiver only so. A receiver that is gone is logged, not fatal.
func (a *agent) flush(ctx workflow.Context, to string, ob *outbox) {
	for len(ob.queue) > 0 {
		m := ob.queue[0]
		ob.queue = ob.queue[1:]
		err := workflow.SignalExternalWorkflow(ctx, to, "", m.name, m.arg).Get(ctx, nil)
		a.tree.unsent--
		if err != nil {
			workflow.GetLogger(ctx).Warn("tree message not delivered", "to", to, "signal", m.name, "error", err)
		}
		if gone := new(temporal.UnknownExternalWorkflowExecutionError); errors.As(err, &gone) && to == a.tree.rootID && !a.isRoot() {
			// The root has ended without cancelling this agent (it was
			// terminated): no one will read this agent's work, so it
			// stops, and its own children with it (endTree).
			workflow.GetLogger(ctx).Warn("the root of the tree is gone; this subagent stops", "root", to)
			a.tree.leave()
		}
	}
	ob.busy = false
}

// purge drops what waits for a workflow that ended.
func (a *agent) purge(workflowID string) {
	if ob := a.tree.out[workflowID]; ob != nil {
		a.tree.unsent -= len(ob.queue)
		ob.queue = nil
	}
}

// awaitSent waits until every message queued was delivered (or failed).
func (a *agent) awaitSent(ctx workflow.Context) {
	_ = workflow.Await(ctx, func() bool { return a.tree.unsent == 0 })
}

// joinTree is a subagent's first message: the root records it before it
// takes in anything else of it.
func (a *agent) joinTree(ctx workflow.Context) {
	if !a.isRoot() {
		me := todo.Member{AgentID: a.cfg.AgentID, WorkflowID: workflow.GetInfo(ctx).WorkflowExecution.ID, Parent: a.tree.parentID}
		a.send(ctx, a.tree.rootID, JoinSignal, me)
	}
}

// emit publishes the agent's new events: to its reporters, and to the tree
// (a subagent sends them to the root with its counters; the root forwards).
func (a *agent) emit(ctx workflow.Context, events []todo.Event) {
	if len(events) == 0 {
		return
	}
	plan, _ := json.Marshal(a.plans.Current())
	for _, ev := range events {
		a.reporters.report(ev, plan)
	}
	if a.isRoot() {
		a.forward(ctx, a.cfg.AgentID, events, nil)
		return
	}
	b := a.nextBrief()
	a.send(ctx, a.tree.rootID, api.TaskEventSignal, Events{Of: a.cfg.AgentID, Events: events, Brief: &b})
}

// askPeers asks the root for what this agent's plan needs and was not asked
// for yet: the bindings of new dependencies, and (but at the root, whose
// log has every event) the subscriptions numbered past the last one asked
// for.
func (a *agent) askPeers(ctx workflow.Context) {
	for _, id := range a.plans.PendingBindings() {
		if !slices.Contains(a.tree.asked, id) {
			a.tree.asked = append(a.tree.asked, id)
			a.ask(ctx, todo.Want{Of: id, MinPlan: a.plans.CurrentPlanOf(id)})
		}
	}
	for _, s := range a.plans.Subscriptions {
		if s.Number() > a.tree.subs && !a.isRoot() {
			w := todo.Want{Of: s.AgentID, Filter: &s}
			if w.Of == "" {
				w.Of = "*"
			}
			a.ask(ctx, w)
		}
	}
	a.tree.subs = a.plans.SubscriptionCount
}

func (a *agent) ask(ctx workflow.Context, w todo.Want) {
	w.Agent, w.WorkflowID = a.cfg.AgentID, workflow.GetInfo(ctx).WorkflowExecution.ID
	if a.isRoot() {
		a.route(ctx, w)
		return
	}
	a.send(ctx, a.tree.rootID, WantSignal, w)
}

// sayEnded is a subagent's last message; the run completes once it is
// delivered.
func (a *agent) sayEnded(ctx workflow.Context) {
	if !a.isRoot() {
		a.send(ctx, a.tree.rootID, EndSignal, a.endMessage(api.StatusCompleted))
		a.awaitSent(ctx)
	}
}
