package transcript

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	enums "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	updatepb "go.temporal.io/api/update/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/todoflow/todoflow/api"
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
	first := h.schedule(api.ModelCallActivity, callInput{New: NewMessagesOf(msgs[:2], 0, 0)})
	h.complete(first, model.Response{ToolCalls: msgs[2].ToolCalls})
	tool := h.schedule(api.ToolActivity, toolInput{Call: model.ToolCall{ID: "c1", Name: "read_file"}})
	h.complete(tool, toolResult{Content: log})
	second := h.schedule(api.ModelCallActivity, callInput{New: NewMessagesOf(msgs[:4], 2, 0)})
	h.complete(second, model.Response{ToolCalls: msgs[4].ToolCalls})
	return h.evs, msgs
}

// callInput, toolInput and toolResult are what history holds of the
// inputs of CallModel and RunTool and of RunTool's result (package
// activities).
type (
	callInput struct {
		New *NewMessages `json:"new,omitempty"`
	}
	toolInput  struct{ Call model.ToolCall }
	toolResult struct{ Content string }
)

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

// marker records v as workflow.SideEffect does.
func (h *eventLog) marker(v any) {
	h.add(enums.EVENT_TYPE_MARKER_RECORDED, func(ev *historypb.HistoryEvent) {
		ev.Attributes = &historypb.HistoryEvent_MarkerRecordedEventAttributes{MarkerRecordedEventAttributes: &historypb.MarkerRecordedEventAttributes{
			MarkerName: "SideEffect", Details: map[string]*commonpb.Payloads{"data": h.payloads(v)}}}
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
	log := &eventLog{t: t, dc: dc}
	log.start(map[string]any{"model": "m", "carry": map[string]any{"window": map[string]any{"messages": carried}, "session": map[string]any{"turns": 1}}})
	log.schedule(api.ModelCallActivity, callInput{New: NewMessagesOf(msgs, len(carried), 0)})
	h, err := readHistory(log.evs, dc)
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

// A field of the workflow's own making (a guard's note on a tool's result)
// is told by the marker the workflow records before the call that leaves
// it out. Without it (a call an older build scheduled, which left such a
// field for the transcript query), the read fails, not retried, and says
// why.
func TestReadHistoryOfAFieldTheWorkflowMade(t *testing.T) {
	dc := converter.GetDefaultDataConverter()
	evs, msgs := runHistory(t, dc)
	msgs[3].Content += " (noted)" // in no payload
	evs = evs[:len(evs)-2]
	second := NewMessagesOf(msgs[:4], 2, 0)
	var heard Heard
	heard.Answer("", msgs[2].ToolCalls)
	at, made := second.Unheard(msgs[:4], heard)
	if len(made) != 1 || made[0] != msgs[3].Content || at[0] != 3 {
		t.Fatalf("Unheard = %d values, want the noted tool result alone", len(made))
	}
	for _, withMarker := range []bool{true, false} {
		h := &eventLog{t: t, dc: dc, evs: append([]*historypb.HistoryEvent(nil), evs...)}
		if withMarker {
			h.marker(made[0])
		}
		h.schedule(api.ModelCallActivity, callInput{New: second})
		got, err := readerOf(&fakeHistory{workflowID: "wf", runID: "run", history: h.evs}).
			Messages(context.Background(), Run{Namespace: "ns", WorkflowID: "wf", RunID: "run"}, nil, []Span{{Start: 0, End: 4}})
		if withMarker {
			if err != nil {
				t.Fatal(err)
			}
			if err := sameMessages(got, msgs[:4]); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var app *temporal.ApplicationError
		if !errors.As(err, &app) || app.Type() != ErrTypeHole || !app.NonRetryable() ||
			!strings.Contains(err.Error(), "older build") || !strings.Contains(err.Error(), "resend the message") {
			t.Fatalf("without the marker: %v; want a non-retryable %s error naming the older build", err, ErrTypeHole)
		}
	}
}

// A history the server does not serve is a passing fault: the error is
// retried, never read as a hole.
func TestReadHistoryRefused(t *testing.T) {
	h := &fakeHistory{workflowID: "wf", runID: "run", err: serviceerror.NewUnavailable("restarting")}
	_, err := readerOf(h).Messages(context.Background(), Run{Namespace: "ns", WorkflowID: "wf", RunID: "run"}, nil, []Span{{Start: 0, End: 1}})
	var app *temporal.ApplicationError
	if err == nil || errors.As(err, &app) {
		t.Fatalf("err = %v, want the server's error, retryable", err)
	}
}

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
		h := &eventLog{t: t, dc: dc}
		h.start(in)
		return h.evs
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

// modelCall finds where a model call's new messages start, and nothing in a
// retry (no new messages) or another activity.
func TestModelCall(t *testing.T) {
	dc := converter.GetDefaultDataConverter()
	sched := func(name string, in any) *historypb.HistoryEvent {
		h := &eventLog{t: t, dc: dc}
		h.schedule(name, in)
		return h.evs[0]
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
		in, err := modelCall(tt.ev, dc)
		if err != nil {
			t.Fatal(err)
		}
		from, ok := 0, in != nil && in.New != nil
		if ok {
			from = in.New.From
		}
		if from != tt.from || ok != tt.exists {
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
			if err := sameMessages(got, spanMessages(msgs, spans)); err != nil {
				t.Fatal(err)
			}
			t.Logf("%d of %d pages read", c.pages, all)
			if c.pages > tt.maxPages {
				t.Errorf("%d pages read, want at most %d", c.pages, tt.maxPages)
			}
		})
	}
}
