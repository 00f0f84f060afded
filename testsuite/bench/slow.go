package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
)

// A run that takes far longer than the others of its round has waited on
// something: a timeout, a retry, a task that no worker took yet. The
// bench reads such runs' histories while the server still has them (it
// deletes the server's database when it ends), so that an outlier sample
// can be explained.

// slowAfter is how much longer than the round's median a run must take to
// be looked at: more than any queueing at 100 runs at once, less than the
// 10 s workflow task timeout a lost task waits.
const slowAfter = 3 * time.Second

// troubleLines is how many slow runs with a timeout or a failure are shown
// one by one; the rest are counted.
const troubleLines = 5

// stall is what a slow run's history shows: its timeouts and failures, by
// event type, and its longest quiet stretch between two events.
type stall struct {
	troubles map[string]int
	gap      time.Duration
	from, to *historypb.HistoryEvent
}

// stallOf reads a history for what could have held it up.
func stallOf(evs []*historypb.HistoryEvent) stall {
	s := stall{troubles: map[string]int{}}
	for i, ev := range evs {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT, enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED,
			enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT, enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED:
			s.troubles[eventName(ev)]++
		}
		if i == 0 {
			continue
		}
		if gap := ev.GetEventTime().AsTime().Sub(evs[i-1].GetEventTime().AsTime()); gap > s.gap {
			s.gap, s.from, s.to = gap, evs[i-1], ev
		}
	}
	return s
}

func eventName(ev *historypb.HistoryEvent) string {
	return strings.TrimPrefix(ev.GetEventType().String(), "EVENT_TYPE_")
}

func (s stall) String() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(s.troubles)) {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, s.troubles[k]))
	}
	troubles := "no timeout or failure"
	if len(parts) > 0 {
		troubles = strings.Join(parts, ", ")
	}
	if s.from == nil {
		return troubles
	}
	return fmt.Sprintf("%s; longest gap %s, from %s (event %d) to %s (event %d)", troubles,
		s.gap.Round(time.Millisecond), eventName(s.from), s.from.GetEventId(), eventName(s.to), s.to.GetEventId())
}

// reportSlow summarises the runs that took slowAfter longer than the
// median of their round (reportSlowOf).
//
// At 100 runs at once most slow runs are ones whose first workflow task
// waited: the worker polls its sticky queue, where the runs under way
// are, as well as the shared one, where new runs start, so a new run can
// wait for others to finish. That is queueing, not a stall.
func (e *env) reportSlow(ctx context.Context, spans map[string]span) {
	took := make(map[string]time.Duration, len(spans))
	for id, sp := range spans {
		took[id] = sp.done.Sub(sp.called)
	}
	reportSlowOf(ctx, e.out, e.c, "run", took)
}

// reportSlowOf summarises the workflows (what, by id) whose time took
// exceeds the median by slowAfter: how many waited where (the longest gap
// of each history, by the two events around it), with the worst of each
// kind; and each one whose history shows a timeout or a failure, on a line
// of its own.
func reportSlowOf(ctx context.Context, out io.Writer, c client.Client, what string, took map[string]time.Duration) {
	if len(took) < 2 {
		return
	}
	med := median(slices.Collect(maps.Values(took)))
	type kind struct {
		n     int
		worst time.Duration
		id    string
	}
	kinds := map[string]*kind{}
	slow, troubled := 0, 0
	troubles := map[string]int{} // of all the slow ones
	for _, id := range slices.Sorted(maps.Keys(took)) {
		if took[id] <= med+slowAfter {
			continue
		}
		slow++
		evs, err := history(ctx, c, id)
		if err != nil {
			fmt.Fprintf(out, "  slow %s %s: %s against a median of %s; its history: %v\n", what, id, took[id].Round(time.Millisecond), med.Round(time.Millisecond), err)
			continue
		}
		st := stallOf(evs)
		if len(st.troubles) > 0 {
			if troubled++; troubled <= troubleLines {
				fmt.Fprintf(out, "  slow %s %s: %s against a median of %s; %s\n", what, id, took[id].Round(time.Millisecond), med.Round(time.Millisecond), st)
			}
			for k, n := range st.troubles {
				troubles[k] += n
			}
		}
		if st.from == nil {
			continue
		}
		gap := eventName(st.from) + " → " + eventName(st.to)
		k := kinds[gap]
		if k == nil {
			k = &kind{}
			kinds[gap] = k
		}
		k.n++
		if st.gap > k.worst {
			k.worst, k.id = st.gap, id
		}
	}
	if slow == 0 {
		return
	}
	if troubled > troubleLines {
		fmt.Fprintf(out, "  %d more slow %ss with a timeout or a failure; in all: %s\n", troubled-troubleLines, what, stall{troubles: troubles})
	}
	var parts []string
	for _, gap := range slices.Sorted(maps.Keys(kinds)) {
		k := kinds[gap]
		parts = append(parts, fmt.Sprintf("%d with the longest gap %s (worst %s, %s)", k.n, gap, k.worst.Round(time.Millisecond), k.id))
	}
	fmt.Fprintf(out, "  %d of %d %ss took over %s more than the median of %s: %s\n",
		slow, len(took), what, slowAfter, med.Round(time.Millisecond), strings.Join(parts, "; "))
}
