package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/internal/text"

	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
	"github.com/todoflow/todoflow/transcript"
)

// Approval for any tool (input `approval`, update approve_tool): what the
// user sees and answers is in docs/protocol.md, "Approvals for tools". A
// "destructive" call is sent with HoldDestructive, since only the worker
// knows a tool's hints; the wait starts from the worker's recorded Held
// answer, so replay takes the same path.

// previewBytes bounds the arguments a state or a wait's reason shows.
const previewBytes = 2048

func pendingOf(c model.ToolCall) *api.PendingApproval {
	args := json.RawMessage(c.Arguments)
	if len(args) > previewBytes || !json.Valid(args) {
		args, _ = json.Marshal(todo.ApprovalPreview(c.Arguments, previewBytes))
	}
	return &api.PendingApproval{CallID: c.ID, Tool: c.Name, Arguments: args}
}

func approvalReason(p *api.PendingApproval) string {
	return fmt.Sprintf("call %s of %s %s", p.CallID, p.Tool, todo.ApprovalPreview(p.Arguments, 200))
}

func (a *agent) validateToolApproval(args api.ToolApprovalArgs) error {
	switch {
	case args.UnknownField() != nil:
		return args.UnknownField()
	case args.Approved == nil:
		return errors.New(`approve_tool takes {"approved": true|false, "feedback": "...", "call_id": "...", "remember"?: bool, "agent_id"?: "..."}`)
	case len(args.Feedback) > todo.MaxMessageBytes:
		return fmt.Errorf("the feedback is %d bytes: at most %d", len(args.Feedback), todo.MaxMessageBytes)
	case args.CallID == "":
		// A second approval without it would approve a call nobody was
		// shown.
		return errors.New("approve_tool needs the call_id of the call it answers, as the state query shows it (pending_approval.call_id, or the call_id of a tool_approval in waiting)")
	}
	_, err := a.toolApprovalFor(args)
	return err
}

// toolApprovalFor is the wait the answer is for: this agent's, or (at the
// root) that of an agent of its tree. A call_id must name the waiting call.
func (a *agent) toolApprovalFor(args api.ToolApprovalArgs) (api.Wait, error) {
	w, err := a.waitFor(api.WaitToolApproval, args.AgentID)
	if err != nil {
		return api.Wait{}, fmt.Errorf("no tool call is waiting for approval: %w", err)
	}
	if w.AgentID != a.cfg.AgentID && !a.isRoot() {
		return api.Wait{}, fmt.Errorf("agent %q waits for a tool approval; answer it at the root of the run tree", w.AgentID)
	}
	if args.CallID != w.CallID {
		return api.Wait{}, fmt.Errorf("call %q is not waiting for approval; %s is", args.CallID, w.Reason)
	}
	return w, nil
}

func (a *agent) onToolApproval(ctx workflow.Context, args api.ToolApprovalArgs) (string, error) {
	w, err := a.toolApprovalFor(args)
	if err != nil {
		return "", err
	}
	verdict := map[bool]string{true: "approved", false: "rejected"}[*args.Approved]
	if w.AgentID != a.cfg.AgentID {
		// The waiting agent checks call_id itself; an answer that no
		// longer fits is logged there.
		if err := a.handOn(ctx, w.AgentID, Handed{ApproveTool: &args}); err != nil {
			return "", err
		}
		a.tree.handed = append(a.tree.handed, w)
		a.publish(ctx)
		return fmt.Sprintf("%s (%s, agent %s)", verdict, w.Reason, w.AgentID), nil
	}
	a.approvals.toolAnswer = &args
	return fmt.Sprintf("%s: %s", verdict, approvalReason(a.approvals.toolWait)), nil
}

// onHandedToolApproval takes an answer the root handed on. One that crossed
// a handover (the wait it answers was handed over, and the continuation has
// not asked again yet) is kept for that ask.
func (a *agent) onHandedToolApproval(ctx workflow.Context, args api.ToolApprovalArgs) {
	if a.approvals.toolWait == nil && a.approvals.toolAnswer == nil && a.unanswered(args.CallID) {
		a.approvals.early = &args
		return
	}
	if a.approvals.toolWait == nil || a.approvals.toolAnswer != nil || args.CallID != a.approvals.toolWait.CallID {
		workflow.GetLogger(ctx).Warn("ignoring a handed-on tool approval: no call waits for it", "call_id", args.CallID)
		return
	}
	a.approvals.toolAnswer = &args
}

