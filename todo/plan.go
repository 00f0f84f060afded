package todo

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// This file holds jaato's plan model as todoflow keeps it: one plan per agent
// with ordered steps, the events every change emits, the subscriptions to
// other agents' events, and the queries the workflow asks of them. The tools
// that change a plan are in plan_tools.go, the cross-agent part (dependencies,
// subscriptions, received events) in plan_deps.go and the text views in
// plan_view.go.
//
// Everything here is deterministic: ids are counters (plan_1, step_1, sub_1,
// event ids 1, 2, 3...), nothing reads a clock, and JSON objects built from
// maps are marshalled with sorted keys.

// Plan statuses. A plan is active from createPlan until completePlan.
const (
	PlanActive    = "active"
	PlanCompleted = "completed"
	PlanFailed    = "failed"
	PlanCancelled = "cancelled"
)

// Step statuses. Blocked is set only by cross-agent dependencies
// (addDependentStep) and cleared when they resolve; the model sets the others.
const (
	StepPending    = "pending"
	StepInProgress = "in_progress"
	StepCompleted  = "completed"
	StepFailed     = "failed"
	StepSkipped    = "skipped"
	StepBlocked    = "blocked"
)

// Event types, part of the public contract, the same twelve jaato publishes on its bus.
const (
	EventPlanCreated   = "plan_created"
	EventPlanStarted   = "plan_started"
	EventPlanCompleted = "plan_completed"
	EventPlanFailed    = "plan_failed"
	EventPlanCancelled = "plan_cancelled"
	EventStepAdded     = "step_added"
	EventStepStarted   = "step_started"
	EventStepCompleted = "step_completed"
	EventStepFailed    = "step_failed"
	EventStepSkipped   = "step_skipped"
	EventStepBlocked   = "step_blocked"
	EventStepUnblocked = "step_unblocked"
)

// EventTypes lists every event type in the contract's order.
var EventTypes = []string{
	EventPlanCreated, EventPlanStarted, EventPlanCompleted, EventPlanFailed, EventPlanCancelled,
	EventStepAdded, EventStepStarted, EventStepCompleted, EventStepFailed, EventStepSkipped,
	EventStepBlocked, EventStepUnblocked,
}

// Ref names a step of another agent's plan. It carries no plan id: the step
// that holds it binds each producer to a plan (Step.BoundPlans), and the ref
// matches that step id in the bound plan or a later one of the producer
// (jaato's "latest plan", without an earlier plan's leftovers).
type Ref struct {
	AgentID string `json:"agent_id"`
	StepID  string `json:"step_id"`
}

// Key is the ReceivedOutputs key of the ref: "agent:step".
func (r Ref) Key() string { return r.AgentID + ":" + r.StepID }

// Step is one step of a plan.
//
// Provides (jaato's meaning) names this step's own output for the agents that
// depend on it: when the step completes, its step_completed event carries the
// name, and every dependent step of another agent stores the received output
// under that name as well as under "agent:step". It is set with
// addDependentStep's `provides` argument.
type Step struct {
	StepID      string `json:"step_id"`
	Sequence    int    `json:"sequence"`
	Description string `json:"description"`
	Status      string `json:"status"`
	Result      string `json:"result"`
	Error       string `json:"error"`
	// DependsOn are every cross-agent dependency the step was given,
	// BlockedBy the ones not resolved yet.
	DependsOn []Ref `json:"depends_on"`
	BlockedBy []Ref `json:"blocked_by"`
	// ReceivedOutputs holds the outputs of resolved dependencies by
	// "agent:step" (and by the producer's provides name, if any).
	ReceivedOutputs map[string]json.RawMessage `json:"received_outputs"`
	// Output is the structured output of completeStepWithOutput (null when none).
	Output   json.RawMessage `json:"output"`
	Provides string          `json:"provides,omitempty"`
	// BoundPlans binds each producer agent the step depends on to the
	// earliest plan of that agent whose events count for the step (see
	// plan_bind.go): events of that plan or a later one settle its refs,
	// events of earlier plans never do. "" means any plan of the producer
	// (it had none when bound). A producer absent from the map is a pending
	// binding: none of its events settle the step until Bind is called.
	BoundPlans map[string]string `json:"bound_plans,omitempty"`
}

