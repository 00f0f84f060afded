package workflows

// The end of a subagent: how its parent learns it, asked to finish at
// end_session, cancelled by its parent, and the end of a run that fails or
// is cancelled, which takes its children with it.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/internal/text"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// awaitChild records how a subagent ended. A child that completes said so
// to the root itself, after its events; one that died cannot, so its
// parent does (the root takes an end in once).
func (a *agent) awaitChild(ctx workflow.Context, ch *child, fut workflow.ChildWorkflowFuture) {
	var res api.AgentResult
	err := fut.Get(ctx, &res)
	// The child's last messages were delivered before it completed; let
	// the signal loop take them in first.
	_ = workflow.Await(ctx, func() bool { return a.treeLen() == 0 })
	ch.Done, ch.how = true, api.StatusCompleted
	switch {
	case err == nil && res.State != nil:
		ch.State, ch.reply = res.State, text.Cut(res.Reply, resultHead)
	case err != nil:
		ch.how = "failed: " + api.RootMessage(err)
		switch {
		case temporal.IsCanceledError(err):
			ch.how = "cancelled"
			if ch.why != "" {
				ch.how += ": " + ch.why
			}
		case errors.As(err, new(*temporal.TimeoutError)):
			ch.how = fmt.Sprintf("timed out after %s (subagent_timeout_s)", a.cfg.SubagentTimeout)
		}
		st := api.State{AgentID: ch.AgentID, Status: api.StatusFailed}
		if ch.State != nil {
			st = *ch.State
			st.Status = api.StatusFailed
		}
		ch.State = &st
	}
	if a.isRoot() || err != nil {
		a.tellEnd(ctx, End{AgentID: ch.AgentID, How: ch.how})
	}
	a.publish(ctx)
}

// tellEnd takes an agent's end in at the root, or sends it there.
func (a *agent) tellEnd(ctx workflow.Context, end End) {
	if a.isRoot() {
		a.endAtRoot(ctx, end)
	} else {
		a.send(ctx, a.tree.rootID, EndSignal, end)
	}
}

// finishChildren asks the running children to finish, waits for them for
// subagent_grace_s, and cancels those still running.
func (a *agent) finishChildren(ctx workflow.Context) error {
	grace := int(a.cfg.SubagentGrace / time.Second)
	for _, id := range a.tree.childOrder {
		if ch := a.tree.children[id]; !ch.Done && !ch.finishAsked {
			ch.finishAsked = true
			a.send(ctx, ch.WorkflowID, HandSignal, Handed{From: a.cfg.AgentID, Finish: &grace})
		}
	}
	done, err := a.awaitOrTimeout(ctx, a.cfg.SubagentGrace, "subagent grace", func() bool { return a.runningChildren() == 0 })
	if err != nil || done {
		return err
	}
	for _, id := range a.tree.childOrder {
		if ch := a.tree.children[id]; !ch.Done {
			a.stop(ctx, ch, fmt.Sprintf("the session ended and it did not finish within subagent_grace_s (%ds)", grace))
		}
	}
	return nil
}

// onFinish is a parent's request to finish: the model hears it before its
// next call, and the agent's own children are asked in turn when it winds
// down.
func (a *agent) onFinish(grace int) {
	a.ended = true
	a.tree.finishNote = fmt.Sprintf("The session that started you is ending: you have %d seconds left before you are stopped. "+
		"Finish now: complete, fail or skip your remaining steps with what you have, and give your final answer.", grace)
}

// stop cancels a running child. A child this run started is cancelled
// through its context. An adopted one is asked by its workflow id; a
// request that finds it closed means it ended without a word (terminated
// by hand), and its parent records that now rather than at its deadline.
func (a *agent) stop(ctx workflow.Context, ch *child, why string) {
	if ch.why == "" {
		ch.why = why
	}
	if ch.cancel != nil {
		ch.cancel()
		return
	}
	if ch.cancelAsked {
		return
	}
	ch.cancelAsked = true
	workflow.Go(ctx, func(ctx workflow.Context) {
		err := workflow.RequestCancelExternalWorkflow(ctx, ch.WorkflowID, "").Get(ctx, nil)
		if err != nil && !ch.Done {
			a.childDied(ctx, ch, "cancelled: "+ch.why)
		}
	})
}

// CancelArgs are the arguments of cancel_subagent.
type CancelArgs struct {
	AgentID string `json:"agent_id"`
	Reason  string `json:"reason,omitempty"`
}

// cancelSubagent is the cancel_subagent tool: a parent stops one of its
// children; the steps that wait on it fail once it has stopped.
func (a *agent) cancelSubagent(ctx workflow.Context, c model.ToolCall) todo.Result {
	var args CancelArgs
	dec := json.NewDecoder(bytes.NewReader(c.Arguments))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&args); err != nil {
		return todo.Result{IsError: true, Content: fmt.Sprintf(`cancel_subagent takes {"agent_id": "...", "reason"?: "..."}: %v`, err)}
	}
	ch := a.tree.children[args.AgentID]
	switch {
	case ch == nil && len(a.tree.childOrder) == 0:
		return todo.Result{IsError: true, Content: fmt.Sprintf("you have no subagent %q: you have not spawned any", args.AgentID)}
	case ch == nil:
		return todo.Result{IsError: true, Content: fmt.Sprintf("you have no subagent %q; yours are %s (you can only cancel your own)", args.AgentID, strings.Join(a.tree.childOrder, ", "))}
	case ch.Done:
		return todo.Result{IsError: true, Content: fmt.Sprintf("subagent %q has already ended (%s)", args.AgentID, ch.how)}
	}
	why := strings.TrimSpace(args.Reason)
	if why == "" {
		why = "cancelled by its parent"
	}
	a.stop(ctx, ch, why)
	return todo.Result{Content: fmt.Sprintf("Subagent %q is being cancelled. The steps that wait on it fail once it has stopped; its final state is kept.", args.AgentID)}
}