// approveTools asks, in call order, for the approval of each call the
// policy requires, and returns the refusals: a result for each call that
// must not run, nil for the others. A handover due in a wait ends it with
// handed: none of the calls has run, and the continuation goes on with the
// verdicts given so far (a.cur.at.Verdicts).
func (a *agent) approveTools(ctx workflow.Context, calls []model.ToolCall) (refused []*todo.Result, handed bool) {
	refused = make([]*todo.Result, len(calls))
	for i, c := range calls {
		if !a.cfg.Approval.Required(c.Name) || slices.Contains(a.approvals.remembered, c.Name) {
			continue
		}
		if j := slices.IndexFunc(a.cur.at.Verdicts, func(v CallVerdict) bool { return v.ID == c.ID }); j >= 0 {
			if r := a.cur.at.Verdicts[j].Refusal; r != "" {
				refused[i] = &todo.Result{IsError: true, Content: r}
			}
			continue
		}
		r, handed := a.askApproval(ctx, c, a.callRef(i, c))
		if handed {
			return nil, true
		}
		refused[i] = r
		v := CallVerdict{ID: c.ID}
		if r != nil {
			// Carried if the turn is handed over: up to 64 of them, each
			// with a human's feedback.
			v.Refusal = text.Cut(r.Content, verdictBytes)
		}
		a.cur.at.Verdicts = append(a.cur.at.Verdicts, v)
	}
	a.cur.at.Verdicts = nil
	return refused, false
}

// verdictBytes is the most of a refusal a verdict keeps.
const verdictBytes = 1 << 10

// CallVerdict is the answer a tool call of a handed-over response already
// had: approved (no Refusal), or not run, and why.
type CallVerdict struct {
	ID      string `json:"id"`
	Refusal string `json:"refusal,omitempty"`
}

// askApproval waits for the answer to call c (which stands in the
// transcript where from says), and returns the refusal (nil when
// approved); or handed, when a handover came first. The wait shows the
// diff a write would make, asked first (preview.go).
func (a *agent) askApproval(ctx workflow.Context, c model.ToolCall, from *transcript.CallRef) (*todo.Result, bool) {
	if e := a.approvals.early; e != nil && e.CallID == c.ID {
		a.approvals.early = nil
		return a.refusal(c, e, nil), false
	}
	wait := pendingOf(c)
	wait.Diff = a.previewOf(ctx, c, from)
	a.approvals.toolWait = wait
	a.status = api.StatusAwaitingApproval
	a.publish(ctx)
	err := workflow.Await(ctx, func() bool {
		return a.approvals.toolAnswer != nil || a.ended || a.stopping() || a.handOverDue(ctx)
	})
	ans := a.approvals.toolAnswer
	if err == nil && ans == nil && !a.ended && !a.stopping() {
		// The continuation asks again. The wait stays shown until the run
		// hands over, so that an answer meanwhile is taken, and keeps the
		// turn in this run (approvals.waiting).
		return nil, true
	}
	a.approvals.toolWait, a.approvals.toolAnswer = nil, nil
	a.status = api.StatusRunning
	a.publish(ctx)
	return a.refusal(c, ans, err), false
}

// refusal is what an answer (or its absence) makes of call c: nil to run it.
func (a *agent) refusal(c model.ToolCall, ans *api.ToolApprovalArgs, err error) *todo.Result {
	switch {
	case err != nil:
		return &todo.Result{IsError: true, Content: fmt.Sprintf("Not run: the wait for its approval was interrupted (%v).", err)}
	case ans == nil && a.stopping():
		return &todo.Result{IsError: true, Content: "Not run: the user interrupted the turn before this call was approved."}
	case ans == nil:
		return &todo.Result{IsError: true, Content: "Not run: the session ended before this call was approved."}
	case !*ans.Approved:
		text := "Not run: the user rejected this call of " + c.Name + "."
		if ans.Feedback != "" {
			text += " Their feedback: " + ans.Feedback
		}
		return &todo.Result{IsError: true, Content: text}
	case ans.Remember:
		a.approvals.remembered = append(a.approvals.remembered, c.Name)
	}
	return nil
}

