package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"
)

// What one step costs, read from the runs' histories (the server's own
// timestamps) and from the worker's RPC counts: where the time of an agent
// run goes that a bare run does not spend.

// history returns every event of a workflow's runs, oldest first.
func history(ctx context.Context, c client.Client, id string) ([]*historypb.HistoryEvent, error) {
	var out []*historypb.HistoryEvent
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("history of %s: %w", id, err)
		}
		out = append(out, ev)
	}
	return out, nil
}

// intervals of one activity and the workflow task it wakes: scheduled ->
// started (dispatch), started -> completed (the activity's work),
// completed -> workflow task started, and the workflow task itself up to the
// next command.
type intervals struct {
	dispatch, execute, toTask, task time.Duration
}

// stepIntervals splits a history into its activities' intervals, by
// activity type.
func stepIntervals(evs []*historypb.HistoryEvent) map[string][]intervals {
	out := map[string][]intervals{}
	byID := map[int64]*historypb.HistoryEvent{}
	for _, ev := range evs {
		byID[ev.GetEventId()] = ev
	}
	for i, ev := range evs {
		done := ev.GetActivityTaskCompletedEventAttributes()
		if done == nil {
			continue
		}
		sched, start := byID[done.GetScheduledEventId()], byID[done.GetStartedEventId()]
		if sched == nil || start == nil {
			continue
		}
		iv := intervals{
			dispatch: start.GetEventTime().AsTime().Sub(sched.GetEventTime().AsTime()),
			execute:  ev.GetEventTime().AsTime().Sub(start.GetEventTime().AsTime()),
		}
		// The workflow task this completion woke: the next started and
		// completed workflow task events.
		var wtStart, wtDone time.Time
		for _, next := range evs[i+1:] {
			switch next.GetEventType() {
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
				if wtStart.IsZero() {
					wtStart = next.GetEventTime().AsTime()
				}
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
				if !wtStart.IsZero() {
					wtDone = next.GetEventTime().AsTime()
				}
			}
			if !wtDone.IsZero() {
				break
			}
		}
		if !wtDone.IsZero() {
			iv.toTask = wtStart.Sub(ev.GetEventTime().AsTime())
			iv.task = wtDone.Sub(wtStart)
		}
		name := sched.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()
		out[name] = append(out[name], iv)
	}
	return out
}

// ends are the parts of a run outside its activities' steps: from its
// start to its first activity, and from its last activity's completion to
// the run's, and the whole run, by the server's clock; and the driver's
// side (the server and the driver share the machine's clock): from its
// call that starts the run to the run's first event, and from the run's
// last event to the driver's having the result.
type ends struct{ head, tail, whole, call, result time.Duration }

// driverSide adds the driver's side of a run, from its span, to x.
func driverSide(x ends, evs []*historypb.HistoryEvent, sp span) ends {
	if len(evs) == 0 || sp.called.IsZero() {
		return x
	}
	x.call = evs[0].GetEventTime().AsTime().Sub(sp.called)
	x.result = sp.done.Sub(evs[len(evs)-1].GetEventTime().AsTime())
	return x
}

func runEnds(evs []*historypb.HistoryEvent) ends {
	if len(evs) == 0 {
		return ends{}
	}
	at := func(ev *historypb.HistoryEvent) time.Time { return ev.GetEventTime().AsTime() }
	start, end := at(evs[0]), at(evs[len(evs)-1])
	var first, last time.Time
	for _, ev := range evs {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			if first.IsZero() {
				first = at(ev)
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			last = at(ev)
		}
	}
	return ends{head: first.Sub(start), tail: end.Sub(last), whole: end.Sub(start)}
}

