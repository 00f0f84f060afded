package todo

import (
	"encoding/json"
	"fmt"
)

// Caps on what a model may write into a plan. A plan is in every state
// query, carry and getPlanStatus answer, and its events reach the tree in
// signals: a model told by a file it read to write the longest plan it can
// must not make any of them grow past the server's limits. A call over a
// cap is refused with the cap in its message, so the model can fix it.
const (
	// MaxPlanSteps is the most steps a plan may have.
	MaxPlanSteps = 100
	// MaxPlanTextBytes is the longest any text of a plan tool call may be:
	// a title, a step's description, result or error, a summary, a note.
	MaxPlanTextBytes = MaxItemBytes
	// MaxStepOutputBytes is the largest output a step may hand to the
	// agents waiting on it (completeStepWithOutput), as compact JSON.
	MaxStepOutputBytes = 4 << 10
	// MaxStepDeps is the most steps of other agents one step may wait on.
	MaxStepDeps = 16
	// MaxSubscriptions is the most subscriptions an agent may hold at once
	// (subscribeToTasks); each is in its state, and the root keeps it as a
	// want of the tree.
	MaxSubscriptions = 32
	// MaxPlanBytes is what a plan may take in all, as JSON, counting what
	// the outputs its steps still wait for may add: a call that could take
	// it further is refused.
	MaxPlanBytes = 256 << 10
)

// eventDescriptionRunes is how much of each step's description a
// plan_created event carries: with MaxPlanSteps steps, the event stays a
// small part of a tree message (MaxSignalBytes in package workflows).
const eventDescriptionRunes = 200

// stepOverhead is what a step takes besides its texts (its id, sequence,
// status and empty fields, as JSON).
const stepOverhead = 256

// receivedReserve is what one awaited output may add to the step that
// waits on it: the output, or {"result": ...} (shorter), stored under the
// producer's "agent:step" and again under its provides name.
const receivedReserve = 2 * (MaxStepOutputBytes + 64)

// PlanBytes is what plan p takes against MaxPlanBytes: its JSON and a
// reserve for each output its steps still wait for.
func PlanBytes(p *Plan) int {
	if p == nil {
		return 0
	}
	b, _ := json.Marshal(p)
	n := len(b)
	for _, s := range p.Steps {
		n += len(s.BlockedBy) * receivedReserve
	}
	return n
}

// planRoom refuses a call that could take the active plan past
// MaxPlanBytes. What a call adds to a plan comes from its arguments, new
// steps' overhead and the outputs new dependencies will bring, so their
// sum bounds it. A new plan (createPlan) fits by its caps: at most
// MaxPlanSteps steps of MaxPlanTextBytes (TestPlanCaps).
func (ps *PlanState) planRoom(c Call, a planArgs) *Result {
	var steps, deps int
	switch c.Name {
	case ToolAddStep:
		steps = 1
	case ToolAddDependentStep:
		steps, deps = 1, len(a.refs("depends_on"))
	case ToolStartPlan, ToolSetStepStatus, ToolCompleteStepWithOutput, ToolCompletePlan:
	default:
		return nil // the other tools do not write into the plan
	}
	used := PlanBytes(ps.Plan)
	growth := len(c.Args) + steps*stepOverhead + deps*receivedReserve
	if used+growth <= MaxPlanBytes {
		return nil
	}
	return refusal("the plan takes %d bytes (with room kept for the outputs its steps wait for), and this call could add %d, "+
		"past the %d a plan may take. Keep results short (details belong in files), or finish this plan with completePlan and create a new one.",
		used, growth, MaxPlanBytes)
}

// tooLong is the error of a text over MaxPlanTextBytes.
func tooLong(name string, n int) error {
	return fmt.Errorf("%q is %d bytes: at most %d; keep it short, and put details in a file", name, n, MaxPlanTextBytes)
}

// fullPlan refuses a step past MaxPlanSteps.
func fullPlan(p *Plan) *Result {
	if len(p.Steps) < MaxPlanSteps {
		return nil
	}
	return refusal("plan %s has %d steps, the most a plan may have. Fold the new work into a step, or finish this plan and create a new one.", p.PlanID, len(p.Steps))
}
