package todo

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/todoflow/todoflow/internal/text"
)

// Cross-agent collaboration (jaato's event bus, made deterministic): each
// agent keeps its own log of its events and of the events of the other agents
// of its run tree that the workflow relays to it (Receive). The log need not
// hold every event of every agent: the workflow relays an agent's events only
// to the agents that subscribed to them or depend on them.
//
// Dependencies (addDependentStep) are resolved against that log, but only
// through their bindings (plan_bind.go): a step waits on steps of a producer
// in the producer's plan that was current when the dependency was added, or
// a later one. A dependency on an agent whose events this log receives is
// bound at once, from the log; one on an agent whose events must first be
// asked for stays unbound (PendingBindings) until the workflow calls Bind;
// one on an agent that is not in the run tree is refused. Only events of the
// bound plans settle a step: a completion stores its output (resolveRef), a
// step failure or skip, or the failure or cancellation of a plan that held
// the step unfinished, fails the dependent step. When nothing is left to
// wait for, the step turns pending (step_unblocked).
//
// The model is told (TakeNotifications) of the other agents' events that
// match its subscriptions, and always of its own steps that a dependency
// unblocked or failed, since those change by themselves.

// Default and largest number of events getTaskEvents returns.
const (
	DefaultTaskEventsLimit = 20
	MaxTaskEventsLimit     = 100
)

func (ps *PlanState) addDependentStep(a planArgs) Result {
	desc, stepID, after, provides := a.str("description"), a.str("step_id"), a.str("after_step_id"), a.str("provides")
	refs := a.refs("depends_on")
	desc, stepID, provides = strings.TrimSpace(desc), strings.TrimSpace(stepID), strings.TrimSpace(provides)
	switch {
	case a.err != nil:
	case (desc == "") == (stepID == ""):
		a.err = fmt.Errorf("give exactly one of %q (to add a new step that waits) or %q (to make an existing step wait)", "description", "step_id")
	case stepID != "" && after != "":
		a.err = fmt.Errorf("%q only places a new step; leave it out when you give %q", "after_step_id", "step_id")
	}
	if a.err != nil {
		return argError(a.tool, a.err)
	}
	for _, r := range refs {
		if r.AgentID == ps.AgentID {
			return planError("%s is a step of your own plan; depends_on names steps of other agents. "+
				"Order your own steps with addStep instead.", r.Key())
		}
	}
	if bad := ps.unknownPeersError(refs); bad != nil {
		return *bad
	}
	p, bad := ps.activePlan()
	if bad != nil {
		return *bad
	}
	var i int
	if stepID != "" {
		if i, bad = findStep(p, stepID); bad != nil {
			return *bad
		}
		switch st := p.Steps[i].Status; st {
		case StepCompleted, StepFailed, StepSkipped:
			return planError("%s is already %s, so it cannot wait on anything. Add a new step with description instead.", stepID, st)
		}
		if n := len(appendNew(slices.Clone(p.Steps[i].DependsOn), refs...)); n > MaxStepDeps {
			return planError("%s would wait on %d steps, and a step may wait on at most %d. Add another step for the rest.", stepID, n, MaxStepDeps)
		}
	} else {
		if bad := fullPlan(p); bad != nil {
			return *bad
		}
		if after != "" {
			if _, bad := findStep(p, after); bad != nil {
				return *bad
			}
		}
		i = ps.insertStep(p, desc, after)
	}
	s := &p.Steps[i]
	if provides != "" {
		s.Provides = provides
	}
	for _, r := range refs {
		s.DependsOn = appendNew(s.DependsOn, r)
		if _, done := s.ReceivedOutputs[r.Key()]; !done {
			s.BlockedBy = appendNew(s.BlockedBy, r)
		}
		// A producer whose events this log receives is bound now, to its
		// current plan; a remote one waits for Bind. An existing binding of
		// the step stays.
		if ps.peer(r.AgentID) == PeerLocal {
			s.bind(r.AgentID, ps.CurrentPlanOf(r.AgentID))
		}
	}
	s.Status = StepBlocked
	ps.emit(EventStepBlocked, s.StepID, map[string]any{"description": s.Description, "blocked_by": refsOrEmpty(s.BlockedBy)})
	settledAt := len(ps.Events)
	ps.resolveFromLog(p, i)
	// The result below tells the model whether the step unblocked or
	// failed: TakeNotifications need not tell it again.
	for _, ev := range ps.Events[settledAt:] {
		if ps.ownNotice(ev) {
			ps.markDelivered(ev.EventID)
		}
	}
	st := p.Steps[i]
	var msg string
	switch st.Status {
	case StepBlocked:
		msg = fmt.Sprintf("%s is blocked until %s complete(s); it turns pending by itself, with their outputs in received_outputs. "+
			"Work on other steps meanwhile, or end your turn to wait.", st.StepID, refKeys(st.BlockedBy))
		switch waiting := st.unbound(); len(waiting) {
		case 0:
		case 1:
			msg += fmt.Sprintf(" %s has not answered yet: the dependency will be bound to %s's current plan when it does, "+
				"and steps of its earlier plans will not count.", waiting[0], waiting[0])
		default:
			msg += fmt.Sprintf(" %s have not answered yet: each dependency will be bound to its agent's current plan when it does, "+
				"and steps of earlier plans will not count.", strings.Join(waiting, ", "))
		}
	case StepPending:
		msg = fmt.Sprintf("Every dependency of %s had already completed: it is pending again and its received_outputs hold their outputs.", st.StepID)
	case StepFailed:
		msg = fmt.Sprintf("%s failed at once: %s", st.StepID, st.Error)
	}
	return planOK(struct {
		stepBrief
		DependsOn       []Ref                      `json:"depends_on"`
		BlockedBy       []Ref                      `json:"blocked_by"`
		ReceivedOutputs map[string]json.RawMessage `json:"received_outputs"`
		Provides        string                     `json:"provides,omitempty"`
		BoundPlans      map[string]string          `json:"bound_plans,omitempty"`
		TotalSteps      int                        `json:"total_steps"`
		Message         string                     `json:"message"`
	}{brief(st), refsOrEmpty(st.DependsOn), refsOrEmpty(st.BlockedBy), outputsOrEmpty(st.ReceivedOutputs), st.Provides, st.BoundPlans, len(p.Steps), msg})
}

