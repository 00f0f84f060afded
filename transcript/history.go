package transcript

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/model"
)

// historyPageEvents is the page size asked for: the server's own cap
// (primitives.GetHistoryMaxPageSize), which it counts in batches of events
// (a workflow task's worth each: about 500 events of a chat).
const historyPageEvents = 256

// historyFor reads the run's history events that tell the messages of
// spans, and the transcript they tell. A run may hold thousands of events,
// and a worker most often lacks only what another worker's calls sent
// lately: so it reads the first page (the run's input and first calls,
// where the head of every view is), then pages from the end backwards
// until what it read tells every message asked for.
func (r *Reader) historyFor(ctx context.Context, run Run, spans []Span) (*historyTranscript, error) {
	exec := &commonpb.WorkflowExecution{WorkflowId: run.WorkflowID, RunId: run.RunID}
	first, err := r.history.GetWorkflowExecutionHistory(ctx, &workflowservice.GetWorkflowExecutionHistoryRequest{
		Namespace: run.Namespace, Execution: exec, MaximumPageSize: historyPageEvents,
		HistoryEventFilterType: enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT,
	})
	if err != nil {
		return nil, fmt.Errorf("read history of %s: %w", run.WorkflowID, err)
	}
	// The pages read back go after the first, in an array of their own;
	// need is the first message asked for that the first may not tell.
	evs, need := slices.Clip(first.GetHistory().GetEvents()), -1
	if len(first.GetNextPageToken()) > 0 && len(evs) > 0 {
		need = firstNeeded(spans, stableHead(evs, r.dc))
	}
	head, from, checkAt := len(evs), -1, 1 // from: the lowest From of the model calls read back
	var token []byte
	for pages := 1; need >= 0; pages++ {
		resp, err := r.history.GetWorkflowExecutionHistoryReverse(ctx, &workflowservice.GetWorkflowExecutionHistoryReverseRequest{
			Namespace: run.Namespace, Execution: exec, MaximumPageSize: historyPageEvents, NextPageToken: token,
		})
		if err != nil {
			return nil, fmt.Errorf("read history of %s from its end: %w", run.WorkflowID, err)
		}
		token = resp.GetNextPageToken()
		var page []*historypb.HistoryEvent
		for _, ev := range resp.GetHistory().GetEvents() {
			if ev.GetEventId() <= evs[head-1].GetEventId() {
				token = nil // every event is read
				break
			}
			page = append(page, ev)
			if in, _ := modelCall(ev, r.dc); in != nil && in.New != nil && (from < 0 || in.New.From < from) {
				from = in.New.From
			}
		}
		slices.Reverse(page)
		evs = slices.Insert(evs, head, page...)
		if len(token) == 0 {
			break
		}
		// The calls read back send every message asked for past the head:
		// whether the values they left out were read too, only a whole
		// reading tells, which decodes every event read; so it runs again
		// only after as many pages again.
		if from < 0 || from > need || pages < checkAt {
			continue
		}
		t, err := readHistory(evs, r.dc)
		if err != nil {
			return nil, err
		}
		if _, holes := gather(spans, t.message); len(holes) == 0 {
			return t, nil
		}
		checkAt = 2 * pages
	}
	return readHistory(evs, r.dc)
}

// stableHead is how many of a run's first messages no later call sends
// again, as its first page tells: the system prompt and the first user
// message; or, for a continued run, the messages its input carries but the
// last, which a retried turn may take back (a failure notice).
func stableHead(evs []*historypb.HistoryEvent, dc converter.DataConverter) int {
	for _, ev := range evs {
		if carried, ok := carriedBy(ev, dc); ok {
			return max(0, len(carried)-1)
		}
	}
	return 2
}

// firstNeeded is the lowest index of spans at or past head, or -1.
func firstNeeded(spans []Span, head int) int {
	need := -1
	for _, sp := range spans {
		if i := max(sp.Start, head); i < sp.End && (need < 0 || i < need) {
			need = i
		}
	}
	return need
}

// historyTranscript is a run's transcript as its history tells it.
type historyTranscript struct {
	msgs []*model.Message // nil where history does not tell
	// answer is the last model call's answer, at answerAt: a tool call by
	// reference reads it before the next call sends it as a new message.
	answer   *model.Message
	answerAt int
}

// message returns message i as history tells it, or nil.
func (t *historyTranscript) message(i int) *model.Message {
	if i >= 0 && i < len(t.msgs) && t.msgs[i] != nil {
		return t.msgs[i]
	}
	if i == t.answerAt {
		return t.answer
	}
	return nil
}

