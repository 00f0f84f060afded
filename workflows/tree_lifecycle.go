package workflows

// The end of a subagent: how its parent learns it (the child's future),
// asked to finish at end_session, cancelled by its parent (cancel_subagent)
// or when its grace is over.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// awaitChild records how a subagent ended. A child that completes said so
// to the root itself, after its events; one that died cannot, so its
// parent does (the root takes an end in once). The root's log holds the
// tree, so the root takes the end in here, after the child's messages.
func (a *agent) awaitChild(ctx workflow.Context, ch *child, fut workflow.ChildWorkflowFuture) {
	var res AgentResult
	err := fut.Get(ctx, &res)
	// The child's last messages were delivered before it completed; let
	// the signal loop take them in first.
	_ = workflow.Await(ctx, func() bool { return a.treeLen() == 0 })
	ch.Done, ch.how = true, StatusCompleted
	switch {
	case err == nil && res.State != nil:
		ch.State, ch.reply = res.State, cutUTF8(res.Reply, resultHead)
	case err != nil:
		ch.how = "failed: " + rootMessage(err)
		switch {
		case temporal.IsCanceledError(err):
			ch.how = "cancelled"
			if ch.why != "" {
				ch.how += ": " + ch.why
			}
		case errors.As(err, new(*temporal.TimeoutError)):
			ch.how = fmt.Sprintf("timed out after %s (subagent_timeout_s)", a.cfg.subagentTimeout)
		}
		st := State{AgentID: ch.AgentID, Status: StatusFailed}
		if ch.State != nil {
			st = *ch.State
			st.Status = StatusFailed
		}
		ch.State = &st
	}
	switch end := (End{AgentID: ch.AgentID, How: ch.how}); {
	case a.isRoot():
		a.endAtRoot(ctx, end)
	case err != nil:
		a.send(ctx, a.bus.rootID, EndSignal, end)
	}
	a.publish(ctx)
}

// finishChildren asks the running children to finish, waits for them for
// subagent_grace_s, and cancels those still running.
func (a *agent) finishChildren(ctx workflow.Context) error {
	grace := int(a.cfg.subagentGrace / time.Second)
	for _, id := range a.childOrder {
		if ch := a.children[id]; !ch.Done && !ch.finishAsked {
			ch.finishAsked = true
			a.send(ctx, ch.WorkflowID, HandSignal, Handed{From: a.cfg.agentID, Finish: &grace})
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
		return todo.Result{IsError: true, Content: fmt.Sprintf("subagent %q has already ended (%s)", args.AgentID, ch.how)}
	}
	why := strings.TrimSpace(args.Reason)
	if why == "" {
		why = "cancelled by its parent"
	}
	a.stop(ch, why)
	return todo.Result{Content: fmt.Sprintf("Subagent %q is being cancelled. The steps that wait on it fail once it has stopped; its final state is kept.", args.AgentID)}
}
