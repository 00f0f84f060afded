package todo

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Prune bounds the event log that a run carries into its continuation: it
// keeps the last keep events that fit in keepBytes of JSON (Latest) and, of
// the older ones, only what is still read:
//
//   - by binding-aware dependency resolution (outcomeInLog, Bind): of each
//     other agent, the latest step_completed, step_failed or step_skipped of
//     each of its steps, and its plan_failed and plan_cancelled events, in
//     the plans some binding may still admit: the agent's current plan (a new
//     dependency binds to it) and later, or, while blocked steps of the
//     active plan wait on the agent, from the earliest plan they are bound to
//     (every plan while a binding to it is pending);
//   - by CurrentPlanOf: the latest plan_created of each other agent;
//   - by Broker.Serve on the root's log, which hands a new dependent of
//     this agent what it needs:
//     this agent's own plan_created, latest outcome of each step, and
//     plan_failed / plan_cancelled, of its current plan.
//
// Event ids are kept, so ids go on increasing after a prune. It returns how
// many events it removed.
func (ps *PlanState) Prune(keep, keepBytes int) int {
	keep = len(Latest(ps.Events, max(keep, 0), keepBytes))
	n := len(ps.Events)
	if n <= keep {
		return 0
	}
	old := ps.Events[:n-keep]
	floor := ps.readableFrom()
	ownPlan := ps.CurrentPlanOf(ps.AgentID)
	// Found from the newest back: the latest outcome per agent and step,
	// the latest plan_created per agent.
	latest := map[[2]string]bool{}
	created := map[string]bool{}
	need := make([]bool, len(old))
	for i := len(old) - 1; i >= 0; i-- {
		ev := old[i]
		if ev.AgentID == ps.AgentID {
			if ownPlan == "" || ev.PlanID != ownPlan {
				continue
			}
		} else if ev.Type != EventPlanCreated && planNumber(ev.PlanID) < floor[ev.AgentID] {
			continue // no binding admits that plan any more
		}
		switch ev.Type {
		case EventPlanCreated:
			if !created[ev.AgentID] {
				created[ev.AgentID], need[i] = true, true
			}
		case EventStepCompleted, EventStepFailed, EventStepSkipped:
			k := [2]string{ev.AgentID, ev.StepID}
			if !latest[k] {
				latest[k], need[i] = true, true
			}
		case EventPlanFailed, EventPlanCancelled:
			need[i] = true
		}
	}
	kept := make([]Event, 0, keep+len(latest)+len(created))
	for i, ev := range old {
		if need[i] {
			kept = append(kept, ev)
		}
	}
	kept = append(kept, ps.Events[n-keep:]...)
	removed := n - len(kept)
	ps.Events = kept
	// Delivery marks of removed events mean nothing any more.
	if len(kept) > 0 {
		i, _ := slices.BinarySearch(ps.Delivered, kept[0].EventID)
		ps.Delivered = append([]int{}, ps.Delivered[i:]...)
	}
	ps.Pruned += removed
	return removed
}

// readableFrom gives, per other agent, the number of the earliest plan
// whose events a binding may still admit: the agent's current plan (the
// binding of a dependency added from now on), lowered to the binding of
// every blocked step of the active plan that waits on it (0, every plan,
// while that binding is pending). An agent absent from the map reads 0.
func (ps *PlanState) readableFrom() map[string]int {
	floor := map[string]int{}
	for _, ev := range ps.Events {
		if ev.Type == EventPlanCreated && ev.AgentID != ps.AgentID {
			floor[ev.AgentID] = planNumber(ev.PlanID) // the latest one wins
		}
	}
	p := ps.active()
	if p == nil {
		return floor
	}
	for i := range p.Steps {
		s := &p.Steps[i]
		if s.Status != StepBlocked {
			continue
		}
		for _, r := range s.BlockedBy {
			from := 0
			if b, ok := s.BoundPlans[r.AgentID]; ok {
				from = planNumber(b)
			}
			if from < floor[r.AgentID] {
				floor[r.AgentID] = from
			}
		}
	}
	return floor
}

// Thin bounds what the log's events take, the ones Prune keeps because
// dependency resolution reads them included, to at most budget bytes of
// JSON, for a carry at every bound at once: from the oldest on, an event's
// data is cut to its provides name, its step's description (short) and a
// result that says what was left out and where it is. A dependency that
// resolves on a thinned event then hands the waiting step that note, not
// the output. It returns how many events it thinned.
func (ps *PlanState) Thin(budget int) int {
	total := 0
	sizes := make([]int, len(ps.Events))
	for i, ev := range ps.Events {
		b, _ := json.Marshal(ev)
		sizes[i] = len(b) + 1
		total += sizes[i]
	}
	thinned := 0
	for i := 0; i < len(ps.Events) && total > budget; i++ {
		ev := &ps.Events[i]
		d := eventData(*ev)
		thin := map[string]any{"result": fmt.Sprintf("(left out of the log this run carried; %s's plan %s has it: ask that agent)", ev.AgentID, ev.PlanID)}
		if s := dataString(d, "description"); s != "" {
			thin["description"] = clipRunes(s, eventDescriptionRunes, "…")
		}
		if s := dataString(d, "provides"); s != "" {
			thin["provides"] = s
		}
		data := dataJSON(thin)
		if len(data) >= len(ev.Data) {
			continue
		}
		ev.Data = data
		b, _ := json.Marshal(*ev)
		total -= sizes[i] - (len(b) + 1)
		thinned++
	}
	return thinned
}
