package workflows

import "github.com/todoflow/todoflow/api"

// approvals are the human answers a run waits for, a component of the run:
// the plan's (approve_plan, plans.go) and a tool call's (approve_tool,
// tool_approval.go). A wait handed over is asked again by the continuation
// (the turn's cursor says which), so only the tools approved for good cross
// in the carry.
type approvals struct {
	// plan is the approve_plan answer, until the waiting startPlan takes
	// it.
	plan *approval
	// toolWait is the tool call waiting for approve_tool, toolAnswer its
	// answer until approveTools takes it; remembered are the tools
	// approved for the rest of the session.
	toolWait   *api.PendingApproval
	toolAnswer *api.ToolApprovalArgs
	remembered []string
	// early is a tool approval the root handed on that crossed the
	// handover of the wait it answers (onHandedToolApproval).
	early *api.ToolApprovalArgs
}

// ApprovalsCarry is the approvals' part of a carry.
type ApprovalsCarry struct {
	// Remembered are the tools approved for the rest of the session.
	Remembered []string `json:"remembered,omitempty"`
}

func newApprovals(c *Carry) approvals {
	if c == nil {
		return approvals{}
	}
	return approvals{remembered: c.Approvals.Remembered}
}

func (p *approvals) carry() ApprovalsCarry { return ApprovalsCarry{Remembered: p.remembered} }

// waiting reports an answer that came for a wait this run handed over
// before it could hand over itself: it is not carried, so the turn goes on
// in this run, where the wait takes it at once.
func (p *approvals) waiting() bool {
	return p.plan != nil || p.toolAnswer != nil || p.early != nil
}
