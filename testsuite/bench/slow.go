package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
)

// A run that takes far longer than the others of its round has waited on
// something: a timeout, a retry, a task that no worker took. The bench
// names such runs while their histories are still on the server (it
// deletes the server's database when it ends), so that a stall seen once
// in a hundred samples can be explained.

// slowAfter is how much longer than the round's median a run must take to
// be looked at: more than any queueing at 100 runs at once, less than the
// 10 s workflow task timeout a lost task waits.
const slowAfter = 3 * time.Second

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

// reportSlow prints a line for each run that took slowAfter longer than
// the median of its round, with what its history shows.
func (e *env) reportSlow(ctx context.Context, took map[string]time.Duration) {
	if len(took) < 2 {
		return
	}
	ds := make([]time.Duration, 0, len(took))
	for _, d := range took {
		ds = append(ds, d)
	}
	med := median(ds)
	for _, id := range slices.Sorted(maps.Keys(took)) {
		if took[id] <= med+slowAfter {
			continue
		}
		evs, err := e.history(ctx, id)
		if err != nil {
			fmt.Fprintf(e.out, "  slow run %s: %s against a median of %s; its history: %v\n", id, took[id].Round(time.Millisecond), med.Round(time.Millisecond), err)
			continue
		}
		fmt.Fprintf(e.out, "  slow run %s: %s against a median of %s; %s\n", id, took[id].Round(time.Millisecond), med.Round(time.Millisecond), stallOf(evs))
	}
}