func refsOrEmpty(r []Ref) []Ref {
	if r == nil {
		return []Ref{}
	}
	return r
}

func outputsOrEmpty(m map[string]json.RawMessage) map[string]json.RawMessage {
	if m == nil {
		return map[string]json.RawMessage{}
	}
	return m
}

// outcome is what the log says about another agent's step.
type outcome int

const (
	outcomeNone outcome = iota
	outcomeCompleted
	outcomeFailed
)

// outcomeInLog finds the latest event in the log that settles s's ref r:
// its step_completed, or its step_failed / step_skipped, or the failure or
// cancellation of the plan that held it unfinished, among the events of the
// plans s's binding to r's agent admits (that plan or later). The latest one
// wins, so a step completed again in a later plan counts as completed. With
// no binding to r's agent (pending), nothing settles r.
func (ps *PlanState) outcomeInLog(s *Step, r Ref) (outcome, Event, string) {
	oc, at, why := outcomeNone, Event{}, ""
	bound, ok := s.BoundPlans[r.AgentID]
	if !ok {
		return oc, at, why
	}
	for _, ev := range ps.Events {
		if ev.AgentID != r.AgentID || ev.AgentID == ps.AgentID || !admitsPlan(bound, ev.PlanID) {
			continue
		}
		if o, reason := settles(ev, r); o != outcomeNone {
			oc, at, why = o, ev, reason
		}
	}
	return oc, at, why
}

// settles tells whether ev (an event of r's agent) settles r, and if it is a
// failure, why. It does not look at plans: callers first check that the
// step's binding admits ev (Step.admits, admitsPlan).
func settles(ev Event, r Ref) (outcome, string) {
	switch ev.Type {
	case EventStepCompleted:
		if ev.StepID == r.StepID {
			return outcomeCompleted, ""
		}
	case EventStepFailed, EventStepSkipped:
		if ev.StepID == r.StepID {
			return outcomeFailed, dependencyReason(ev, r)
		}
	case EventPlanFailed, EventPlanCancelled:
		if planHeldUnfinished(ev, r.StepID) {
			return outcomeFailed, dependencyReason(ev, r)
		}
	}
	return outcomeNone, ""
}

// planHeldUnfinished reports whether a plan_failed / plan_cancelled event
// lists stepID among the plan's unfinished steps. An event without that list
// (not emitted by this package) counts for every step.
func planHeldUnfinished(ev Event, stepID string) bool {
	raw, ok := eventData(ev)["unfinished"]
	if !ok {
		return true
	}
	var ids []string
	if json.Unmarshal(raw, &ids) != nil {
		return true
	}
	return slices.Contains(ids, stepID)
}