// eventCounts counts a history's events and their bytes by type; the
// SDK's own upserts (the TemporalChangeVersion attribute that every
// workflow.GetVersion sets) apart from the workflow's.
func eventCounts(evs []*historypb.HistoryEvent) (map[string]int, map[string]int) {
	n, b := map[string]int{}, map[string]int{}
	for _, ev := range evs {
		t := strings.TrimPrefix(ev.GetEventType().String(), "EVENT_TYPE_")
		if up := ev.GetUpsertWorkflowSearchAttributesEventAttributes(); up != nil {
			if _, ok := up.GetSearchAttributes().GetIndexedFields()["TemporalChangeVersion"]; ok {
				t += " (TemporalChangeVersion)"
			}
		}
		n[t]++
		b[t] += proto.Size(ev)
	}
	return n, b
}

// upsertsPerTask counts the workflow tasks by how many of the workflow's
// own upserts (TemporalChangeVersion aside) they made.
func upsertsPerTask(evs []*historypb.HistoryEvent) map[int]int {
	out := map[int]int{}
	n, open := 0, false
	for _, ev := range evs {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			if open {
				out[n]++
			}
			n, open = 0, true
		case enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
			if _, ok := ev.GetUpsertWorkflowSearchAttributesEventAttributes().GetSearchAttributes().GetIndexedFields()["TemporalChangeVersion"]; !ok {
				n++
			}
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
			if open {
				out[n]++
			}
			n, open = 0, false
		}
	}
	if open {
		out[n]++
	}
	return out
}

