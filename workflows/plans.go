package workflows

import (
	"encoding/json"
	"errors"
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// ApprovalArgs is the argument of the approve_plan update.
type ApprovalArgs struct {
	Approved *bool  `json:"approved"`
	Feedback string `json:"feedback"`
}

// approval is a human's answer to a startPlan request.
type approval struct {
	approved bool
	feedback string
}

func (a *agent) validateApproval(args ApprovalArgs) error {
	switch {
	case args.Approved == nil:
		return errors.New(`approve_plan takes {"approved": true|false, "feedback": "..."}`)
	case !a.plans.AwaitingApproval || a.answer != nil:
		return errors.New("no plan is waiting for approval")
	}
	return nil
}

func (a *agent) onApproval(_ workflow.Context, args ApprovalArgs) (string, error) {
	a.answer = &approval{approved: *args.Approved, feedback: args.Feedback}
	if *args.Approved {
		return "approved", nil
	}
	return "rejected", nil
}

// planTool runs one plan or cross-agent tool. startPlan with approval
// required waits here, durably and for as long as it takes, for the
// approve_plan update; the tool's result is the human's answer.
func (a *agent) planTool(ctx workflow.Context, c model.ToolCall) todo.Result {
	out := a.plans.ApplyPlan(todo.Call{ID: c.ID, Name: c.Name, Args: c.Arguments}, a.cfg.todo.PlanApproval == todo.ApprovalRequired)
	a.emit(ctx, out.Events)
	a.failEnded(ctx)
	if !out.NeedsApproval {
		return out.Result
	}
	a.status = StatusAwaitingApproval
	a.publish(ctx)
	if err := workflow.Await(ctx, func() bool { return a.answer != nil }); err != nil {
		return todo.Result{IsError: true, Content: fmt.Sprintf("The approval wait was interrupted: %v", err)}
	}
	ans := *a.answer
	a.answer = nil
	if ans.approved {
		out = a.plans.Approve(ans.feedback)
	} else {
		out = a.plans.Reject(ans.feedback)
	}
	a.emit(ctx, out.Events)
	a.status = StatusRunning
	a.publish(ctx)
	return out.Result
}

// emit publishes the agent's new events: to its reporters, and to its
// parent (with its state) when it is a subagent.
func (a *agent) emit(ctx workflow.Context, events []todo.Event) {
	if len(events) == 0 {
		return
	}
	plan, _ := json.Marshal(a.plans.Current())
	for _, ev := range events {
		a.report(ev, plan)
		if a.parentID != "" {
			st := a.compactState()
			a.signal(ctx, a.parentID, TaskEvent{From: a.cfg.agentID, Event: &ev, State: &st})
		}
	}
}
