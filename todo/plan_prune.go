package todo

// Prune bounds the event log that a run carries into its continuation: it
// keeps the last keep events and, of the older ones, only what dependency
// resolution still reads (outcomeInLog): the latest step_completed,
// step_failed or step_skipped of each other agent's step, and other agents'
// plan_failed and plan_cancelled events. Event ids are kept, so ids go on
// increasing after a prune. It returns how many events it removed.
func (ps *PlanState) Prune(keep int) int {
	if keep < 0 {
		keep = 0
	}
	n := len(ps.Events)
	if n <= keep {
		return 0
	}
	old := ps.Events[:n-keep]
	// The latest outcome per agent and step, found from the newest back.
	latest := map[[2]string]bool{}
	need := make([]bool, len(old))
	for i := len(old) - 1; i >= 0; i-- {
		ev := old[i]
		if ev.AgentID == ps.AgentID {
			continue
		}
		switch ev.Type {
		case EventStepCompleted, EventStepFailed, EventStepSkipped:
			k := [2]string{ev.AgentID, ev.StepID}
			if !latest[k] {
				latest[k], need[i] = true, true
			}
		case EventPlanFailed, EventPlanCancelled:
			need[i] = true
		}
	}
	kept := make([]Event, 0, keep+len(latest))
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
		first := kept[0].EventID
		i := 0
		for i < len(ps.Delivered) && ps.Delivered[i] < first {
			i++
		}
		ps.Delivered = append([]int{}, ps.Delivered[i:]...)
	}
	return removed
}