// measureSteps plays runs one at a time, agent and baseline, and prints
// where a model call's time, RPCs and history bytes go.
func (e *env) measureSteps(ctx context.Context, runs int) error {
	before, err := e.w.stats(false)
	if err != nil {
		return err
	}
	_, agentSpans, err := e.batch(ctx, 1, runs, e.agentRun)
	if err != nil {
		return err
	}
	after, err := e.w.stats(false)
	if err != nil {
		return err
	}
	agentRPC := sub(after.RPC, before.RPC)
	_, baseSpans, err := e.batch(ctx, 1, runs, e.baselineRun)
	if err != nil {
		return err
	}
	final, err := e.w.stats(false)
	if err != nil {
		return err
	}
	baseRPC := sub(final.RPC, after.RPC)

	perTask := map[int]int{}
	runs2 := map[bool][]ends{}
	collect := func(spans map[string]span) (map[string][]intervals, map[string]int, map[string]int, error) {
		ivs := map[string][]intervals{}
		n, b := map[string]int{}, map[string]int{}
		for _, id := range slices.Sorted(maps.Keys(spans)) {
			evs, err := history(ctx, e.c, id)
			if err != nil {
				return nil, nil, nil, err
			}
			agent := strings.HasPrefix(id, "bench-agent")
			if agent {
				for k, v := range upsertsPerTask(evs) {
					perTask[k] += v
				}
			}
			runs2[agent] = append(runs2[agent], driverSide(runEnds(evs), evs, spans[id]))
			for k, v := range stepIntervals(evs) {
				ivs[k] = append(ivs[k], v...)
			}
			cn, cb := eventCounts(evs)
			for k := range cn {
				n[k] += cn[k]
				b[k] += cb[k]
			}
		}
		return ivs, n, b, nil
	}
	agentIv, agentN, agentB, err := collect(agentSpans)
	if err != nil {
		return err
	}
	baseIv, baseN, baseB, err := collect(baseSpans)
	if err != nil {
		return err
	}

	w := e.out
	fmt.Fprintf(w, "\nOne activity and the workflow task it wakes, medians over %d runs one at a time (server timestamps):\n\n", runs)
	fmt.Fprintln(w, "| activity | scheduled → started | started → completed | completed → workflow task started | workflow task | sum |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	row := func(name string, ivs []intervals) {
		pick := func(f func(intervals) time.Duration) time.Duration {
			xs := make([]time.Duration, len(ivs))
			for i, iv := range ivs {
				xs[i] = f(iv)
			}
			return median(xs)
		}
		d, x, t, k := pick(func(i intervals) time.Duration { return i.dispatch }), pick(func(i intervals) time.Duration { return i.execute }),
			pick(func(i intervals) time.Duration { return i.toTask }), pick(func(i intervals) time.Duration { return i.task })
		fmt.Fprintf(w, "| %s (%d) | %s | %s | %s | %s | %s |\n", name, len(ivs), ms(d), ms(x), ms(t), ms(k), ms(d+x+t+k))
	}
	for _, name := range slices.Sorted(maps.Keys(agentIv)) {
		row(name, agentIv[name])
	}
	for _, name := range slices.Sorted(maps.Keys(baseIv)) {
		row("baseline "+name, baseIv[name])
	}
	endRow := func(name string, es []ends) {
		pick := func(f func(ends) time.Duration) time.Duration {
			xs := make([]time.Duration, len(es))
			for i, x := range es {
				xs[i] = f(x)
			}
			return median(xs)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", name,
			ms(pick(func(x ends) time.Duration { return x.call })),
			ms(pick(func(x ends) time.Duration { return x.head })),
			ms(pick(func(x ends) time.Duration { return x.tail })),
			ms(pick(func(x ends) time.Duration { return x.result })),
			ms(pick(func(x ends) time.Duration { return x.whole })))
	}
	fmt.Fprintln(w, "\n| run | driver's start call → run started | started → first activity scheduled | last activity completed → run completed | completed → driver has the result | whole run (server clock) |\n|---|---|---|---|---|---|")
	endRow("agent", runs2[true])
	endRow("baseline", runs2[false])

	calls := float64(runs * runModelCalls)
	fmt.Fprintf(w, "\nThe worker's calls to the server per model call (agent: %d runs of %d model calls and %d tool calls; baseline: per %d no-op activities, the same count of steps):\n\n",
		runs, runModelCalls, runToolCalls, runModelCalls+runToolCalls)
	fmt.Fprintln(w, "| RPC | agent, per model call | bytes sent + received per model call | baseline, per model call's worth |")
	fmt.Fprintln(w, "|---|---|---|---|")
	names := slices.Collect(maps.Keys(agentRPC))
	for k := range baseRPC {
		if _, ok := agentRPC[k]; !ok {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		a, b := agentRPC[k], baseRPC[k]
		fmt.Fprintf(w, "| %s | %.2f | %s | %.2f |\n", k, float64(a.Calls)/calls, thousands(int64(float64(a.Sent+a.Recv)/calls)), float64(b.Calls)/calls)
	}

	fmt.Fprintf(w, "\nHistory per model call (agent) and per model call's worth of steps (baseline):\n\n")
	fmt.Fprintln(w, "| event | agent, events | agent, bytes | baseline, events | baseline, bytes |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	types := slices.Collect(maps.Keys(agentN))
	for k := range baseN {
		if _, ok := agentN[k]; !ok {
			types = append(types, k)
		}
	}
	sort.Strings(types)
	var ta, tb, na, nb int
	for _, k := range types {
		fmt.Fprintf(w, "| %s | %.2f | %s | %.2f | %s |\n", k, float64(agentN[k])/calls, thousands(int64(float64(agentB[k])/calls)),
			float64(baseN[k])/calls, thousands(int64(float64(baseB[k])/calls)))
		na, ta, nb, tb = na+agentN[k], ta+agentB[k], nb+baseN[k], tb+baseB[k]
	}
	fmt.Fprintf(w, "| **all** | **%.2f** | **%s** | **%.2f** | **%s** |\n", float64(na)/calls, thousands(int64(float64(ta)/calls)), float64(nb)/calls, thousands(int64(float64(tb)/calls)))
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(perTask)) {
		parts = append(parts, fmt.Sprintf("%d with %d", perTask[k], k))
	}
	fmt.Fprintf(w, "\nThe agent's workflow tasks by the number of its own upserts (TemporalChangeVersion aside): %s.\n", strings.Join(parts, ", "))
	return nil
}
