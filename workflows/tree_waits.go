package workflows

// What a parent shows of its children (a child's brief, its counters) and
// the human waits anywhere in the tree, answered at the root and handed on.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/internal/text"

	"github.com/todoflow/todoflow/todo"
	"go.temporal.io/sdk/workflow"
)

// brief is this agent's counters for its parent.
func (a *agent) brief() api.Brief {
	items := a.todo.List()
	b := api.Brief{
		Status:           a.status,
		Turns:            a.turns,
		ModelCalls:       a.modelCalls,
		TodosTotal:       len(items),
		TodosCompleted:   todo.CountStatus(items, todo.Completed),
		Paused:           a.todo.Paused,
		PauseReason:      reasonHead(a.todo.PauseReason),
		AwaitingApproval: a.plans.AwaitingApproval || a.approvals.toolWait != nil,
		ModelError:       a.modelError,
		Usage:            a.usage,
		TreeUsage:        a.treeUsage(),
		Model:            a.model(),
		Waiting:          a.ownWaits(),
	}
	if cur, ok := todo.Current(items); ok {
		b.Current = text.Shorten(cur.Content, 200)
	}
	if p := a.plans.Current(); p != nil {
		pr := todo.ComputeProgress(p.Steps)
		b.PlanID, b.PlanStatus, b.StepsTotal, b.StepsCompleted = p.PlanID, p.Status, pr.Total, pr.Completed
	}
	return b
}

// sendBrief tells the root of a status change that came without an event
// (a pause, a wait), once per change.
func (a *agent) sendBrief(ctx workflow.Context) {
	if a.isRoot() || (a.tree.brief != nil && sameBrief(*a.tree.brief, a.brief())) {
		return
	}
	b := a.nextBrief()
	a.send(ctx, a.tree.rootID, api.TaskEventSignal, Events{Of: a.cfg.AgentID, Brief: &b})
}

// nextBrief is the brief to send now, remembered as the last one sent.
func (a *agent) nextBrief() api.Brief {
	b := a.brief()
	a.tree.brief = &b
	return b
}

// sameBrief compares what a parent shows without an event: the status and
// the waits (the counters go with the next event).
func sameBrief(x, y api.Brief) bool {
	return x.Status == y.Status && slices.Equal(x.Waiting, y.Waiting) && x.Paused == y.Paused && x.AwaitingApproval == y.AwaitingApproval
}

// state is a running child's entry in state.subagents: its counters (Live),
// its status and its waits; the child's own state query answers the rest.
func briefState(b *api.Brief, id string) api.State {
	return api.State{
		AgentID:          id,
		Status:           b.Status,
		Turns:            b.Turns,
		ModelCalls:       b.ModelCalls,
		Todos:            []todo.Item{},
		Events:           []todo.Event{},
		Subagents:        map[string]api.State{},
		Reporters:        []api.ReporterStatus{},
		Paused:           b.Paused,
		PauseReason:      b.PauseReason,
		AwaitingApproval: b.AwaitingApproval,
		ModelError:       b.ModelError,
		Usage:            b.Usage,
		TreeUsage:        b.TreeUsage,
		Model:            b.Model,
		Waiting:          b.Waiting,
		Live:             b,
	}
}

// ownWaits is the human wait of this agent, if it has one.
func (a *agent) ownWaits() []api.Wait {
	if a.todo.Paused && a.inbox.empty() {
		return []api.Wait{{AgentID: a.cfg.AgentID, Kind: api.WaitPaused, Reason: reasonHead(a.todo.PauseReason)}}
	}
	// A call and the plan wait at once when startPlan handed its wait over
	// and a held call of the same response waits too: each is answered by
	// its own update, in any order.
	var ws []api.Wait
	if a.approvals.toolWait != nil && a.approvals.toolAnswer == nil {
		ws = append(ws, api.Wait{AgentID: a.cfg.AgentID, Kind: api.WaitToolApproval, Reason: reasonHead(approvalReason(a.approvals.toolWait)), CallID: a.approvals.toolWait.CallID})
	}
	if a.plans.AwaitingApproval && a.approvals.plan == nil {
		ws = append(ws, api.Wait{AgentID: a.cfg.AgentID, Kind: api.WaitPlanApproval, Reason: reasonHead(a.plans.ApprovalMessage)})
	}
	return ws
}

// waitReasonBytes is how much of a wait's reason a wait and a brief carry:
// the root gathers the waits of every agent of its tree (up to 272), in its
// state and its carry. The agent's own state has the reason whole.
const waitReasonBytes = 300

