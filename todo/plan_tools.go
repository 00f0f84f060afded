package todo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/todoflow/todoflow/internal/text"
)

// PlanOutcome is what one plan tool call produced.
type PlanOutcome struct {
	// Result is the tool result (ignore it when NeedsApproval).
	Result Result
	// NeedsApproval: startPlan with approval required. The workflow waits
	// for the human, then calls Approve or Reject, whose result answers
	// the startPlan call.
	NeedsApproval bool
	// Events are the events the call emitted (already in ps.Events), in order.
	Events []Event
}

// ApplyPlan runs one plan or cross-agent tool call. approvalRequired is false
// when plan_approval is auto: startPlan then starts the plan at once.
func (ps *PlanState) ApplyPlan(c Call, approvalRequired bool) PlanOutcome {
	t, _ := lookup(c.Name)
	if t.Kind == KindAgent {
		return PlanOutcome{Result: planError("%s is run by the workflow, not by the plan tools.", c.Name)}
	}
	if t.Kind != KindPlan {
		return PlanOutcome{Result: planError("%q is not a plan tool; the plan tools are %s.", c.Name, strings.Join(planToolNames, ", "))}
	}
	if ps.Events == nil {
		ps.Events = []Event{}
	}
	if ps.Subscriptions == nil {
		ps.Subscriptions = []Subscription{}
	}
	a, err := parsePlanArgs(c.Name, c.Args)
	if err != nil {
		return PlanOutcome{Result: argError(c.Name, err)}
	}
	if bad := ps.planRoom(c, a); bad != nil {
		return PlanOutcome{Result: *bad}
	}
	before := len(ps.Events)
	out := t.plan(ps, a, approvalRequired)
	out.Events = ps.changed(before)
	return out
}

// stepBrief is a step as tool results show it.
type stepBrief struct {
	StepID      string `json:"step_id"`
	Sequence    int    `json:"sequence"`
	Description string `json:"description"`
	Status      string `json:"status"`
}

func brief(s Step) stepBrief {
	return stepBrief{StepID: s.StepID, Sequence: s.Sequence, Description: s.Description, Status: s.Status}
}

// activePlan returns the plan when it is active, or the error to give.
func (ps *PlanState) activePlan() (*Plan, *Result) {
	if ps.Plan == nil {
		return nil, refusal("there is no plan yet. Create one with createPlan (a title and the steps), then call startPlan.")
	}
	if ps.Plan.Status != PlanActive {
		return nil, refusal("plan %s (%q) is already %s. Create a new plan with createPlan if there is more to do.", ps.Plan.PlanID, ps.Plan.Title, ps.Plan.Status)
	}
	return ps.Plan, nil
}

// startedPlan returns the plan when it is active and started, or the error.
func (ps *PlanState) startedPlan() (*Plan, *Result) {
	p, bad := ps.activePlan()
	if bad != nil {
		return nil, bad
	}
	if !p.Started {
		return nil, refusal("plan %s (%q) has not been started. Call startPlan first; report on steps once it has started.", p.PlanID, p.Title)
	}
	return p, nil
}

// findStep returns the index of step id in p, or the error to give.
func findStep(p *Plan, id string) (int, *Result) {
	i := p.step(id)
	if i < 0 {
		return -1, refusal("unknown step_id %q. The steps of plan %s are: %s.", id, p.PlanID, p.stepIDs())
	}
	return i, nil
}

