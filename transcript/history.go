package transcript

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/model"
)

// Reading the transcript from the run's history.
//
// A worker that lacks messages of a run (it restarted, or another worker
// took the run's earlier calls) reads them from the run's history events
// (historyFor, below, says which pages): every message is in the new messages
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

// Which events of a run's history a read needs.
//
// The server answers a history in pages, one round trip each (at most 256
// batches of events, a workflow task's worth each: about 500 events of a
// chat), and a run may hold thousands of events before it continues as
// new. A worker rarely lacks all of a run: most often it lacks the few
// messages another worker's calls sent since its own last call. So a read
// takes the first page (the run's input and its first calls, where the
// head of every view is), then pages from the end backwards, and stops as
// soon as what it read tells every message asked for: its cost follows
// what is missing, not the run's length. A view that reaches back to the
// run's start still reads every page, once.

// historyPageEvents is the page size asked for: the server's own cap
// (primitives.GetHistoryMaxPageSize), which it counts in batches.
const historyPageEvents = 256

// historyFor reads the run's history events that tell the messages of
// spans, and the transcript they tell.
func (r *Reader) historyFor(ctx context.Context, run Run, spans []Span) (*historyTranscript, error) {
	dc, ns, workflowID := r.dc, run.Namespace, run.WorkflowID
	svc := r.history
	exec := &commonpb.WorkflowExecution{WorkflowId: workflowID, RunId: run.RunID}
	first, err := svc.GetWorkflowExecutionHistory(ctx, &workflowservice.GetWorkflowExecutionHistoryRequest{
		Namespace: ns, Execution: exec, MaximumPageSize: historyPageEvents,
		HistoryEventFilterType: enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT,
	})
	if err != nil {
		return nil, fmt.Errorf("read history of %s: %w", workflowID, err)
	}
	head := first.GetHistory().GetEvents()
	if len(first.GetNextPageToken()) == 0 || len(head) == 0 {
		return readHistory(head, dc)
	}
	need := firstNeeded(spans, stableHead(head, dc))
	if need < 0 {
		return readHistory(head, dc) // the head is all the view needs
	}
	last := head[len(head)-1].GetEventId()
	var back []*historypb.HistoryEvent // newest first
	from := -1                         // the lowest From of the model calls read back
	var token []byte
	checkAt := 1 // pages read when the whole check runs next
	for pages := 1; ; pages++ {
		resp, err := svc.GetWorkflowExecutionHistoryReverse(ctx, &workflowservice.GetWorkflowExecutionHistoryReverseRequest{
			Namespace: ns, Execution: exec, MaximumPageSize: historyPageEvents, NextPageToken: token,
		})
		if err != nil {
			return nil, fmt.Errorf("read history of %s from its end: %w", workflowID, err)
		}
		joined := false
		for _, ev := range resp.GetHistory().GetEvents() {
			if ev.GetEventId() <= last {
				joined = true // every event is read
				break
			}
			back = append(back, ev)
			if f, ok := newFrom(ev, dc); ok && (from < 0 || f < from) {
				from = f
			}
		}
		token = resp.GetNextPageToken()
		if joined || len(token) == 0 {
			return readHistory(merged(head, back), dc)
		}
		// The calls read back send every message asked for past the head:
		// whether the values they left out were read too, only the whole
		// reading tells, which costs a decoding of every event read; so
		// it runs again only after as many pages again.
		if from < 0 || from > need || pages < checkAt {
			continue
		}
		t, err := readHistory(merged(head, back), dc)
		if err != nil {
			return nil, err
		}
		if _, holes, _ := gather(spans, t.message); len(holes) == 0 {
			return t, nil
		}
		checkAt = 2 * pages
	}
}

// merged is the events of the first page, then those read back from the
// end, in history's order.
func merged(head, back []*historypb.HistoryEvent) []*historypb.HistoryEvent {
	out := make([]*historypb.HistoryEvent, 0, len(head)+len(back))
	out = append(out, head...)
	for _, ev := range slices.Backward(back) {
		out = append(out, ev)
	}
	return out
}

// stableHead is how many of a run's first messages no later call sends
// again, as its first page tells: the system prompt and the first user
// message; or, for a continued run, the messages its input carries but the
// last, which a retried turn may take back (a failure notice).
func stableHead(evs []*historypb.HistoryEvent, dc converter.DataConverter) int {
	for _, ev := range evs {
		if ev.GetEventType() != enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED {
			continue
		}
		var in startInput
		if err := decodeFirst(dc, ev.GetWorkflowExecutionStartedEventAttributes().GetInput(), &in); err == nil && in.Carry != nil {
			return max(0, len(in.Carry.Window.Messages)-1)
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

// newFrom is where the new messages of a model call's input start, when ev
// schedules one that carries them.
func newFrom(ev *historypb.HistoryEvent, dc converter.DataConverter) (int, bool) {
	a := ev.GetActivityTaskScheduledEventAttributes()
	if ev.GetEventType() != enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED || a.GetActivityType().GetName() != api.ModelCallActivity {
		return 0, false
	}
	var in struct {
		New *struct {
			From int `json:"from"`
		} `json:"new"`
	}
	if err := decodeFirst(dc, a.GetInput(), &in); err != nil || in.New == nil {
		return 0, false
	}
	return in.New.From, true
}
