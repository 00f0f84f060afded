package activities

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/api"

	commonpb "go.temporal.io/api/common/v1"
	enums "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	updatepb "go.temporal.io/api/update/v1"
	"go.temporal.io/sdk/converter"

	"github.com/todoflow/todoflow/model"
)

// flipCodec stands for payload encryption: what it encodes is unreadable
// as JSON until it is decoded.
type flipCodec struct{}

func (flipCodec) Encode(ps []*commonpb.Payload) ([]*commonpb.Payload, error) { return flip(ps), nil }
func (flipCodec) Decode(ps []*commonpb.Payload) ([]*commonpb.Payload, error) { return flip(ps), nil }

func flip(ps []*commonpb.Payload) []*commonpb.Payload {
	out := make([]*commonpb.Payload, len(ps))
	for i, p := range ps {
		data := make([]byte, len(p.Data))
		for j, b := range p.Data {
			data[j] = ^b
		}
		out[i] = &commonpb.Payload{Metadata: p.Metadata, Data: data}
	}
	return out
}

// runHistory builds the history of a run as AgentWorkflow makes it: the
// user's long message by update, a model call that reads a file, the tool's
// large result, and a model call that writes a large file, whose answer the
// workflow has not sent yet. It returns the events and the transcript.
func runHistory(t *testing.T, dc converter.DataConverter) ([]*historypb.HistoryEvent, []model.Message) {
	t.Helper()
	long := strings.Repeat("please read the log. ", 1000)
	log := strings.Repeat("line <of> the log & more\n", 1000)
	write := json.RawMessage(`{"path":"out","content":"` + strings.Repeat("<b>", 8000) + `"}`)
	msgs := []model.Message{
		{Role: model.RoleSystem, Content: "system", ToolCalls: []model.ToolCall{}},
		{Role: model.RoleUser, Content: long, ToolCalls: []model.ToolCall{}},
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c1", Name: "read_file", Arguments: json.RawMessage(`{"path":"log"}`)}}},
		{Role: model.RoleTool, ToolCallID: "c1", Content: log, ToolCalls: []model.ToolCall{}},
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c2", Name: "write_file", Arguments: write}}},
	}
	h := &eventLog{t: t, dc: dc}
	h.start(map[string]any{"prompt": ""})
	h.update("send_message", map[string]string{"text": long})
	first := h.schedule(api.ModelCallActivity, CallModelInput{New: NewMessagesOf(msgs[:2], 0, 0)})
	h.complete(first, model.Response{ToolCalls: msgs[2].ToolCalls})
	tool := h.schedule(api.ToolActivity, RunToolInput{Call: model.ToolCall{ID: "c1", Name: "read_file"}})
	h.complete(tool, RunToolResult{Content: log})
	second := h.schedule(api.ModelCallActivity, CallModelInput{New: NewMessagesOf(msgs[:4], 2, 0)})
	h.complete(second, model.Response{ToolCalls: msgs[4].ToolCalls})
	return h.evs, msgs
}

// eventLog builds a run's history as the server records it, its payloads
// encoded with dc.
type eventLog struct {
	t   *testing.T
	dc  converter.DataConverter
	evs []*historypb.HistoryEvent
}

func (h *eventLog) payloads(v any) *commonpb.Payloads {
	ps, err := h.dc.ToPayloads(v)
	if err != nil {
		h.t.Fatal(err)
	}
	return ps
}

// add appends an event of type typ, set up by attrs (nil for none), and
// returns its id.
func (h *eventLog) add(typ enums.EventType, attrs func(*historypb.HistoryEvent)) int64 {
	ev := &historypb.HistoryEvent{EventId: int64(len(h.evs) + 1), EventType: typ}
	if attrs != nil {
		attrs(ev)
	}
	h.evs = append(h.evs, ev)
	return ev.EventId
}

func (h *eventLog) start(in any) {
	h.add(enums.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, func(ev *historypb.HistoryEvent) {
		ev.Attributes = &historypb.HistoryEvent_WorkflowExecutionStartedEventAttributes{WorkflowExecutionStartedEventAttributes: &historypb.WorkflowExecutionStartedEventAttributes{
			Input: h.payloads(in)}}
	})
}

func (h *eventLog) update(name string, arg any) {
	h.add(enums.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED, func(ev *historypb.HistoryEvent) {
		ev.Attributes = &historypb.HistoryEvent_WorkflowExecutionUpdateAcceptedEventAttributes{WorkflowExecutionUpdateAcceptedEventAttributes: &historypb.WorkflowExecutionUpdateAcceptedEventAttributes{
			AcceptedRequest: &updatepb.Request{Input: &updatepb.Input{Name: name, Args: h.payloads(arg)}}}}
	})
}

func (h *eventLog) schedule(name string, in any) int64 {
	return h.add(enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, func(ev *historypb.HistoryEvent) {
		ev.Attributes = &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{
			ActivityType: &commonpb.ActivityType{Name: name}, Input: h.payloads(in)}}
	})
}