// MarshalJSON writes empty collections as [] and {}, never null, whatever
// state the step was built or decoded in.
func (s Step) MarshalJSON() ([]byte, error) {
	type plain Step
	p := plain(s)
	if p.DependsOn == nil {
		p.DependsOn = []Ref{}
	}
	if p.BlockedBy == nil {
		p.BlockedBy = []Ref{}
	}
	if p.ReceivedOutputs == nil {
		p.ReceivedOutputs = map[string]json.RawMessage{}
	}
	if len(p.Output) == 0 {
		p.Output = nil
	}
	return json.Marshal(p)
}

// Progress counts a plan's steps by status.
type Progress struct {
	Total      int     `json:"total"`
	Completed  int     `json:"completed"`
	Failed     int     `json:"failed"`
	Skipped    int     `json:"skipped"`
	InProgress int     `json:"in_progress"`
	Pending    int     `json:"pending"`
	Blocked    int     `json:"blocked"`
	Percent    float64 `json:"percent"`
}

// Plan is an agent's plan.
type Plan struct {
	PlanID   string   `json:"plan_id"`
	Title    string   `json:"title"`
	Status   string   `json:"status"`
	Started  bool     `json:"started"`
	Steps    []Step   `json:"steps"`
	Progress Progress `json:"progress"`
	Summary  string   `json:"summary,omitempty"`
}

// MarshalJSON writes a plan with its progress recomputed from its steps and
// its steps as [] when there are none.
func (p Plan) MarshalJSON() ([]byte, error) {
	type plain Plan
	q := plain(p)
	if q.Steps == nil {
		q.Steps = []Step{}
	}
	q.Progress = ComputeProgress(p.Steps)
	return json.Marshal(q)
}

// Event is one entry of an agent's event log.
type Event struct {
	EventID int    `json:"event_id"`
	Type    string `json:"type"`
	AgentID string `json:"agent_id"`
	PlanID  string `json:"plan_id"`
	StepID  string `json:"step_id"`
	// Data is a JSON object, {} when there is nothing to add. Keys by type:
	//   plan_created: title, steps [{step_id, sequence, description}]
	//   plan_started: title, message (startPlan's), feedback (the approver's)
	//   plan_completed, plan_failed, plan_cancelled: title, summary,
	//     unfinished (ids of the steps that were not completed)
	//   step_added: description, sequence, after_step_id
	//   step_started: description
	//   step_completed: description, result, output (null when none), provides
	//   step_failed: description, error, dependency (when a dependency caused it)
	//   step_skipped: description, result
	//   step_blocked: description, blocked_by
	//   step_unblocked: description, received (the "agent:step" keys resolved)
	Data json.RawMessage `json:"data"`
}

// Subscription asks for other agents' events to be delivered to the model.
type Subscription struct {
	ID         string   `json:"id"`
	AgentID    string   `json:"agent_id"` // "" or "*": any agent
	EventTypes []string `json:"event_types"`
	PlanID     string   `json:"plan_id,omitempty"`
	StepID     string   `json:"step_id,omitempty"`
}

// Number is the subscription's number, n of its id "sub_n": subscriptions
// are numbered in the order they were made, and never reuse a number.
func (s Subscription) Number() int {
	n, _ := strconv.Atoi(strings.TrimPrefix(s.ID, "sub_"))
	return n
}

// Matches reports whether ev passes the subscription's filters. It does not
// know the subscriber: PlanState skips the subscriber's own events.
func (s Subscription) Matches(ev Event) bool {
	if s.AgentID != "" && s.AgentID != "*" && s.AgentID != ev.AgentID {
		return false
	}
	if s.PlanID != "" && s.PlanID != ev.PlanID {
		return false
	}
	if s.StepID != "" && s.StepID != ev.StepID {
		return false
	}
	return slices.Contains(s.EventTypes, ev.Type)
}