func (ps *PlanState) createPlan(a planArgs, approvalRequired bool) Result {
	title, steps := a.required("title", "give the plan a short title"), a.steps()
	if a.err != nil {
		return argError(a.tool, a.err)
	}
	replaced := ""
	if p := ps.Plan; p != nil && p.Status == PlanActive {
		if p.Started {
			return planError("plan %s (%q) is started and still active, so it cannot be replaced. "+
				"Finish it first with completePlan (status completed, failed or cancelled), or add to it with addStep.", p.PlanID, p.Title)
		}
		replaced = p.PlanID
	}
	ps.PlanCount++
	p := &Plan{PlanID: "plan_" + strconv.Itoa(ps.PlanCount), Title: strings.TrimSpace(title), Status: PlanActive}
	for i, d := range steps {
		s := newStep("step_"+strconv.Itoa(i+1), d)
		s.Sequence = i + 1
		p.Steps = append(p.Steps, s)
	}
	ps.Plan = p
	ps.AwaitingApproval, ps.ApprovalMessage = false, ""
	briefs := make([]stepBrief, len(p.Steps))
	data := make([]map[string]any, len(p.Steps))
	for i, s := range p.Steps {
		briefs[i] = brief(s)
		// Every agent that hears of the plan keeps this event, so its
		// descriptions are short; getPlanStatus of the plan has them whole.
		data[i] = map[string]any{"step_id": s.StepID, "sequence": s.Sequence, "description": clipRunes(s.Description, eventDescriptionRunes, "…")}
	}
	ps.emit(EventPlanCreated, "", map[string]any{"title": p.Title, "steps": data})
	msg := "Plan created. Call startPlan to ask the user to approve it; do not report on steps before it has started."
	if !approvalRequired {
		msg = "Plan created. Call startPlan to begin it."
	}
	if replaced != "" {
		msg = "It replaces plan " + replaced + ", which had not been started. " + msg
	}
	return planOK(struct {
		PlanID  string      `json:"plan_id"`
		Title   string      `json:"title"`
		Status  string      `json:"status"`
		Started bool        `json:"started"`
		Steps   []stepBrief `json:"steps"`
		Message string      `json:"message"`
	}{p.PlanID, p.Title, p.Status, false, briefs, msg})
}

func (ps *PlanState) startPlan(a planArgs, approvalRequired bool) PlanOutcome {
	msg := a.str("message")
	if a.err != nil {
		return PlanOutcome{Result: argError(a.tool, a.err)}
	}
	p, bad := ps.activePlan()
	if bad != nil {
		return PlanOutcome{Result: *bad}
	}
	if p.Started {
		return PlanOutcome{Result: planError("plan %s (%q) has already started. Go on with its steps (getPlanStatus shows them).", p.PlanID, p.Title)}
	}
	if approvalRequired {
		ps.AwaitingApproval, ps.ApprovalMessage = true, msg
		return PlanOutcome{NeedsApproval: true}
	}
	return PlanOutcome{Result: ps.begin(msg, "", "Plan started (no approval needed).")}
}

// begin starts the current plan and tells the model where to start.
func (ps *PlanState) begin(message, feedback, lead string) Result {
	p := ps.Plan
	p.Started = true
	ps.AwaitingApproval, ps.ApprovalMessage = false, ""
	data := map[string]any{"title": p.Title}
	if message != "" {
		data["message"] = message
	}
	if feedback != "" {
		data["feedback"] = feedback
	}
	ps.emit(EventPlanStarted, "", data)
	var next *stepBrief
	if s, ok := nextStep(p); ok {
		b := brief(s)
		next = &b
	}
	return planOK(struct {
		PlanID   string     `json:"plan_id"`
		Started  bool       `json:"started"`
		Feedback string     `json:"feedback,omitempty"`
		NextStep *stepBrief `json:"next_step,omitempty"`
		Message  string     `json:"message"`
	}{p.PlanID, true, feedback, next, lead + " " + ps.nextHint(p)})
}

// Approve answers a startPlan that waited for approval: the plan starts
// (plan_started) and the result tells the model to go on with the first step.
func (ps *PlanState) Approve(feedback string) PlanOutcome {
	before := len(ps.Events)
	ps.AwaitingApproval = false
	p, bad := ps.activePlan()
	if bad != nil {
		ps.ApprovalMessage = ""
		return PlanOutcome{Result: *bad}
	}
	if p.Started {
		ps.ApprovalMessage = ""
		return PlanOutcome{Result: Result{Content: "The plan was approved and had already started. " + ps.nextHint(p)}}
	}
	lead := "The user approved the plan."
	if feedback = strings.TrimSpace(feedback); feedback != "" {
		lead += " Their note: " + feedback
	}
	r := ps.begin(ps.ApprovalMessage, feedback, lead)
	return PlanOutcome{Result: r, Events: ps.changed(before)}
}

