package activities

import (
	"slices"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	enums "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"

	"github.com/todoflow/todoflow/model"
)

func TestFirstNeeded(t *testing.T) {
	for _, tt := range []struct {
		name  string
		spans []Span
		head  int
		want  int
	}{
		{"the head only", []Span{{0, 2}}, 2, -1},
		{"the head and a tail", []Span{{0, 2}, {40, 60}}, 2, 40},
		{"one span from the start", []Span{{0, 60}}, 2, 2},
		{"spans out of order", []Span{{50, 51}, {10, 12}}, 2, 10},
		{"an empty span", []Span{{5, 5}}, 2, -1},
		{"a continued run's carried head", []Span{{0, 30}}, 29, 29},
		{"nothing", nil, 2, -1},
	} {
		if got := firstNeeded(tt.spans, tt.head); got != tt.want {
			t.Errorf("%s: firstNeeded(%v, %d) = %d, want %d", tt.name, tt.spans, tt.head, got, tt.want)
		}
	}
}

// The head a run's first page holds for good: the system prompt and the
// first user message of a new run; a continued run's carried messages but
// the last, which a retried turn may take back.
func TestStableHead(t *testing.T) {
	dc := converter.GetDefaultDataConverter()
	started := func(in any) []*historypb.HistoryEvent {
		ps, err := dc.ToPayloads(in)
		if err != nil {
			t.Fatal(err)
		}
		return []*historypb.HistoryEvent{{EventId: 1, EventType: enums.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
			Attributes: &historypb.HistoryEvent_WorkflowExecutionStartedEventAttributes{
				WorkflowExecutionStartedEventAttributes: &historypb.WorkflowExecutionStartedEventAttributes{Input: ps}}}}
	}
	carried := make([]model.Message, 12)
	for _, tt := range []struct {
		name string
		evs  []*historypb.HistoryEvent
		want int
	}{
		{"a new run", started(map[string]any{"prompt": "hi"}), 2},
		{"a continued run", started(map[string]any{"carry": map[string]any{"messages": carried}}), 11},
		{"no start in the page", nil, 2},
	} {
		if got := stableHead(tt.evs, dc); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}

// merged puts the first page and the events read back from the end in
// history's order.
func TestMerged(t *testing.T) {
	ev := func(id int64) *historypb.HistoryEvent { return &historypb.HistoryEvent{EventId: id} }
	got := merged([]*historypb.HistoryEvent{ev(1), ev(2)}, []*historypb.HistoryEvent{ev(9), ev(8), ev(7)})
	var ids []int64
	for _, e := range got {
		ids = append(ids, e.GetEventId())
	}
	if want := []int64{1, 2, 7, 8, 9}; !slices.Equal(ids, want) {
		t.Errorf("merged ids %v, want %v", ids, want)
	}
}

// newFrom finds where a model call's new messages start, and nothing in a
// retry (no new messages) or another activity.
func TestNewFrom(t *testing.T) {
	dc := converter.GetDefaultDataConverter()
	sched := func(name string, in any) *historypb.HistoryEvent {
		ps, err := dc.ToPayloads(in)
		if err != nil {
			t.Fatal(err)
		}
		return &historypb.HistoryEvent{EventId: 5, EventType: enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
			Attributes: &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{
				ActivityType: &commonpb.ActivityType{Name: name}, Input: ps}}}
	}
	msgs := make([]model.Message, 9)
	for _, tt := range []struct {
		name   string
		ev     *historypb.HistoryEvent
		from   int
		exists bool
	}{
		{"a first attempt", sched(CallModelName, CallModelInput{New: NewMessagesOf(msgs, 7, 0)}), 7, true},
		{"a retry", sched(CallModelName, CallModelInput{}), 0, false},
		{"a tool", sched(RunToolName, RunToolInput{}), 0, false},
	} {
		if from, ok := newFrom(tt.ev, dc); from != tt.from || ok != tt.exists {
			t.Errorf("%s: %d, %v; want %d, %v", tt.name, from, ok, tt.from, tt.exists)
		}
	}
}