func (h *eventLog) complete(scheduled int64, result any) {
	h.add(enums.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, func(ev *historypb.HistoryEvent) {
		ev.Attributes = &historypb.HistoryEvent_ActivityTaskCompletedEventAttributes{ActivityTaskCompletedEventAttributes: &historypb.ActivityTaskCompletedEventAttributes{
			ScheduledEventId: scheduled, Result: h.payloads(result)}}
	})
}

// A continued run's transcript starts with the messages its input carries,
// which its first model call does not send.
func TestReadHistoryOfAContinuedRun(t *testing.T) {
	dc := converter.GetDefaultDataConverter()
	carried := []model.Message{
		{Role: model.RoleSystem, Content: "system", ToolCalls: []model.ToolCall{}},
		{Role: model.RoleUser, Content: "first", ToolCalls: []model.ToolCall{}},
		{Role: model.RoleAssistant, Content: strings.Repeat("a long answer ", 2000), ToolCalls: []model.ToolCall{}},
	}
	msgs := append(carried, model.Message{Role: model.RoleUser, Content: "second", ToolCalls: []model.ToolCall{}})
	input, err := dc.ToPayloads(map[string]any{"model": "m", "carry": map[string]any{"window": map[string]any{"messages": carried}, "session": map[string]any{"turns": 1}}})
	if err != nil {
		t.Fatal(err)
	}
	call, err := dc.ToPayloads(CallModelInput{New: NewMessagesOf(msgs, len(carried), 0)})
	if err != nil {
		t.Fatal(err)
	}
	evs := []*historypb.HistoryEvent{
		{EventId: 1, EventType: enums.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, Attributes: &historypb.HistoryEvent_WorkflowExecutionStartedEventAttributes{
			WorkflowExecutionStartedEventAttributes: &historypb.WorkflowExecutionStartedEventAttributes{Input: input}}},
		{EventId: 5, EventType: enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, Attributes: &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{
			ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{ActivityType: &commonpb.ActivityType{Name: api.ModelCallActivity}, Input: call}}},
	}
	h, err := readHistory(evs, dc)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.msgs) != len(msgs) {
		t.Fatalf("history tells %d messages, want %d", len(h.msgs), len(msgs))
	}
	for i := range msgs {
		if m := h.message(i); m == nil || sameMessages([]model.Message{*m}, msgs[i:i+1]) != nil {
			t.Errorf("message %d: %+v, want %+v", i, m, msgs[i])
		}
	}
}

func TestReadHistory(t *testing.T) {
	for name, dc := range map[string]converter.DataConverter{
		"plain":     converter.GetDefaultDataConverter(),
		"encrypted": converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), flipCodec{}),
	} {
		t.Run(name, func(t *testing.T) {
			evs, msgs := runHistory(t, dc)
			h, err := readHistory(evs, dc)
			if err != nil {
				t.Fatal(err)
			}
			if len(h.msgs) != 4 {
				t.Fatalf("history tells %d messages, want 4", len(h.msgs))
			}
			for i := range 5 {
				m := h.message(i)
				if m == nil {
					t.Fatalf("message %d: not told", i)
				}
				if err := sameMessages([]model.Message{*m}, msgs[i:i+1]); err != nil {
					t.Errorf("message %d: %v", i, err)
				}
			}
			if h.message(5) != nil {
				t.Error("message 5 is told, but there is none")
			}
		})
	}
}

// What history cannot tell (a field of the workflow's own making, left
// out for the budget) is read by query, alone.
func TestReadTranscriptQueriesOnlyWhatHistoryLacks(t *testing.T) {
	dc := converter.GetDefaultDataConverter()
	evs, msgs := runHistory(t, dc)
	// The tool's result as the workflow changed it: not in any payload.
	msgs[3].Content += " (noted)"
	evs = evs[:len(evs)-2]
	second := NewMessagesOf(msgs[:4], 2, 0)
	ps, err := dc.ToPayloads(CallModelInput{New: second})
	if err != nil {
		t.Fatal(err)
	}
	evs = append(evs, &historypb.HistoryEvent{EventId: 99, EventType: enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
		Attributes: &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{
			ActivityType: &commonpb.ActivityType{Name: api.ModelCallActivity}, Input: ps}}})
	c := &queryClient{workflowID: "wf", runID: "run", msgs: msgs[:4], history: evs}
	got, err := (&Activities{Client: c}).readTranscript(context.Background(), "wf", "run", []Span{{Start: 0, End: 4}})
	if err != nil {
		t.Fatal(err)
	}
	if err := sameMessages(got, msgs[:4]); err != nil {
		t.Fatal(err)
	}
	if c.queries != 1 {
		t.Errorf("%d queries, want 1, for the one message history lacks", c.queries)
	}

	// Without a history to read (the server refuses it), every message
	// is read by query.
	c = &queryClient{workflowID: "wf", runID: "run", msgs: msgs[:4], history: nil}
	if got, err := (&Activities{Client: c}).readTranscript(context.Background(), "wf", "run", []Span{{Start: 0, End: 4}}); err != nil || sameMessages(got, msgs[:4]) != nil {
		t.Fatalf("read by query: %v", err)
	}
}
