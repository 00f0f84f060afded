package transcript

import (
	"encoding/json"
	"fmt"

	"github.com/todoflow/todoflow/api"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"

	"github.com/todoflow/todoflow/model"
)

// Reading the transcript from the run's history.
//
// A worker that lacks messages of a run (it restarted, or another worker
// took the run's earlier calls) reads them from the run's history events
// (historypages.go says which pages): every message is in the new messages
// of some model call's input, and every field left out there is, verbatim,
// in a payload of an earlier event (a tool's result, the user's message,
// the model's answer, the run's input, or the marker the workflow records
// for a field of its own making), found by its digest.

// historyTranscript is a run's transcript as its history tells it.
type historyTranscript struct {
	msgs []*model.Message // nil where history does not tell
	// answer is the last model call's answer, at answerAt: a tool call by
	// reference reads its arguments from it before the next call sends
	// it as a new message.
	answer   *model.Message
	answerAt int
}

// readHistory rebuilds a run's transcript from its history events evs,
// decoding payloads with dc.
func readHistory(evs []*historypb.HistoryEvent, dc converter.DataConverter) (*historyTranscript, error) {
	// Which model call each completion answers, and what the calls sent.
	type call struct {
		at    int // the transcript's length after the call's new messages
		reply bool
	}
	calls := map[int64]*call{} // by scheduled event id
	var order []*NewMessages
	var want map[int]bool // lengths of the digests looked for
	t := &historyTranscript{answerAt: -1}
	end := 0
	for _, ev := range evs {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
			// A continued run starts with the messages its input carries;
			// its first model call sends only those after them.
			var in startInput
			if err := decodeFirst(dc, ev.GetWorkflowExecutionStartedEventAttributes().GetInput(), &in); err == nil && in.Carry != nil {
				carried := in.Carry.Window.Messages
				order = append(order, &NewMessages{Messages: carried})
				end = len(carried)
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			a := ev.GetActivityTaskScheduledEventAttributes()
			if a.GetActivityType().GetName() != api.ModelCallActivity {
				continue
			}
			var in struct {
				New       *NewMessages `json:"new"`
				Summarize *struct{}    `json:"summarize"`
			}
			if err := decodeFirst(dc, a.GetInput(), &in); err != nil {
				return nil, fmt.Errorf("model call input of event %d: %w", ev.GetEventId(), err)
			}
			if in.New != nil {
				order = append(order, in.New)
				end = in.New.From + len(in.New.Messages)
				for _, h := range in.New.Held {
					want = wantDigest(want, h.Content)
					for _, d := range h.Args {
						want = wantDigest(want, d)
					}
				}
			}
			calls[ev.GetEventId()] = &call{at: end, reply: in.Summarize == nil}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			a := ev.GetActivityTaskCompletedEventAttributes()
			c, ok := calls[a.GetScheduledEventId()]
			if !ok || !c.reply {
				continue
			}
			var resp model.Response
			if err := decodeFirst(dc, a.GetResult(), &resp); err != nil {
				return nil, fmt.Errorf("model call result of event %d: %w", ev.GetEventId(), err)
			}
			t.answer = &model.Message{Role: model.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls}
			t.answerAt = c.at
		}
	}
	values := map[string]string{}
	if want != nil {
		for _, ev := range evs {
			for _, p := range eventPayloads(ev) {
				collectValues(dc, p, want, values)
			}
		}
	}
	find := func(d string) (string, bool) {
		v, ok := values[d]
		return v, ok
	}
	// Each call's new messages start where the transcript last changed
	// (a message taken back is sent again from its index), so applying
	// them in order rebuilds it, as the cache does.
	for _, nm := range order {
		t.msgs = apply(t.msgs, *nm, find)
	}
	if t.answerAt != len(t.msgs) {
		t.answer, t.answerAt = nil, -1 // answered before the last new messages
	}
	return t, nil
}

// startInput is what the transcript needs of AgentWorkflow's input: the
// messages a continued run carries (workflows.WindowCarry.Messages, which the
// run's transcript starts with).
type startInput struct {
	Carry *struct {
		Window struct {
			Messages []model.Message `json:"messages"`
		} `json:"window"`
	} `json:"carry"`
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

// wantDigest adds a digest's length to the lengths looked for.
func wantDigest(want map[int]bool, d string) map[int]bool {
	if d == "" {
		return want
	}
	if want == nil {
		want = map[int]bool{}
	}
	want[digestLen(d)] = true
	return want
}

func decodeFirst(dc converter.DataConverter, ps *commonpb.Payloads, v any) error {
	if len(ps.GetPayloads()) == 0 {
		return fmt.Errorf("no payload")
	}
	return dc.FromPayload(ps.GetPayloads()[0], v)
}

// eventPayloads returns the payloads of the events a field left out of new
// messages may come from: the run's input, activity results, updates and
// signals, and the inputs of the workflow's model calls.
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

// collectValues adds to values, by digest, every value of the JSON payload
// p whose length is in want: strings as they decode, other values as they
// are encoded (tool call arguments).
func collectValues(dc converter.DataConverter, p *commonpb.Payload, want map[int]bool, values map[string]string) {
	if len(p.GetData()) < minHeld {
		return
	}
	var raw json.RawMessage
	if err := dc.FromPayload(p, &raw); err != nil {
		return // not JSON: nothing of a transcript
	}
	walkValues(raw, want, values)
}

// walkValues visits the JSON value raw and those inside it.
func walkValues(raw json.RawMessage, want map[int]bool, values map[string]string) {
	if len(raw) < minHeld {
		return
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil && want[len(s)] {
			values[Digest(s)] = s
		}
	case '{':
		if want[len(raw)] {
			values[Digest(string(raw))] = string(raw)
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) == nil {
			for _, v := range obj {
				walkValues(v, want, values)
			}
		}
	case '[':
		if want[len(raw)] {
			values[Digest(string(raw))] = string(raw)
		}
		var arr []json.RawMessage
		if json.Unmarshal(raw, &arr) == nil {
			for _, v := range arr {
				walkValues(v, want, values)
			}
		}
	}
}
