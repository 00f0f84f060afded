package main

import (
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/types/known/timestamppb"
)

func TestStallOf(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 21, 0, 0, 0, time.UTC)
	ev := func(id int64, at time.Duration, typ enumspb.EventType) *historypb.HistoryEvent {
		return &historypb.HistoryEvent{EventId: id, EventTime: timestamppb.New(t0.Add(at)), EventType: typ}
	}
	tests := []struct {
		name string
		evs  []*historypb.HistoryEvent
		want []string
	}{
		{
			name: "a lost workflow task",
			evs: []*historypb.HistoryEvent{
				ev(1, 0, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED),
				ev(2, time.Millisecond, enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED),
				ev(3, 2*time.Millisecond, enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED),
				ev(4, 10*time.Second+2*time.Millisecond, enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT),
				ev(5, 10*time.Second+3*time.Millisecond, enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED),
			},
			want: []string{"WorkflowTaskTimedOut ×1", "longest gap 10s, from WorkflowTaskStarted (event 3) to WorkflowTaskTimedOut (event 4)"},
		},
		{
			name: "a quiet wait, no timeout",
			evs: []*historypb.HistoryEvent{
				ev(1, 0, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED),
				ev(2, 4*time.Second, enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED),
				ev(3, 4*time.Second+time.Millisecond, enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED),
				ev(4, 4*time.Second+2*time.Millisecond, enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED),
			},
			want: []string{"ActivityTaskFailed ×2", "longest gap 4s, from WorkflowExecutionStarted (event 1) to WorkflowTaskScheduled (event 2)"},
		},
		{
			name: "one event",
			evs:  []*historypb.HistoryEvent{ev(1, 0, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED)},
			want: []string{"no timeout or failure"},
		},
	}
	for _, tt := range tests {
		got := stallOf(tt.evs).String()
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: stallOf = %q, want it to say %q", tt.name, got, w)
			}
		}
	}
}