// PlanState is one agent's whole plan state. It lives in workflow state, is
// carried through continue-as-new as JSON (every field that matters is
// exported) and is shown by the state query.
type PlanState struct {
	AgentID string `json:"agent_id"`
	// Plan is the current or most recent plan (nil before the first).
	Plan *Plan `json:"plan"`
	// PlanCount numbers plans: plan_1, plan_2, ...
	PlanCount int `json:"plan_count"`
	// Events is this agent's event log: its own events and the events of
	// other agents it received, event_id 1, 2, 3... in the order recorded.
	Events        []Event        `json:"events"`
	Subscriptions []Subscription `json:"subscriptions"`
	// AwaitingApproval is set while startPlan waits for the human.
	AwaitingApproval bool `json:"awaiting_approval"`
	// ApprovalMessage is startPlan's message to the approver, kept while
	// the approval is awaited.
	ApprovalMessage string `json:"approval_message,omitempty"`
	// SubscriptionCount numbers subscriptions: sub_1, sub_2, ...
	SubscriptionCount int `json:"subscription_count"`
	// Delivered are the ids of the events already handed to the model by
	// TakeNotifications (or told in a tool result, see addDependentStep),
	// ascending.
	Delivered []int `json:"delivered"`
	// Pruned counts the events Prune left out of the log, for the total
	// the state shows.
	Pruned int `json:"pruned,omitempty"`
	// Peers is what the workflow knows of the other agents of the run tree,
	// set before a tool is applied; nil treats every agent as PeerLocal. It
	// is not state: it is never marshalled.
	Peers Peers `json:"-"`
}

// NewPlanState returns the empty plan state of an agent.
func NewPlanState(agentID string) *PlanState {
	return &PlanState{AgentID: agentID, Events: []Event{}, Subscriptions: []Subscription{}, Delivered: []int{}}
}

// Restored makes a plan state decoded from continue-as-new's JSON answer as
// the state it was encoded from: a step that holds no output (a step
// completed by setStepStatus) comes back from JSON as null, and without this
// the same report repeated after the handover is not seen as unchanged and
// emits its event again. The workflow calls it under a patch (a v0.1.0 run
// replays with the event).
func (ps *PlanState) Restored() {
	if ps.Plan == nil {
		return
	}
	for i := range ps.Plan.Steps {
		if string(ps.Plan.Steps[i].Output) == "null" {
			ps.Plan.Steps[i].Output = nil
		}
	}
}

// NullOutputs reports whether a step holds an output that JSON brought back
// as null: whether Restored would change anything. The workflow asks for
// the patch only then, so that a run with nothing to restore records no
// marker for it.
func (ps *PlanState) NullOutputs() bool {
	return ps.Plan != nil && slices.ContainsFunc(ps.Plan.Steps, func(s Step) bool { return string(s.Output) == "null" })
}

// ComputeProgress counts steps by status. Percent is completed/total*100
// rounded to one decimal, half away from zero (integer arithmetic, so 1/3
// gives exactly 33.3 and 1/16 gives 6.3); 0 when there are no steps.
func ComputeProgress(steps []Step) Progress {
	p := Progress{Total: len(steps)}
	for _, s := range steps {
		switch s.Status {
		case StepCompleted:
			p.Completed++
		case StepFailed:
			p.Failed++
		case StepSkipped:
			p.Skipped++
		case StepInProgress:
			p.InProgress++
		case StepPending:
			p.Pending++
		case StepBlocked:
			p.Blocked++
		}
	}
	p.Percent = PercentOf(p.Completed, p.Total)
	return p
}

// PercentOf is part/total*100 rounded to one decimal, half up, for a count
// part (not negative); 0 when total is not positive.
func PercentOf(part, total int) float64 {
	if total <= 0 {
		return 0
	}
	return float64((2000*part+total)/(2*total)) / 10
}

// FormatPercent writes a percentage with one decimal, dropping a trailing
// ".0": 50 -> "50", 33.3 -> "33.3".
func FormatPercent(p float64) string {
	s := strconv.FormatFloat(p, 'f', 1, 64)
	return strings.TrimSuffix(s, ".0")
}

// Current returns a copy of the plan with its progress recomputed, nil before
// the first plan. It does not change ps (queries may call it).
func (ps *PlanState) Current() *Plan {
	if ps.Plan == nil {
		return nil
	}
	cp := *ps.Plan
	cp.Progress = ComputeProgress(cp.Steps)
	return &cp
}

// active returns the plan when it is active, else nil.
func (ps *PlanState) active() *Plan {
	if ps.Plan == nil || ps.Plan.Status != PlanActive {
		return nil
	}
	return ps.Plan
}

// UnfinishedSteps returns the descriptions of the pending and in-progress
// steps of a started, active plan, in sequence order: what the finalization
// guard counts. Blocked steps wait on other agents and are not counted.
func (ps *PlanState) UnfinishedSteps() []string {
	p := ps.active()
	if p == nil || !p.Started {
		return nil
	}
	var out []string
	for _, s := range p.Steps {
		if s.Status == StepPending || s.Status == StepInProgress {
			out = append(out, s.Description)
		}
	}
	return out
}

