package todo

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Binding a dependency to a plan of its producer.
//
// A Ref names a step of another agent ("impl:step_1") but no plan, and an
// agent numbers its steps afresh in each plan: plan_2's step_1 is not
// plan_1's. A dependency added while impl runs plan_2 must therefore not be
// settled by plan_1's step_1, still in the log. So every step binds each
// producer it depends on to a plan (Step.BoundPlans): the producer's plan
// that is current when the dependency is added, or a later one, never an
// earlier one. Only events of the bound plan or a later plan of that
// producer settle the step's refs to it: a completion resolves, a step
// failure, a skip, or the failure or cancellation of a plan that held the
// step unfinished fails the dependent step. Events of earlier plans are
// recorded in the log and ignored for that step.
//
// Plans are compared by number: "plan_N" is N (PlanCount counts from 1).
// An id that is not of that form (empty, malformed) counts as 0, "unknown",
// which is before every plan: a binding to "" or to a malformed id admits
// every plan of the producer, and an event whose plan id is empty or
// malformed counts only for such a binding.
//
// Where a binding comes from depends on what the workflow knows of the
// producer (PlanState.Peers, asked by addDependentStep):
//   - PeerLocal: this log receives every event of the producer (a child, or
//     any agent when Peers is nil), so the binding is made at once, to the
//     plan of the producer's latest plan_created in the log ("" when there is
//     none yet: every plan it makes is later);
//   - PeerRemote: the producer exists or is being spawned, but its events
//     reach this log only once asked for. The binding stays pending (the
//     producer is absent from BoundPlans, PendingBindings lists it) until
//     the workflow has asked the producer's keeper and calls Bind with the
//     producer's current plan, after relaying that plan's events (the
//     root's Broker.Serve reads them from its log);
//   - PeerUnknown: the agent is not in the tree and cannot appear:
//     addDependentStep refuses the call. If the workflow learns that only
//     later, FailDependency fails the steps that wait on it.
//
// A step whose binding to a producer is pending is never settled by that
// producer's events; AgentEnded and FailDependency still fail it, so a
// workflow relays a producer's events and binds before it reports that the
// producer ended.

// PeerKind is what the workflow knows of another agent of the run tree.
type PeerKind int

const (
	// PeerLocal: this log receives every event of the agent, so a
	// dependency on it is bound at once, from the log.
	PeerLocal PeerKind = iota
	// PeerRemote: the agent exists or may (its spawn is pending), but its
	// events reach this log only once asked for: the binding comes later,
	// through Bind.
	PeerRemote
	// PeerUnknown: the agent is not in the tree and cannot appear: a
	// dependency on it is refused.
	PeerUnknown
)

// Peers is the workflow's directory of the run tree, as addDependentStep
// needs it.
type Peers interface {
	// Peer says what is known of agentID.
	Peer(agentID string) PeerKind
	// Known lists the agent ids to name in a refusal, sorted.
	Known() []string
}

// peer is ps.Peers.Peer, PeerLocal when no directory is set.
func (ps *PlanState) peer(agentID string) PeerKind {
	if ps.Peers == nil {
		return PeerLocal
	}
	return ps.Peers.Peer(agentID)
}

// knownPeers is ps.Peers.Known, sorted and without duplicates, for messages.
func (ps *PlanState) knownPeers() []string {
	if ps.Peers == nil {
		return nil
	}
	return slices.Compact(slices.Sorted(slices.Values(ps.Peers.Known())))
}