// dependencyReason words why a dependency will never complete.
func dependencyReason(ev Event, r Ref) string {
	d := eventData(ev)
	switch ev.Type {
	case EventStepFailed:
		return fmt.Sprintf("dependency %s failed: %s", r.Key(), cmp.Or(dataString(d, "error"), "no reason was given"))
	case EventStepSkipped:
		return fmt.Sprintf("dependency %s was skipped: %s", r.Key(), cmp.Or(dataString(d, "result"), "no reason was given"))
	default:
		verb := "failed"
		if ev.Type == EventPlanCancelled {
			verb = "was cancelled"
		}
		return fmt.Sprintf("dependency %s will not complete: %s's plan %s (%q) %s before that step completed: %s",
			r.Key(), r.AgentID, ev.PlanID, dataString(d, "title"), verb, cmp.Or(dataString(d, "summary"), "no summary was given"))
	}
}

// resolveFromLog settles the refs of step i that the log already answers,
// through the step's bindings (unbound refs stay): completions resolve
// (their output is stored), a failure fails the step. When nothing is left
// to wait for, the step turns pending (step_unblocked).
func (ps *PlanState) resolveFromLog(p *Plan, i int) {
	var failRef Ref
	failure := ""
	for _, r := range append([]Ref(nil), p.Steps[i].BlockedBy...) {
		oc, ev, why := ps.outcomeInLog(&p.Steps[i], r)
		switch oc {
		case outcomeCompleted:
			resolveRef(&p.Steps[i], r, ev)
		case outcomeFailed:
			if failure == "" {
				failRef, failure = r, why
			}
		}
	}
	switch {
	case failure != "":
		ps.failDependent(p, i, failRef, failure)
	case len(p.Steps[i].BlockedBy) == 0:
		ps.unblock(p, i)
	}
}

// resolveRef records a completed dependency: the ref leaves BlockedBy and
// the output is stored under "agent:step", and also under the producer's
// provides name when its event carries one. A completion without structured
// output is stored as {"result": "<its result text>"}, so that every
// resolved dependency has an entry (completing the step requires one).
func resolveRef(s *Step, r Ref, ev Event) {
	out := s.BlockedBy[:0:0]
	for _, b := range s.BlockedBy {
		if b != r {
			out = append(out, b)
		}
	}
	s.BlockedBy = out
	d := eventData(ev)
	value, ok := d["output"]
	if !ok || string(value) == "null" || len(value) == 0 {
		value = dataJSON(map[string]any{"result": dataString(d, "result")})
	}
	value = append(json.RawMessage(nil), value...)
	if s.ReceivedOutputs == nil {
		s.ReceivedOutputs = map[string]json.RawMessage{}
	}
	s.ReceivedOutputs[r.Key()] = value
	if name := dataString(d, "provides"); name != "" {
		s.ReceivedOutputs[name] = value
	}
}

// unblock turns a step whose dependencies all resolved pending again.
func (ps *PlanState) unblock(p *Plan, i int) {
	s := &p.Steps[i]
	s.Status = StepPending
	ps.emit(EventStepUnblocked, s.StepID, map[string]any{"description": s.Description, "received": text.SortedKeys(s.ReceivedOutputs)})
}

// failDependent fails step i visibly because a dependency will never complete.
func (ps *PlanState) failDependent(p *Plan, i int, r Ref, reason string) {
	s := &p.Steps[i]
	s.Status = StepFailed
	s.Error = reason
	ps.emit(EventStepFailed, s.StepID, map[string]any{"description": s.Description, "error": reason, "dependency": r})
}