func reasonHead(s string) string {
	if len(s) <= waitReasonBytes {
		return s
	}
	return text.Cut(s, waitReasonBytes) + "…"
}

// under are the running agents whose counters this one holds: at the root
// every agent of the tree (each tells the root), elsewhere its children.
func (a *agent) under() []string {
	var ids []string
	if a.isRoot() {
		for _, m := range a.tree.Members {
			if m.Ended == "" {
				ids = append(ids, m.AgentID)
			}
		}
		return ids
	}
	for _, id := range a.tree.childOrder {
		if !a.tree.children[id].Done {
			ids = append(ids, id)
		}
	}
	return ids
}

// waiting lists the human waits of this agent and of those under it, its
// own first, without the ones the root has handed an answer on to.
func (a *agent) waiting() []api.Wait {
	ws := a.ownWaits()
	for _, id := range a.under() {
		if b := a.tree.briefs[id]; b != nil {
			for _, w := range b.Waiting {
				if !slices.Contains(a.tree.handed, w) {
					ws = append(ws, w)
				}
			}
		}
	}
	return ws
}

// forgetHanded drops the handed-on answers whose waits are over.
func (a *agent) forgetHanded() {
	a.tree.handed = slices.DeleteFunc(a.tree.handed, func(w api.Wait) bool {
		b := a.tree.briefs[w.AgentID]
		return b == nil || !slices.Contains(b.Waiting, w)
	})
}

// shownStatus is the status the root shows: a human wait anywhere in its
// tree, when it does not wait for a human itself, is its status too, so
// that a user (or a scenario) sees where the tree stands.
func (a *agent) shownStatus() string {
	switch a.status {
	case api.StatusPaused, api.StatusAwaitingApproval, api.StatusCompleted, api.StatusFailed, api.StatusContinued:
		return a.status
	}
	if !a.isRoot() {
		return a.status
	}
	for _, w := range a.waiting() {
		switch w.Kind {
		case api.WaitPaused:
			return api.StatusPaused
		case api.WaitPlanApproval, api.WaitToolApproval:
			return api.StatusAwaitingApproval
		}
	}
	return a.status
}

// waitFor picks the wait of the tree a human's answer is for: the one of
// agentID, or the only one of that kind.
func (a *agent) waitFor(kind, agentID string) (api.Wait, error) {
	var match []api.Wait
	for _, w := range a.waiting() {
		if w.Kind == kind && (agentID == "" || w.AgentID == agentID) {
			match = append(match, w)
		}
	}
	switch {
	case len(match) == 1:
		return match[0], nil
	case len(match) > 1:
		ids := make([]string, len(match))
		for i, w := range match {
			ids[i] = w.AgentID
		}
		return api.Wait{}, fmt.Errorf("agents %s all wait for this; name one with agent_id", strings.Join(ids, ", "))
	case agentID != "":
		return api.Wait{}, fmt.Errorf("agent %q does not wait for this", agentID)
	}
	return api.Wait{}, fmt.Errorf("no agent of this run tree waits for this")
}

// handOn sends a human's answer to the agent of the tree it is for.
func (a *agent) handOn(ctx workflow.Context, agentID string, h Handed) error {
	m := a.tree.Member(agentID)
	if m == nil || m.Ended != "" {
		return fmt.Errorf("agent %q is not running in this run tree", agentID)
	}
	h.From = a.cfg.AgentID
	a.send(ctx, m.WorkflowID, HandSignal, h)
	return nil
}

// onHanded takes a parent's request to finish, or a human's answer, which
// only the root hands on (after its update's validator took it): one sent
// straight to an agent would skip that check.
func (a *agent) onHanded(ctx workflow.Context, h Handed) {
	switch {
	case h.Finish != nil:
		a.onFinish(*h.Finish)
	case a.isRoot() || h.From != api.DefaultAgentID:
		workflow.GetLogger(ctx).Warn("ignoring a human's answer that did not come from the root of the run tree", "from", h.From)
	case h.Resume != nil:
		a.onResume(ctx, api.ResumeArgs{Text: *h.Resume, AgentID: a.cfg.AgentID})
	case h.Approve != nil && a.plans.AwaitingApproval && a.approvals.plan == nil:
		a.approvals.plan = &approval{approved: h.Approve.Approved != nil && *h.Approve.Approved, feedback: h.Approve.Feedback}
	case h.Approve != nil:
		workflow.GetLogger(ctx).Warn("ignoring a handed-on plan approval: no plan waits for one")
	case h.ApproveTool != nil:
		a.onHandedToolApproval(ctx, *h.ApproveTool)
	}
}