// Reject answers a startPlan that waited for approval with the user's no:
// the plan stays unstarted, and the result (an error, since startPlan did not
// start anything) carries the feedback and the two ways on.
func (ps *PlanState) Reject(feedback string) PlanOutcome {
	ps.AwaitingApproval, ps.ApprovalMessage = false, ""
	var b strings.Builder
	if p := ps.Plan; p != nil {
		fmt.Fprintf(&b, "The user did not approve plan %s (%q); it has not started.", p.PlanID, p.Title)
	} else {
		b.WriteString("The user did not approve the plan.")
	}
	if f := strings.TrimSpace(feedback); f != "" {
		fmt.Fprintf(&b, " Their feedback: %s", f)
	} else {
		b.WriteString(" They gave no reason.")
	}
	b.WriteString(" You may revise the plan with createPlan (it replaces the unstarted plan) and call startPlan again, " +
		"or drop it with completePlan status cancelled. Do not work on its steps until a plan is approved.")
	return PlanOutcome{Result: Result{IsError: true, Content: b.String()}}
}

// nextStep is the step to work on: the one in progress, else the first
// pending one (blocked steps wait on others).
func nextStep(p *Plan) (Step, bool) {
	for _, status := range []string{StepInProgress, StepPending} {
		if i := slices.IndexFunc(p.Steps, func(s Step) bool { return s.Status == status }); i >= 0 {
			return p.Steps[i], true
		}
	}
	return Step{}, false
}

// nextHint tells the model what to do next in a started plan.
func (ps *PlanState) nextHint(p *Plan) string {
	if s, ok := nextStep(p); ok {
		if s.Status == StepInProgress {
			return fmt.Sprintf("Carry on with %s (%s) and report its outcome with setStepStatus.", s.StepID, text.OneLine(s.Description))
		}
		return fmt.Sprintf("Next: %s (%s). Mark it in_progress with setStepStatus when you begin, then report completed, failed or skipped.", s.StepID, text.OneLine(s.Description))
	}
	if on := ps.BlockedOn(); len(on) > 0 {
		return "The remaining steps wait on " + strings.Join(on, ", ") + "; they turn pending by themselves when their dependencies complete."
	}
	prog := ComputeProgress(p.Steps)
	if prog.Failed > 0 {
		return "Every step is finished and some failed: call completePlan with status failed (or completed if the goal was still reached), with a summary."
	}
	return "Every step is finished: call completePlan with status completed and a summary."
}

// settableStatuses are what setStepStatus takes, as its schema's enum says.
var settableStatuses = []string{StepInProgress, StepCompleted, StepFailed, StepSkipped}

func (ps *PlanState) setStepStatus(a planArgs) Result {
	id := a.required("step_id", "name the step, e.g. \"step_1\"")
	status := a.required("status", "one of in_progress, completed, failed, skipped")
	result, errText := a.str("result"), a.str("error")
	if a.err != nil {
		return argError(a.tool, a.err)
	}
	switch status {
	case StepInProgress, StepCompleted, StepFailed, StepSkipped:
	case StepBlocked:
		return planError("a step cannot be set to blocked: steps wait on other agents only through addDependentStep. Use in_progress, completed, failed or skipped.")
	case StepPending:
		return planError("a step cannot be set back to pending. Use in_progress, completed, failed or skipped.")
	default:
		return planError("status %q is not one of %s.", status, strings.Join(settableStatuses, ", "))
	}
	return ps.report(id, status, result, errText, nil)
}