// runningChildList is Carry.Running: the children still working, which the
// continuation adopts.
func (a *agent) runningChildList() []RunningChild {
	var out []RunningChild
	for _, id := range a.tree.childOrder {
		ch := a.tree.children[id]
		if !ch.Done && ch.end != nil {
			a.endFrom(ch, *ch.end) // its future will not resolve in this run
		}
		if !ch.Done {
			out = append(out, RunningChild{AgentID: id, WorkflowID: ch.WorkflowID, Deadline: ch.deadline})
		}
	}
	return out
}

// deadlineSlack is how long after an adopted child's deadline its parent
// takes it as timed out. The deadline was reckoned from the workflow task
// that started the child, a little before the child's own start, from
// which the server counts; a tree_end the child sent before that is
// delivered before it closes.
const deadlineSlack = 10 * time.Second

// adoptChildren watches the children an earlier run of this workflow handed
// over. Such a child's tree_end ends it (adoptedEnded); one the server ends
// at its deadline says nothing, so the deadline is its backstop.
func (a *agent) adoptChildren(ctx workflow.Context) {
	for _, id := range a.tree.childOrder {
		ch := a.tree.children[id]
		if !ch.adopted() || ch.Done {
			continue
		}
		workflow.Go(ctx, func(ctx workflow.Context) {
			wait := max(ch.deadline.Sub(workflow.Now(ctx))+deadlineSlack, time.Second)
			ended, err := a.awaitOrTimeout(ctx, wait, "deadline of subagent "+ch.AgentID, func() bool { return ch.Done })
			if err == nil && !ended {
				a.childDied(ctx, ch, fmt.Sprintf("timed out after %s (subagent_timeout_s)", a.cfg.SubagentTimeout))
			}
		})
	}
}

// adoptedEnded records the end of a child from its tree_end (or the root's
// forward of it). An adopted child ends here, its final summary standing
// for the result this run has no future for. A child this run started ends
// when its future resolves; its end is kept meanwhile, so that a handover
// in between hands it on as ended, not as running.
func (a *agent) adoptedEnded(e End) {
	ch := a.tree.children[e.AgentID]
	switch {
	case ch == nil || ch.Done:
		return
	case !ch.adopted():
		ch.end = &e
		return
	}
	a.endFrom(ch, e)
}

// endFrom marks a child ended by its tree_end.
func (a *agent) endFrom(ch *child, e End) {
	st := a.endState(e)
	ch.Done, ch.how, ch.reply, ch.State = true, e.How, e.Reply, &st
}

// endState is the final state a tree_end tells of its agent: the summary
// it sent, else its last brief, with the status its end says (a brief may
// be older than the end, and say running).
func (a *agent) endState(e End) api.State {
	var st api.State
	switch {
	case e.Final != nil:
		st = *e.Final
	case a.tree.briefs[e.AgentID] != nil:
		st = briefState(a.tree.briefs[e.AgentID], e.AgentID)
	default:
		st = api.State{AgentID: e.AgentID}
	}
	st.Status = api.StatusCompleted
	if e.How != api.StatusCompleted {
		st.Status = api.StatusFailed
	}
	return st
}

// childDied records the end of an adopted child that could not say it
// itself, and tells the tree as awaitChild does.
func (a *agent) childDied(ctx workflow.Context, ch *child, how string) {
	end := End{AgentID: ch.AgentID, How: how}
	a.adoptedEnded(end)
	a.tellEnd(ctx, end)
	a.publish(ctx)
}

// endTree is the last act of a run that fails or is cancelled (not one
// that continues as new): its running children are asked to cancel, since
// no policy of the server does it (childPolicy), and a subagent tells the
// root how it ended, which its parent may have no future to learn from.
func (a *agent) endTree(ctx workflow.Context, err error) {
	if errors.As(err, new(*workflow.ContinueAsNewError)) {
		return
	}
	how := "failed: " + api.RootMessage(err)
	if temporal.IsCanceledError(err) {
		how = "cancelled"
	}
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	var asked []workflow.Future
	for _, id := range a.tree.childOrder {
		if ch := a.tree.children[id]; !ch.Done {
			asked = append(asked, workflow.RequestCancelExternalWorkflow(dctx, ch.WorkflowID, ""))
		}
	}
	if !a.isRoot() {
		a.send(dctx, a.tree.rootID, EndSignal, a.endMessage(how))
	}
	for _, f := range asked {
		_ = f.Get(dctx, nil) // a child that ended meanwhile is no error here
	}
	a.awaitSent(dctx)
}

// endMessage is a subagent's tree_end: how it ended, with what a parent
// that adopted it keeps of it: its state's summary (or, too large for the
// message, the shorter form older children are kept in) and the head of its
// answer.
func (a *agent) endMessage(how string) End {
	st := a.state()
	if how != api.StatusCompleted {
		st.Status = api.StatusFailed
	}
	reply := text.Cut(a.lastReply(), resultHead)
	final := summary(st)
	if b, _ := json.Marshal(final); len(b) > signalEventsBudget {
		final = ended(st, reply)
	}
	return End{AgentID: a.cfg.AgentID, How: how, Final: &final, Reply: reply}
}
