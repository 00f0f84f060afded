package workflows

// What a parent shows of its subtree (a child's brief, its counters) and
// the human waits anywhere in the tree, answered at the root and handed on.

import (
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/todo"
)

// brief is this agent's counters for its parent.
func (a *agent) brief() Brief {
	items := a.todo.List()
	b := Brief{
		Status:           a.status,
		Turns:            a.turns,
		ModelCalls:       a.modelCalls,
		TodosTotal:       len(items),
		TodosCompleted:   todo.CountStatus(items, todo.Completed),
		Paused:           a.todo.Paused,
		PauseReason:      a.todo.PauseReason,
		AwaitingApproval: a.plans.AwaitingApproval || a.toolWait != nil,
		ModelError:       a.modelError,
		Usage:            a.usage,
		TreeUsage:        a.treeUsage(),
		Waiting:          a.waiting(),
	}
	if cur, ok := todo.Current(items); ok {
		b.Current = shorten(cur.Content, 200)
	}
	if p := a.plans.Current(); p != nil {
		pr := todo.ComputeProgress(p.Steps)
		b.PlanID, b.PlanStatus, b.StepsTotal, b.StepsCompleted = p.PlanID, p.Status, pr.Total, pr.Completed
	}
	return b
}

// sendBrief tells the parent of a status change that came without an
// event (a pause, a wait, a subtree's wait), once per change.
func (a *agent) sendBrief(ctx workflow.Context) {
	if a.isRoot() {
		return
	}
	if a.bus.brief != nil && sameBrief(*a.bus.brief, a.brief()) {
		return
	}
	b := a.nextBrief()
	a.signal(ctx, a.parentID, TaskEvent{From: a.cfg.agentID, Brief: &b})
}

// nextBrief is the brief to send the parent now, numbered, and remembered
// as the last one sent.
func (a *agent) nextBrief() Brief {
	b := a.brief()
	a.bus.briefs++
	b.Seq = a.bus.briefs
	a.bus.brief = &b
	return b
}

// sameBrief compares what a parent shows without an event: the status and
// the waits (the counters go with the next event).
func sameBrief(x, y Brief) bool {
	return x.Status == y.Status && slices.Equal(x.Waiting, y.Waiting) && x.Paused == y.Paused && x.AwaitingApproval == y.AwaitingApproval
}

// state is a running child's entry in state.subagents: its counters (Live),
// its status and its waits; the child's own state query answers the rest.
func (b *Brief) state(id string) State {
	return State{
		AgentID:          id,
		Status:           b.Status,
		Turns:            b.Turns,
		ModelCalls:       b.ModelCalls,
		Todos:            []todo.Item{},
		Events:           []todo.Event{},
		Subagents:        map[string]State{},
		Reporters:        []ReporterStatus{},
		Paused:           b.Paused,
		PauseReason:      b.PauseReason,
		AwaitingApproval: b.AwaitingApproval,
		ModelError:       b.ModelError,
		Usage:            b.Usage,
		TreeUsage:        b.TreeUsage,
		Waiting:          b.Waiting,
		Live:             b,
	}
}

// waiting lists the human waits of this agent's subtree, its own first.
func (a *agent) waiting() []Wait {
	var ws []Wait
	switch {
	case a.todo.Paused && len(a.inbox) == 0:
		ws = append(ws, Wait{AgentID: a.cfg.agentID, Kind: WaitPaused, Reason: a.todo.PauseReason})
	case a.plans.AwaitingApproval && a.answer == nil:
		ws = append(ws, Wait{AgentID: a.cfg.agentID, Kind: WaitPlanApproval, Reason: a.plans.ApprovalMessage})
	case a.toolWait != nil && a.toolAnswer == nil:
		ws = append(ws, Wait{AgentID: a.cfg.agentID, Kind: WaitToolApproval, Reason: a.toolWait.reason(), CallID: a.toolWait.CallID})
	}
	for _, id := range a.childOrder {
		if ch := a.children[id]; !ch.Done && ch.Brief != nil {
			for _, w := range ch.Brief.Waiting {
				if !slices.Contains(a.bus.handed, w) {
					ws = append(ws, w)
				}
			}
		}
	}
	return ws
}

// forgetHanded drops the handed-on answers whose waits are over.
func (a *agent) forgetHanded() {
	a.bus.handed = slices.DeleteFunc(a.bus.handed, func(w Wait) bool {
		for _, id := range a.childOrder {
			if ch := a.children[id]; !ch.Done && ch.Brief != nil && slices.Contains(ch.Brief.Waiting, w) {
				return false
			}
		}
		return true
	})
}

// shownStatus is the status the root shows: a human wait anywhere in its
// tree, when it does not wait for a human itself, is its status too, so
// that a user (or a scenario) sees where the tree stands.
func (a *agent) shownStatus() string {
	switch a.status {
	case StatusPaused, StatusAwaitingApproval, StatusCompleted, StatusFailed, StatusContinued:
		return a.status
	}
	if !a.isRoot() {
		return a.status
	}
	for _, w := range a.waiting() {
		switch w.Kind {
		case WaitPaused:
			return StatusPaused
		case WaitPlanApproval, WaitToolApproval:
			return StatusAwaitingApproval
		}
	}
	return a.status
}

// waitFor picks the wait of the tree a human's answer is for: the one of
// agentID, or the only one of that kind.
func (a *agent) waitFor(kind, agentID string) (Wait, error) {
	var match []Wait
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
		return Wait{}, fmt.Errorf("agents %s all wait for this; name one with agent_id", strings.Join(ids, ", "))
	case agentID != "":
		return Wait{}, fmt.Errorf("agent %q does not wait for this", agentID)
	}
	return Wait{}, fmt.Errorf("no agent of this run tree waits for this")
}

// handOn sends a human's answer to the agent of the tree it is for.
func (a *agent) handOn(ctx workflow.Context, agentID string, te TaskEvent) error {
	wfID := ""
	if m := a.bus.member(agentID); m != nil && m.Ended == "" {
		wfID = m.WorkflowID
	}
	if wfID == "" {
		return fmt.Errorf("agent %q is not running in this run tree", agentID)
	}
	te.From = a.cfg.agentID
	a.signal(ctx, wfID, te)
	return nil
}