// holdsDestructive reports whether a call of tool is sent for the worker
// to hold if the tool may destroy: the policy says "destructive" for it,
// and the user has not approved the tool for the session.
func (a *agent) holdsDestructive(tool string) bool {
	return a.cfg.Approval.Destructive(tool) && !slices.Contains(a.approvals.remembered, tool)
}

// heldTool answers a call the worker held (the tool may destroy): it waits
// for approval, then sends the call again, not to be held; or returns the
// refusal. A handover due in the wait ends it with handed, and the
// continuation asks again (answerHeld); once one held call was handed over,
// the later ones are too, unasked, so that the wait shown until the
// handover is the one the continuation asks first.
func (a *agent) heldTool(ctx workflow.Context, t toolCall) (out activities.RunToolResult, handed bool, err error) {
	if len(a.cur.at.Held) > 0 {
		return out, true, nil
	}
	refused, handed := a.askApproval(ctx, t.c, t.from)
	switch {
	case handed:
		return out, true, nil
	case refused != nil:
		return activities.RunToolResult{Content: refused.Content, IsError: true}, false, nil
	}
	t.direct, t.approved = false, true
	err = a.runTool(ctx, t).Get(ctx, &out)
	return out, false, err
}

// answerHeld answers, in a handed-over turn, the held calls whose approval
// waits were handed over (ids, in call order): each is asked again, then
// run or refused; a handover due again hands the ones left on. It returns
// the response, nil when the carry could not keep it (the model is then
// called again).
func (a *agent) answerHeld(ctx workflow.Context, ids []string) *model.Response {
	at := responseWith(a.window.msgs, ids[0])
	if at < 0 {
		workflow.GetLogger(ctx).Warn("a handed-over turn's held calls are not in the carried transcript; the model is called again")
		return nil
	}
	calls := a.window.msgs[at].ToolCalls
	var queue string
	var hostErr error
	asked := false
	for _, id := range ids {
		j := slices.IndexFunc(calls, func(c model.ToolCall) bool { return c.ID == id })
		if j < 0 {
			continue
		}
		c := calls[j]
		t := toolCall{c: c, from: &transcript.CallRef{Message: at, Index: j, Digest: transcript.CallDigest(c)}, workspaceOf: a.tree.rootID}
		if !asked {
			queue, hostErr = a.host.toolQueue(ctx)
			asked = true
		}
		if hostErr != nil {
			a.appendAnswer(c, model.Message{Role: model.RoleTool, ToolCallID: c.ID, IsError: true, Content: fmt.Sprintf("Tool %s was not run: %v", c.Name, hostErr)})
			continue
		}
		t.queue = queue
		out, handed, err := a.heldTool(ctx, t)
		if handed {
			a.cur.at.Held = append(a.cur.at.Held, id)
			continue
		}
		msg := model.Message{Role: model.RoleTool, ToolCallID: c.ID}
		msg.Content, msg.IsError = a.activityAnswer(ctx, c, queue, out, err)
		a.appendAnswer(c, msg)
	}
	return &model.Response{ToolCalls: calls}
}

// responseWith is the index in msgs of the response with call id, the
// last assistant message that has it; -1 when msgs have none.
func responseWith(msgs []model.Message, id string) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role == model.RoleAssistant && slices.ContainsFunc(m.ToolCalls, func(c model.ToolCall) bool { return c.ID == id }) {
			return i
		}
	}
	return -1
}

// unanswered reports whether call id is one of the transcript's last
// response, none of whose calls has an answer yet: a response whose wait
// for approval was handed over.
func (a *agent) unanswered(id string) bool {
	n := len(a.window.msgs)
	return n > 0 && a.window.msgs[n-1].Role == model.RoleAssistant &&
		slices.ContainsFunc(a.window.msgs[n-1].ToolCalls, func(c model.ToolCall) bool { return c.ID == id })
}
