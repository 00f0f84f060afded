package transcript

import (
	"context"
	"fmt"
	"slices"

	"github.com/todoflow/todoflow/api"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
)

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