// BlockedOn returns the distinct agent ids that blocked steps of the active
// plan still wait on, sorted.
func (ps *PlanState) BlockedOn() []string {
	p := ps.active()
	if p == nil {
		return nil
	}
	var out []string
	for _, s := range p.Steps {
		if s.Status == StepBlocked {
			for _, r := range s.BlockedBy {
				out = appendNew(out, r.AgentID)
			}
		}
	}
	slices.Sort(out)
	return out
}

// changed ends a change of the plan state: the stored progress recomputed,
// and a copy of the events logged from index from on.
func (ps *PlanState) changed(from int) []Event {
	if ps.Plan != nil {
		ps.Plan.Progress = ComputeProgress(ps.Plan.Steps)
	}
	return append([]Event(nil), ps.Events[from:]...)
}

// step returns the index of the step with id, or -1.
func (p *Plan) step(id string) int {
	return slices.IndexFunc(p.Steps, func(s Step) bool { return s.StepID == id })
}

// stepIDs lists the plan's step ids in sequence order, for error messages.
func (p *Plan) stepIDs() string {
	ids := make([]string, len(p.Steps))
	for i, s := range p.Steps {
		ids[i] = s.StepID
	}
	return strings.Join(ids, ", ")
}

// nextStepID continues the plan's creation numbering: one more than the
// highest step_N in it.
func (p *Plan) nextStepID() string {
	n := 0
	for _, s := range p.Steps {
		if v, err := strconv.Atoi(strings.TrimPrefix(s.StepID, "step_")); err == nil && v > n {
			n = v
		}
	}
	return "step_" + strconv.Itoa(n+1)
}

// unfinishedIDs lists the ids of the steps that are not completed.
func (p *Plan) unfinishedIDs() []string {
	out := []string{}
	for _, s := range p.Steps {
		if s.Status != StepCompleted {
			out = append(out, s.StepID)
		}
	}
	return out
}

// newStep returns a step with empty collections.
func newStep(id, description string) Step {
	return Step{
		StepID:          id,
		Description:     description,
		Status:          StepPending,
		DependsOn:       []Ref{},
		BlockedBy:       []Ref{},
		ReceivedOutputs: map[string]json.RawMessage{},
	}
}

// nextEventID is one more than the last event's id.
func (ps *PlanState) nextEventID() int {
	if n := len(ps.Events); n > 0 {
		return ps.Events[n-1].EventID + 1
	}
	return 1
}

// emit appends an event of this agent about its current plan (and step, when
// stepID is not empty) to the log.
func (ps *PlanState) emit(typ, stepID string, data map[string]any) {
	ps.Events = append(ps.Events, Event{
		EventID: ps.nextEventID(),
		Type:    typ,
		AgentID: ps.AgentID,
		PlanID:  ps.CurrentPlanOf(ps.AgentID),
		StepID:  stepID,
		Data:    dataJSON(data),
	})
}

// dataJSON marshals an event's data (map keys sorted by encoding/json).
func dataJSON(data map[string]any) json.RawMessage {
	if len(data) == 0 {
		return json.RawMessage(`{}`)
	}
	b, err := json.Marshal(data)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return b
}

// eventData decodes an event's data object; an empty map when it is not one.
func eventData(ev Event) map[string]json.RawMessage {
	m := map[string]json.RawMessage{}
	if len(ev.Data) > 0 {
		_ = json.Unmarshal(ev.Data, &m)
		if m == nil {
			m = map[string]json.RawMessage{}
		}
	}
	return m
}

// dataString reads a string field of an event's data, "" when absent.
func dataString(m map[string]json.RawMessage, key string) string {
	var s string
	if raw, ok := m[key]; ok {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

// appendNew appends to list the values of add it does not hold yet, in order.
func appendNew[T comparable](list []T, add ...T) []T {
	for _, v := range add {
		if !slices.Contains(list, v) {
			list = append(list, v)
		}
	}
	return list
}

// refKeys renders refs as "agent:step, agent:step".
func refKeys(refs []Ref) string {
	ks := make([]string, len(refs))
	for i, r := range refs {
		ks[i] = r.Key()
	}
	return strings.Join(ks, ", ")
}