// Receive records an event of another agent of the same run tree, relayed by
// the workflow: it joins this log with the log's next event_id (its agent_id
// kept) and settles the dependencies of the active plan's blocked steps whose
// binding to the event's agent admits the event's plan (steps bound to a
// later plan, or not bound yet, ignore it; it stays in the log for Bind):
//   - step_completed of a ref: the ref resolves and its output is stored
//     (see resolveRef); when none is left the step turns pending and
//     step_unblocked is emitted;
//   - step_failed or step_skipped of a ref, or plan_failed / plan_cancelled
//     of the plan that held the ref's step unfinished: the dependent step
//     fails with an error that says which dependency and why (step_failed).
//
// It returns the events it emitted itself, not the received one. An event of
// this agent itself (or of no agent) is ignored.
func (ps *PlanState) Receive(ev Event) []Event {
	if ev.AgentID == "" || ev.AgentID == ps.AgentID {
		return nil
	}
	ev.EventID = ps.nextEventID()
	if len(ev.Data) == 0 || string(ev.Data) == "null" {
		ev.Data = json.RawMessage(`{}`)
	} else {
		ev.Data = append(json.RawMessage(nil), ev.Data...)
	}
	ps.Events = append(ps.Events, ev)
	before := len(ps.Events)
	p := ps.active()
	if p == nil {
		return nil
	}
	for i := range p.Steps {
		s := &p.Steps[i]
		if s.Status != StepBlocked || !s.admits(ev) {
			continue
		}
		switch ev.Type {
		case EventStepCompleted:
			r := Ref{AgentID: ev.AgentID, StepID: ev.StepID}
			if slices.Contains(s.BlockedBy, r) {
				resolveRef(s, r, ev)
				if len(s.BlockedBy) == 0 {
					ps.unblock(p, i)
				}
			}
		case EventStepFailed, EventStepSkipped, EventPlanFailed, EventPlanCancelled:
			for _, r := range s.BlockedBy {
				if r.AgentID != ev.AgentID {
					continue
				}
				if oc, why := settles(ev, r); oc == outcomeFailed {
					ps.failDependent(p, i, r, why)
					break
				}
			}
		}
	}
	return ps.changed(before)
}

// AgentEnded is called when the workflow of agentID ended (how: failed,
// cancelled, terminated, completed...) while steps of this agent's active plan
// still waited on it: each such step fails visibly with the reason, since its
// dependencies can no longer complete. It returns the emitted events.
//
// A step whose binding to agentID is still pending fails too: the workflow
// relays the agent's events and calls Bind before it reports the end.
func (ps *PlanState) AgentEnded(agentID, how string) []Event {
	if strings.TrimSpace(how) == "" {
		how = "ended"
	}
	return ps.failWaitingOn(agentID, func(waiting []Ref) string {
		return fmt.Sprintf("agent %s ended (%s) without completing %s, which this step depends on", agentID, how, refKeys(waiting))
	})
}

// delivered reports whether the event id was already handed to the model.
func (ps *PlanState) delivered(id int) bool {
	_, ok := slices.BinarySearch(ps.Delivered, id)
	return ok
}

// markDelivered records the id, keeping Delivered sorted.
func (ps *PlanState) markDelivered(id int) {
	if i, ok := slices.BinarySearch(ps.Delivered, id); !ok {
		ps.Delivered = slices.Insert(ps.Delivered, i, id)
	}
}

func (ps *PlanState) completeStepWithOutput(a planArgs) Result {
	id, output, result := a.required("step_id", "name the step, e.g. \"step_1\""), a.object("output"), a.str("result")
	if a.err != nil {
		return argError(a.tool, a.err)
	}
	return ps.report(id, StepCompleted, result, "", output)
}

func (ps *PlanState) getBlockedSteps(a planArgs) Result {
	planID := a.str("plan_id")
	if a.err != nil {
		return argError(a.tool, a.err)
	}
	p := ps.Plan
	if p == nil {
		if planID != "" {
			return planError("unknown plan_id %q: there is no plan yet.", planID)
		}
		return planOK(map[string]any{"blocked_steps": []any{}, "count": 0, "message": "There is no plan yet."})
	}
	if planID != "" && planID != p.PlanID {
		return planError("unknown plan_id %q: your current plan is %s (earlier plans are not kept). Leave plan_id out to read it.", planID, p.PlanID)
	}
	type blocked struct {
		StepID          string                     `json:"step_id"`
		Sequence        int                        `json:"sequence"`
		Description     string                     `json:"description"`
		BlockedBy       []Ref                      `json:"blocked_by"`
		DependsOn       []Ref                      `json:"depends_on"`
		ReceivedOutputs map[string]json.RawMessage `json:"received_outputs"`
	}
	list := []blocked{}
	for _, s := range p.Steps {
		if s.Status == StepBlocked {
			list = append(list, blocked{s.StepID, s.Sequence, s.Description, refsOrEmpty(s.BlockedBy), refsOrEmpty(s.DependsOn), outputsOrEmpty(s.ReceivedOutputs)})
		}
	}
	res := struct {
		PlanID       string    `json:"plan_id"`
		BlockedSteps []blocked `json:"blocked_steps"`
		Count        int       `json:"count"`
		Message      string    `json:"message,omitempty"`
	}{PlanID: p.PlanID, BlockedSteps: list, Count: len(list)}
	if len(list) == 0 {
		res.Message = "No step is blocked."
	}
	return planOK(res)
}