// unknownPeersError is the refusal of a dependency on agents that are not
// in the run tree (nil when every ref names a known or possible agent).
func (ps *PlanState) unknownPeersError(refs []Ref) *Result {
	var unknown []string
	for _, r := range refs {
		if ps.peer(r.AgentID) == PeerUnknown {
			unknown = appendNew(unknown, r.AgentID)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	known := cmp.Or(strings.Join(ps.knownPeers(), ", "), "none")
	const hint = "depends_on names agents spawned in this tree; spawn it first or check the id. Nothing was changed."
	if len(unknown) == 1 {
		return refusal("agent %q is not in this run tree (known: %s). %s", unknown[0], known, hint)
	}
	q := make([]string, len(unknown))
	for i, id := range unknown {
		q[i] = strconv.Quote(id)
	}
	return refusal("agents %s are not in this run tree (known: %s). %s", strings.Join(q, ", "), known, hint)
}

// planNumber is N of a plan id "plan_N" (N >= 1); 0, "unknown", for ""
// or any other form. Plans are ordered by it.
func planNumber(id string) int {
	rest, ok := strings.CutPrefix(id, "plan_")
	if !ok || rest == "" || rest[0] < '1' || rest[0] > '9' {
		return 0
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// admitsPlan reports whether an event of plan planID counts for a binding
// to bound: its plan is bound or a later one. Bound "" (or malformed)
// admits every plan; an event of an unknown plan counts only for it.
func admitsPlan(bound, planID string) bool {
	return planNumber(planID) >= planNumber(bound)
}

// admits reports whether ev can settle the step's refs to ev's agent: the
// step is bound to that agent and ev's plan is the bound plan or later.
func (s *Step) admits(ev Event) bool {
	b, ok := s.BoundPlans[ev.AgentID]
	return ok && admitsPlan(b, ev.PlanID)
}

// bind records a binding of the step to agentID unless it has one: an
// existing binding is never moved.
func (s *Step) bind(agentID, planID string) bool {
	if _, ok := s.BoundPlans[agentID]; ok {
		return false
	}
	if s.BoundPlans == nil {
		s.BoundPlans = map[string]string{}
	}
	s.BoundPlans[agentID] = planID
	return true
}

// unbound lists the distinct agents of the step's blocked_by refs that have
// no binding, in ref order.
func (s *Step) unbound() []string {
	var out []string
	for _, r := range s.BlockedBy {
		if _, ok := s.BoundPlans[r.AgentID]; !ok {
			out = appendNew(out, r.AgentID)
		}
	}
	return out
}

// Bind binds to plan planID of agentID every blocked step of the active
// plan that waits on agentID and has no binding to it yet, then settles
// those steps from the log, as addDependentStep does: completions of the
// bound plan or later resolve (step_unblocked when nothing is left), a
// failure fails the step (step_failed). A step already bound to agentID
// keeps its binding, whether planID is earlier or later. planID "" binds to
// every plan of agentID (it had none). It returns the events it emitted.
func (ps *PlanState) Bind(agentID, planID string) []Event {
	p := ps.active()
	if p == nil || agentID == "" || agentID == ps.AgentID {
		return nil
	}
	before := len(ps.Events)
	for i := range p.Steps {
		s := &p.Steps[i]
		if s.Status != StepBlocked || !slices.Contains(s.unbound(), agentID) {
			continue
		}
		s.bind(agentID, planID)
		ps.resolveFromLog(p, i)
	}
	return ps.changed(before)
}

// PendingBindings lists, sorted, the agents that blocked steps of the
// active plan wait on without a binding: the workflow asks their keepers
// for their current plan and events, then calls Bind.
func (ps *PlanState) PendingBindings() []string {
	p := ps.active()
	if p == nil {
		return nil
	}
	var out []string
	for _, s := range p.Steps {
		if s.Status == StepBlocked {
			out = appendNew(out, s.unbound()...)
		}
	}
	slices.Sort(out)
	return out
}

// FailDependency fails, visibly, every blocked step of the active plan that
// waits on agentID (step_failed with the reason as error and the first ref
// to agentID as data "dependency"): the workflow learned that the agent is
// not in the run tree, so those dependencies can never complete. A blank
// reason is worded here. It returns the emitted events.
func (ps *PlanState) FailDependency(agentID, reason string) []Event {
	reason = strings.TrimSpace(reason)
	return ps.failWaitingOn(agentID, func(waiting []Ref) string {
		if reason != "" {
			return reason
		}
		return fmt.Sprintf("agent %s is not in this run tree, so %s, which this step depends on, can never complete", agentID, refKeys(waiting))
	})
}

// failWaitingOn fails every blocked step of the active plan that still
// waits on agentID, with the error reason(refs it waits on), and returns
// the emitted events. AgentEnded and FailDependency share it.
func (ps *PlanState) failWaitingOn(agentID string, reason func(waiting []Ref) string) []Event {
	p := ps.active()
	if p == nil || agentID == "" {
		return nil
	}
	before := len(ps.Events)
	for i := range p.Steps {
		s := &p.Steps[i]
		if s.Status != StepBlocked {
			continue
		}
		var waiting []Ref
		for _, r := range s.BlockedBy {
			if r.AgentID == agentID {
				waiting = append(waiting, r)
			}
		}
		if len(waiting) == 0 {
			continue
		}
		ps.failDependent(p, i, waiting[0], reason(waiting))
	}
	return ps.changed(before)
}

// CurrentPlanOf is the plan agentID is running as far as this log knows:
// the plan id of its latest plan_created event in the log ("" when there is
// none). For this agent itself it is its own current plan's id ("" before
// the first plan).
func (ps *PlanState) CurrentPlanOf(agentID string) string {
	if agentID == ps.AgentID {
		if ps.Plan == nil {
			return ""
		}
		return ps.Plan.PlanID
	}
	for i := len(ps.Events) - 1; i >= 0; i-- {
		if ev := ps.Events[i]; ev.AgentID == agentID && ev.Type == EventPlanCreated {
			return ev.PlanID
		}
	}
	return ""
}
