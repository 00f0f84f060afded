package transcript

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/api"

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
		{"a continued run", started(map[string]any{"carry": map[string]any{"window": map[string]any{"messages": carried}}}), 11},
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
		{"a first attempt", sched(api.ModelCallActivity, callInput{New: NewMessagesOf(msgs, 7, 0)}), 7, true},
		{"a retry", sched(api.ModelCallActivity, callInput{}), 0, false},
		{"a tool", sched(api.ToolActivity, toolInput{}), 0, false},
	} {
		if from, ok := newFrom(tt.ev, dc); from != tt.from || ok != tt.exists {
			t.Errorf("%s: %d, %v; want %d, %v", tt.name, from, ok, tt.from, tt.exists)
		}
	}
}

// longHistory builds a run of turns turns as AgentWorkflow records them:
// each a user message by update, a model call that calls read_file, the
// tool's result (the last one over HeldOver, so that the call after it
// names it by digest), and a model call that answers, with filler events
// (workflow tasks) between them so that the run spans many pages, and gap
// more between the last tool's result and the call that sends it.
func longHistory(t *testing.T, turns, filler, gap int) ([]*historypb.HistoryEvent, []model.Message) {
	t.Helper()
	h := &eventLog{t: t, dc: converter.GetDefaultDataConverter()}
	fill := func(n int) {
		for range n {
			h.add(enums.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, nil)
		}
	}
	h.start(map[string]any{"prompt": ""})
	msgs := []model.Message{{Role: model.RoleSystem, Content: "system", ToolCalls: []model.ToolCall{}}}
	sent := 0
	call := func(resp model.Response) {
		id := h.schedule(api.ModelCallActivity, callInput{New: NewMessagesOf(msgs, sent, 0)})
		sent = len(msgs)
		fill(filler)
		h.complete(id, resp)
		msgs = append(msgs, model.Message{Role: model.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls})
	}
	for i := 1; i <= turns; i++ {
		text := fmt.Sprintf("message %d", i)
		h.update("send_message", text)
		msgs = append(msgs, model.Message{Role: model.RoleUser, Content: text, ToolCalls: []model.ToolCall{}})
		callID := fmt.Sprintf("c%d", i)
		call(model.Response{ToolCalls: []model.ToolCall{{ID: callID, Name: "read_file", Arguments: json.RawMessage(`{"path":"log"}`)}}})
		result := fmt.Sprintf("log of turn %d", i)
		if i == turns {
			result = strings.Repeat("a long log line\n", HeldOver/8)
		}
		tool := h.schedule(api.ToolActivity, toolInput{Call: model.ToolCall{ID: callID, Name: "read_file"}})
		fill(filler)
		h.complete(tool, toolResult{Content: result})
		if i == turns {
			fill(gap)
		}
		msgs = append(msgs, model.Message{Role: model.RoleTool, ToolCallID: callID, Content: result, ToolCalls: []model.ToolCall{}})
		call(model.Response{Content: fmt.Sprintf("turn %d done", i)})
	}
	return h.evs, msgs
}

// A read of a long run's history takes its first page and pages from its
// end until the calls read tell what is asked for: a view's recent tail
// costs a few pages whatever the run's length; the whole view costs every
// page, once. Both read exactly the transcript.
func TestHistoryReadFollowsWhatIsMissing(t *testing.T) {
	for _, tt := range []struct {
		name     string
		gap      int // events between the last tool's result and the call that sends it
		spans    func(n int) []Span
		maxPages int // with -1 for every page, +1
	}{
		{"the whole view", 0, func(n int) []Span { return []Span{{0, n - 1}} }, -1},
		{"the head and the last turn", 0, func(n int) []Span { return []Span{{0, 2}, {n - 5, n - 1}} }, 3},
		{"the last message, the answer no call sent yet", 0, func(n int) []Span { return []Span{{n - 1, n}} }, 3},
		{"a result found pages before the call that names it", 3 * historyPageEvents, func(n int) []Span { return []Span{{0, 2}, {n - 3, n - 1}} }, 7},
	} {
		t.Run(tt.name, func(t *testing.T) {
			evs, msgs := longHistory(t, 60, 10, tt.gap)
			n := len(msgs)
			all := (len(evs) + historyPageEvents - 1) / historyPageEvents
			if all < 6 {
				t.Fatalf("the run has %d pages; the test needs a long one", all)
			}
			if tt.maxPages < 0 {
				tt.maxPages = all + 1
			}
			c := &fakeHistory{workflowID: "wf", runID: "run", history: evs}
			spans := tt.spans(n)
			got, err := readerOf(c).Messages(context.Background(), Run{Namespace: "ns", WorkflowID: "wf", RunID: "run"}, nil, spans)
			if err != nil {
				t.Fatal(err)
			}
			var want []model.Message
			for _, sp := range spans {
				want = append(want, msgs[sp.Start:sp.End]...)
			}
			if err := sameMessages(got, want); err != nil {
				t.Fatal(err)
			}
			t.Logf("%d of %d pages read", c.pages, all)
			if c.pages > tt.maxPages {
				t.Errorf("%d pages read, want at most %d", c.pages, tt.maxPages)
			}
		})
	}
}
