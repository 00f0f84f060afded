package workflows

// Taking in what the tree's bus delivers, in the order it was sent: a
// child's signals by their numbers, an end notice after the events it
// follows.

import (
	"slices"

	"go.temporal.io/sdk/workflow"
)

// onTreeEvent takes in a task_event of the tree's bus.
func (a *agent) onTreeEvent(ctx workflow.Context, te TaskEvent) {
	if te.Brief != nil && te.Brief.Seq > 0 {
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
	a.bus.unborn = slices.DeleteFunc(a.bus.unborn, func(te TaskEvent) bool {
		if te.From == ch.AgentID {
			ch.early = append(ch.early, te)
			return true
		}
		return false
	})
	a.takeEarly(ctx, ch)
}

// takeEnd records that an agent of the tree ended, and fails what waited
// on it.
func (a *agent) takeEnd(ctx workflow.Context, e AgentEnd) {
	a.bus.forget(e.AgentID)
	a.gone[e.AgentID] = e.How
	a.emit(ctx, a.plans.AgentEnded(e.AgentID, e.How))
	a.memberEnded(ctx, e.AgentID, e.How)
}

// holdEnd keeps an end notice that came before some of the events its
// keeper had sent (AgentEnd.Sent): until they come, the agent counts as
// live, and its end fails nothing.
func (a *agent) holdEnd(e AgentEnd) bool {
	if e.Sent <= a.bus.got[e.AgentID] {
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
		return &AgentEnd{AgentID: id, How: how, Sent: a.bus.sent[sentKey(id, workflowID)]}
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
	// The keepers that hold the ended agent's interests drop them: no
	// event is forwarded to an agent that ended. The root's own table
	// drops them at once.
	a.bus.forget(id)
	var told []string
	ended := ""
	if m := a.bus.member(id); m != nil {
		ended = m.WorkflowID
	}
	a.bus.routed = slices.DeleteFunc(a.bus.routed, func(r route) bool {
		switch {
		case r.Keeper == ended:
			return true // the keeper itself ended
		case r.Asker != id:
			return false
		}
		if !slices.Contains(told, r.Keeper) {
			told = append(told, r.Keeper)
			a.signal(ctx, r.Keeper, TaskEvent{From: a.cfg.agentID, Ended: &AgentEnd{AgentID: id, How: how}})
		}
		return true
	})
}
