package workflows

// The end of a subagent: asked to finish at end_session, cancelled by its
// parent (cancel_subagent) or when its grace is over.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

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
