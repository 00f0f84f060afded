package workflows

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// approval is a human's answer to a startPlan request.
type approval struct {
	approved bool
	feedback string
}

func (a *agent) validateApproval(args api.ApprovalArgs) error {
	switch {
	case args.UnknownField() != nil:
		return args.UnknownField()
	case args.Approved == nil:
		return errors.New(`approve_plan takes {"approved": true|false, "feedback": "...", "agent_id"?: "..."}`)
	case len(args.Feedback) > todo.MaxMessageBytes:
		return fmt.Errorf("the feedback is %d bytes: at most %d", len(args.Feedback), todo.MaxMessageBytes)
	}
	_, err := a.approvalFor(args.AgentID)
	return err
}

// approvalFor is the wait the answer is for: this agent's, or (at the
// root) that of an agent of its tree.
func (a *agent) approvalFor(agentID string) (api.Wait, error) {
	w, err := a.waitFor(api.WaitPlanApproval, agentID)
	if err != nil {
		return api.Wait{}, fmt.Errorf("no plan is waiting for approval: %w", err)
	}
	if w.AgentID != a.cfg.AgentID && !a.isRoot() {
		return api.Wait{}, fmt.Errorf("agent %q waits for approval; answer it at the root of the run tree", w.AgentID)
	}
	return w, nil
}

func (a *agent) onApproval(ctx workflow.Context, args api.ApprovalArgs) (string, error) {
	verdict := map[bool]string{true: "approved", false: "rejected"}[*args.Approved]
	w, err := a.approvalFor(args.AgentID)
	if err != nil {
		return "", err
	}
	if w.AgentID != a.cfg.AgentID {
		if err := a.handOn(ctx, w.AgentID, Handed{Approve: &args}); err != nil {
			return "", err
		}
		a.tree.handed = append(a.tree.handed, w)
		a.publish(ctx)
		return verdict + " (the plan of agent " + w.AgentID + ")", nil
	}
	a.approvals.plan = &approval{approved: *args.Approved, feedback: args.Feedback}
	return verdict, nil
}

// planTool runs one plan or cross-agent tool. startPlan with approval
// required waits here, durably and for as long as it takes, for the
// approve_plan update; the tool's result is the human's answer.
func (a *agent) planTool(ctx workflow.Context, c model.ToolCall) todo.Result {
	out := a.plans.ApplyPlan(todo.Call{ID: c.ID, Name: c.Name, Args: c.Arguments}, a.cfg.Todo.PlanApproval == todo.ApprovalRequired)
	if c.Name == todo.ToolUnsubscribe && !out.Result.IsError && !a.isRoot() {
		// The root forwards this agent's subscribed events until told.
		var args struct {
			ID string `json:"subscription_id"`
		}
		if json.Unmarshal(c.Arguments, &args) == nil {
			a.ask(ctx, todo.Want{Of: "*", Filter: &todo.Subscription{ID: args.ID}, Drop: true})
		}
	}
	a.emit(ctx, out.Events)
	a.failEnded(ctx)
	a.askPeers(ctx)
	if !out.NeedsApproval {
		return out.Result
	}
	a.status = api.StatusAwaitingApproval
	a.publish(ctx)
	// end_session and an interrupt end the wait too: a session that is
	// told to end must not wait days for an approval nobody will give. A
	// handover ends it as well: the call is answered that the verdict
	// comes later, the response's other calls run, and the turn goes on
	// in the continuation (turn.go; its caller is answered so, replies.go).
	if err := workflow.Await(ctx, func() bool { return a.approvals.plan != nil || a.ended || a.stopping() || a.handOverDue(ctx) }); err != nil {
		return todo.Result{IsError: true, Content: fmt.Sprintf("The approval wait was interrupted: %v", err)}
	}
	if a.approvals.plan == nil && !a.ended && !a.stopping() {
		a.cur.at.Approval = true
		return todo.Result{Content: "The plan waits for the user's approval, which may take a while: the answer comes in a message of its own. Do not start the plan's steps before it."}
	}
	return a.verdict(ctx)
}

// verdict applies the answer a startPlan waited for (or the end of the
// session, or an interrupt, when no answer came) and says it.
func (a *agent) verdict(ctx workflow.Context) todo.Result {
	ans := approval{feedback: "The session ended before the plan was approved."}
	if a.stopping() && !a.ended {
		ans.feedback = "The user interrupted the turn before the plan was approved."
	}
	if a.approvals.plan != nil {
		ans = *a.approvals.plan
	}
	a.approvals.plan = nil
	var out todo.PlanOutcome
	if ans.approved {
		out = a.plans.Approve(ans.feedback)
	} else {
		out = a.plans.Reject(ans.feedback)
	}
	a.emit(ctx, out.Events)
	a.status = api.StatusRunning
	a.publish(ctx)
	return out.Result
}

// awaitHandedApproval is the wait of a turn handed over while its plan
// waited for approval: the same wait, in the continuation (or again in
// this run, when the handover found something to do first). The verdict
// reaches the model as a message; a handover due again hands the turn on,
// to wait again before its model call number calls.
func (a *agent) awaitHandedApproval(ctx workflow.Context, cur *turnCursor, calls int) error {
	if !a.plans.AwaitingApproval {
		return nil // answered meanwhile by an earlier run's end
	}
	a.status = api.StatusAwaitingApproval
	a.publish(ctx)
	if err := workflow.Await(ctx, func() bool { return a.approvals.plan != nil || a.ended || cur.stop || a.handOverDue(ctx) }); err != nil {
		return err
	}
	if a.approvals.plan == nil && !a.ended && !cur.stop {
		cur.at = BlockedTurn{Calls: calls, Approval: true, Resume: cur.at.Resume}
		return errHandOver
	}
	r := a.verdict(ctx)
	a.append(model.Message{Role: model.RoleUser, Name: api.NamePlanVerdict, Content: "The user's answer to your startPlan: " + r.Content})
	return nil
}