// readHistory rebuilds a run's transcript from its history events evs:
// every message is in the new messages of some model call's input, and
// every field left out there is, verbatim, in a payload of an event (where
// the value was made, or the workflow's marker), found by its digest.
func readHistory(evs []*historypb.HistoryEvent, dc converter.DataConverter) (*historyTranscript, error) {
	var sent []NewMessages
	want := map[int]bool{}     // the lengths of the digests left out
	replies := map[int64]int{} // by scheduled event id: the transcript's length the reply follows
	t := &historyTranscript{answerAt: -1}
	end := 0
	for _, ev := range evs {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
			if carried, ok := carriedBy(ev, dc); ok {
				sent = append(sent, NewMessages{Messages: carried})
				end = len(carried)
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			in, err := modelCall(ev, dc)
			if err != nil {
				return nil, err
			}
			if in == nil {
				continue
			}
			if nm := in.New; nm != nil {
				sent = append(sent, *nm)
				end = nm.From + len(nm.Messages)
				for _, h := range nm.Held {
					for _, d := range append([]string{h.Content}, h.Args...) {
						if d != "" {
							want[digestLen(d)] = true
						}
					}
				}
			}
			if in.Summarize == nil {
				replies[ev.GetEventId()] = end
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			a := ev.GetActivityTaskCompletedEventAttributes()
			at, ok := replies[a.GetScheduledEventId()]
			if !ok {
				continue
			}
			var resp model.Response
			if err := dc.FromPayloads(a.GetResult(), &resp); err != nil {
				return nil, fmt.Errorf("model call result of event %d: %w", ev.GetEventId(), err)
			}
			t.answer, t.answerAt = &model.Message{Role: model.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls}, at
		}
	}
	values := map[string]string{}
	for _, ev := range evs {
		if len(want) == 0 {
			break
		}
		for _, p := range eventPayloads(ev) {
			var raw json.RawMessage
			if len(p.GetData()) >= minHeld && dc.FromPayload(p, &raw) == nil {
				collect(raw, want, values)
			}
		}
	}
	find := func(d string) (string, bool) {
		v, ok := values[d]
		return v, ok
	}
	// Each call's new messages start where the transcript last changed,
	// so applying them in order rebuilds it.
	for _, nm := range sent {
		t.msgs = apply(t.msgs, nm, find)
	}
	if t.answerAt != len(t.msgs) {
		t.answer, t.answerAt = nil, -1 // answered before the last new messages
	}
	return t, nil
}

// carriedBy returns the messages a continued run's input carries
// (workflows.WindowCarry.Messages), which its transcript starts with, when
// ev starts such a run.
func carriedBy(ev *historypb.HistoryEvent, dc converter.DataConverter) ([]model.Message, bool) {
	var in struct {
		Carry *struct {
			Window struct {
				Messages []model.Message `json:"messages"`
			} `json:"window"`
		} `json:"carry"`
	}
	if err := dc.FromPayloads(ev.GetWorkflowExecutionStartedEventAttributes().GetInput(), &in); err != nil || in.Carry == nil {
		return nil, false
	}
	return in.Carry.Window.Messages, true
}

// modelCallInput is what the reader needs of activities.CallModelInput.
type modelCallInput struct {
	New       *NewMessages `json:"new"`
	Summarize *struct{}    `json:"summarize"`
}

// modelCall returns the input of the model call ev schedules, nil when it
// schedules none.
func modelCall(ev *historypb.HistoryEvent, dc converter.DataConverter) (*modelCallInput, error) {
	a := ev.GetActivityTaskScheduledEventAttributes()
	if a.GetActivityType().GetName() != api.ModelCallActivity {
		return nil, nil
	}
	var in modelCallInput
	if err := dc.FromPayloads(a.GetInput(), &in); err != nil {
		return nil, fmt.Errorf("model call input of event %d: %w", ev.GetEventId(), err)
	}
	return &in, nil
}

// eventPayloads returns the payloads of the events a field left out of new
// messages may come from: the run's input, activity results, updates and
// signals, the inputs of the workflow's model calls, and markers.
func eventPayloads(ev *historypb.HistoryEvent) []*commonpb.Payload {
	switch ev.GetEventType() {
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
		return ev.GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
		return ev.GetActivityTaskScheduledEventAttributes().GetInput().GetPayloads()
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
		return ev.GetActivityTaskCompletedEventAttributes().GetResult().GetPayloads()
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
		return ev.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest().GetInput().GetArgs().GetPayloads()
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
		return ev.GetWorkflowExecutionSignaledEventAttributes().GetInput().GetPayloads()
	case enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED:
		return ev.GetChildWorkflowExecutionCompletedEventAttributes().GetResult().GetPayloads()
	case enumspb.EVENT_TYPE_MARKER_RECORDED:
		var out []*commonpb.Payload
		for _, ps := range ev.GetMarkerRecordedEventAttributes().GetDetails() {
			out = append(out, ps.GetPayloads()...)
		}
		return out
	}
	return nil
}

// collect adds to values, by digest, the JSON value raw and each inside it
// whose length is in want: strings as they decode, objects and arrays as
// they are encoded (tool call arguments).
func collect(raw json.RawMessage, want map[int]bool, values map[string]string) {
	if len(raw) < minHeld {
		return
	}
	var inner []json.RawMessage
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil && want[len(s)] {
			values[Digest(s)] = s
		}
		return
	case '{':
		var obj map[string]json.RawMessage
		_ = json.Unmarshal(raw, &obj)
		inner = slices.Collect(maps.Values(obj))
	case '[':
		_ = json.Unmarshal(raw, &inner)
	default:
		return
	}
	if want[len(raw)] {
		values[Digest(string(raw))] = string(raw)
	}
	for _, v := range inner {
		collect(v, want, values)
	}
}