// report is a status report on a step of the started plan, from
// setStepStatus or completeStepWithOutput: the same checks, the same event.
func (ps *PlanState) report(id, status, result, errText string, output json.RawMessage) Result {
	p, bad := ps.startedPlan()
	if bad != nil {
		return *bad
	}
	i, bad := findStep(p, id)
	if bad != nil {
		return *bad
	}
	if r := ps.checkSettable(p, i, status, result, errText); r != nil {
		return *r
	}
	return ps.applyStatus(p, i, status, result, errText, output)
}

// checkSettable applies the rules every status report obeys: not on a blocked
// step, and a completion must be honest and backed by every dependency's output.
func (ps *PlanState) checkSettable(p *Plan, i int, status, result, errText string) *Result {
	s := p.Steps[i]
	if s.Status == StepBlocked {
		return refusal("%s is blocked: it waits on %s, and becomes pending by itself when they complete. "+
			"Work on another step meanwhile, or end your turn to wait (getBlockedSteps shows what it waits for).", s.StepID, refKeys(s.BlockedBy))
	}
	if status != StepCompleted {
		return nil
	}
	for _, text := range []string{result, errText} {
		if ph := FailurePhrase(text); ph != "" {
			return refusal("the report for %s says %q, which means the step did not fully succeed, so it cannot be marked completed. "+
				"Report it with status failed and give the reason as error (or skipped, if it turned out unnecessary). "+
				"Only if the step really succeeded and the phrase describes something else, reword the result.", s.StepID, ph)
		}
	}
	var missing []Ref
	for _, d := range s.DependsOn {
		if _, ok := s.ReceivedOutputs[d.Key()]; !ok {
			missing = append(missing, d)
		}
	}
	if len(missing) > 0 {
		return refusal("%s depends on %s, whose output has not been received, so it cannot be completed yet. "+
			"Wait until they complete, or report the step failed or skipped.", s.StepID, refKeys(missing))
	}
	return nil
}

// applyStatus records a status report and emits its event. Result and error
// are replaced by the report's; output by completeStepWithOutput's (nil for
// setStepStatus). Repeating the same report changes nothing and emits nothing.
func (ps *PlanState) applyStatus(p *Plan, i int, status, result, errText string, output json.RawMessage) Result {
	s := &p.Steps[i]
	if s.Status == status && s.Result == result && s.Error == errText && bytes.Equal(s.Output, output) {
		msg := "Unchanged: " + s.StepID + " already had this status and report. "
		return planOK(stepReport{s.StepID, s.Status, nil, ComputeProgress(p.Steps), msg + ps.nextHint(p)})
	}
	s.Status, s.Result, s.Error, s.Output = status, result, errText, output
	data := map[string]any{"description": s.Description}
	var typ, msg string
	switch status {
	case StepInProgress:
		typ, msg = EventStepStarted, s.StepID+" is in progress."
	case StepCompleted:
		typ, msg = EventStepCompleted, s.StepID+" completed."
		data["result"] = s.Result
		if len(s.Output) > 0 {
			data["output"] = s.Output
		} else {
			data["output"] = nil
		}
		if s.Provides != "" {
			data["provides"] = s.Provides
		}
	case StepFailed:
		typ, msg = EventStepFailed, s.StepID+" recorded as failed."
		data["error"] = s.Error
		if s.Result != "" {
			data["result"] = s.Result
		}
	case StepSkipped:
		typ, msg = EventStepSkipped, s.StepID+" skipped."
		data["result"] = s.Result
	}
	ps.emit(typ, s.StepID, data)
	return planOK(stepReport{s.StepID, s.Status, s.Output, ComputeProgress(p.Steps), msg + " " + ps.nextHint(p)})
}

// stepReport answers a status report.
type stepReport struct {
	StepID   string          `json:"step_id"`
	Status   string          `json:"status"`
	Output   json.RawMessage `json:"output,omitempty"`
	Progress Progress        `json:"progress"`
	Message  string          `json:"message"`
}

func (ps *PlanState) addStep(a planArgs) Result {
	desc, after := a.required("description", "say what the new step does"), a.str("after_step_id")
	if a.err != nil {
		return argError(a.tool, a.err)
	}
	p, bad := ps.activePlan()
	if bad != nil {
		return *bad
	}
	if after != "" {
		if _, bad := findStep(p, after); bad != nil {
			return *bad
		}
	}
	if bad := fullPlan(p); bad != nil {
		return *bad
	}
	s := p.Steps[ps.insertStep(p, strings.TrimSpace(desc), after)]
	return planOK(struct {
		stepBrief
		TotalSteps int    `json:"total_steps"`
		Message    string `json:"message"`
	}{brief(s), len(p.Steps), "Step " + s.StepID + " added at position " + strconv.Itoa(s.Sequence) + "."})
}

// insertStep adds a pending step after the step `after` ("" or unknown: at
// the end), renumbers the sequences, emits step_added and returns the new
// step's index.
func (ps *PlanState) insertStep(p *Plan, desc, after string) int {
	at := len(p.Steps)
	if i := p.step(after); i >= 0 {
		at = i + 1
	}
	p.Steps = slices.Insert(p.Steps, at, newStep(p.nextStepID(), desc))
	for i := range p.Steps {
		p.Steps[i].Sequence = i + 1
	}
	s := p.Steps[at]
	data := map[string]any{"description": s.Description, "sequence": s.Sequence}
	if after != "" {
		data["after_step_id"] = after
	}
	ps.emit(EventStepAdded, s.StepID, data)
	return at
}

func (ps *PlanState) getPlanStatus(planArgs) Result {
	if ps.Plan == nil {
		return planOK(map[string]any{"plan": nil, "message": "There is no plan yet. Create one with createPlan."})
	}
	return Result{Content: planJSON(ps.Current())}
}

func (ps *PlanState) completePlan(a planArgs) Result {
	status, summary := a.required("status", "one of completed, failed, cancelled"), a.str("summary")
	if a.err != nil {
		return argError(a.tool, a.err)
	}
	var typ string
	switch status {
	case PlanCompleted:
		typ = EventPlanCompleted
	case PlanFailed:
		typ = EventPlanFailed
	case PlanCancelled:
		typ = EventPlanCancelled
	default:
		return planError("status %q is not one of completed, failed, cancelled.", status)
	}
	p, bad := ps.activePlan()
	if bad != nil {
		return *bad
	}
	if status != PlanCancelled && !p.Started {
		return planError("plan %s (%q) was never started, so it cannot end %s. Start it with startPlan, or drop it with status cancelled.", p.PlanID, p.Title, status)
	}
	if status == PlanCompleted {
		var open []string
		for _, s := range p.Steps {
			switch s.Status {
			case StepPending, StepInProgress:
				open = append(open, s.StepID+" ("+s.Status+")")
			case StepBlocked:
				open = append(open, s.StepID+" (blocked on "+refKeys(s.BlockedBy)+")")
			}
		}
		if len(open) > 0 {
			return planError("the plan cannot be completed while steps are unfinished: %s. "+
				"Report each of them completed, failed or skipped with setStepStatus first, or end the plan as failed or cancelled.", strings.Join(open, ", "))
		}
	}
	p.Status, p.Summary = status, strings.TrimSpace(summary)
	ps.AwaitingApproval, ps.ApprovalMessage = false, ""
	ps.emit(typ, "", map[string]any{"title": p.Title, "summary": p.Summary, "unfinished": p.unfinishedIDs()})
	return planOK(struct {
		PlanID   string   `json:"plan_id"`
		Status   string   `json:"status"`
		Summary  string   `json:"summary,omitempty"`
		Progress Progress `json:"progress"`
		Message  string   `json:"message"`
	}{p.PlanID, p.Status, p.Summary, ComputeProgress(p.Steps), "Plan " + p.PlanID + " is " + status + "."})
}
