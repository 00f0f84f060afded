package client

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/todoflow/todoflow/api"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/todoflow/todoflow/model"
)

// DefaultWatchInterval is how often Watch looks when no interval is given:
// what a terminal client needs to show a reply as it is written.
const DefaultWatchInterval = 100 * time.Millisecond

// Watch looks at the session every interval (0: DefaultWatchInterval) and
// reports what changed as events, until ctx ends or the session has ended
// (Closed, once a state after it was read); then the channel is closed.
// The events of one look come in this order: the state's (StateChanged
// first), the new messages, the stream, the tools, Closed, Problem, and
// Looked last. A look that fails is a Problem and the watch goes on: the
// server may be restarting. Read the channel until it is closed, or cancel
// ctx to stop watching.
//
// Each look is one DescribeWorkflowExecution, which the server answers
// alone (the run's status, its history length, the running activities with
// their heartbeats: the tools running, the model call and where its worker
// serves its reply); the state and messages queries, which a worker
// answers, are asked only when the history has grown since the last look,
// or the last query failed. A quiet session costs one cheap call per look
// and nothing on the worker. A reply being written is followed from its
// worker between the looks, and each piece is reported as it comes, with a
// Looked of its own (see stream.go).
func (s *Session) Watch(ctx context.Context, interval time.Duration) <-chan Event {
	if interval <= 0 {
		interval = DefaultWatchInterval
	}
	out := make(chan Event)
	go func() {
		defer close(out)
		ctx, cancel := context.WithCancel(ctx)
		defer cancel() // and the stream followed with it
		w := &watcher{s: s, ctx: ctx, streamed: make(chan struct{}, 1)}
		t := time.NewTicker(interval)
		defer t.Stop()
		send := func(evs []Event) bool {
			for _, ev := range evs {
				select {
				case out <- ev:
				case <-ctx.Done():
					return false
				}
			}
			return true
		}
		for {
			lctx, lcancel := context.WithTimeout(ctx, 10*time.Second)
			evs, done := w.look(lctx)
			lcancel()
			if !send(evs) || done {
				return
			}
		wait:
			for {
				select {
				case <-t.C:
					break wait
				case <-w.streamed:
					if !send(w.streamEvents()) {
						return
					}
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out
}

// watcher is what Watch remembers between two looks.
type watcher struct {
	s        *Session
	ctx      context.Context // the watch's
	streamed chan struct{}   // a frame of the followed stream came

	runID      string
	historyLen int64
	stateOK    bool
	queried    api.State       // the state query's latest answer
	retried    *api.ModelError // the model call the server retries, as the latest look saw it
	retry      Retry           // and what its retries show
	state      *api.State      // as last reported: queried, with retried as its model_error
	offset     int             // the transcript's messages reported
	last       *model.Message  // the last one, to find the place again after continue-as-new
	closed     bool
	stream     StreamChanged // as last reported
	preview    StreamChanged // as the last look's heartbeat details had it
	live       *liveStream   // the model call's stream, followed
	tools      []RunningTool
	problem    string
	waits      stalls            // the work that waits for a worker, since when
	children   childWatch        // the running subagents' work, looked at now and then
	calls      map[string]string // the tool calls of the latest answer, id → name (diffs.go)
}

// look takes one look and returns what changed, and whether the watch is
// over.
func (w *watcher) look(ctx context.Context) (evs []Event, done bool) {
	d, err := w.s.c.tc.DescribeWorkflowExecution(ctx, w.s.id, "")
	if err != nil {
		if _, ok := errors.AsType[*serviceerror.NotFound](err); ok {
			err = fmt.Errorf("%w: %s", ErrNoSession, w.s.id)
		} else if serverDown(ctx, err) {
			err = &ServerDownError{Address: w.s.c.opts.Address, Err: err}
		} else {
			err = fmt.Errorf("describe %s: %w", w.s.id, err)
		}
		if evs = w.trouble(nil, err); len(evs) > 0 {
			evs = append(evs, Looked{time.Now()})
		}
		return evs, false
	}
	info := d.GetWorkflowExecutionInfo()
	runID := info.GetExecution().GetRunId()
	closed := info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING

	var stream StreamChanged
	var tools []RunningTool
	var modelCall *workflowpb.PendingActivityInfo
	for _, pa := range d.GetPendingActivities() {
		switch pa.GetActivityType().GetName() {
		case api.ModelCallActivity:
			stream.Running, stream.Attempt, modelCall = true, pa.GetAttempt(), pa
			var rs api.ReplyStream
			if hd := currentDetails(pa); hd != nil && w.s.c.opts.DataConverter.FromPayloads(hd, &rs) == nil {
				stream.Call, stream.Text, stream.Cut = rs.Call, rs.Text, rs.Cut
			}
		case api.ToolActivity, api.ToolOnHostActivity:
			var tp api.ToolProgress
			if hd := pa.GetHeartbeatDetails(); hd != nil && w.s.c.opts.DataConverter.FromPayloads(hd, &tp) == nil && tp.Tool != "" {
				tools = append(tools, RunningTool{Name: tp.Tool, Progress: tp.Progress, Total: tp.Total, Message: tp.Message})
			}
		}
	}

	retried := w.s.c.retriedModelError(modelCall)
	retry := w.s.c.retryOf(modelCall, retried)
	var qerr error
	if runID != w.runID || info.GetHistoryLength() != w.historyLen || !w.stateOK || (closed && !w.closed) {
		if runID != w.runID && w.runID != "" {
			// Continue-as-new: the new run's transcript is the old one
			// compacted; go on after the last message already reported.
			w.offset = -1
		}
		w.runID, w.historyLen = runID, info.GetHistoryLength()
		var st api.State
		st, qerr = w.s.RunState(ctx)
		if qerr == nil {
			w.queried, w.retried, w.retry = st, retried, retry
			evs = append(evs, w.changed()...)
			var msgs []model.Message
			msgs, qerr = w.messages(ctx)
			var diffs map[string]string
			if qerr == nil {
				diffs = w.diffs(ctx, msgs)
			}
			for _, m := range msgs {
				evs = append(evs, NewMessage{Message: m, Diff: diffs[m.ToolCallID]})
			}
			if n := len(msgs); n > 0 && msgs[n-1].Role == model.RoleAssistant && modelCall != nil {
				// The describe came before the queries: the call it shows
				// running has answered since, and its answer was just read.
				// (A model call follows a message of another role: a
				// user's, a reminder, a tool's result.) Shown as running,
				// its reply would show twice until the next look.
				stream, modelCall = StreamChanged{}, nil
			}
		}
		w.stateOK = qerr == nil
	} else if !reflect.DeepEqual(retried, w.retried) || retry != w.retry {
		// A retry adds nothing to history: only the look at the
		// pending call tells.
		w.retried, w.retry = retried, retry
		evs = append(evs, w.changed()...)
	}
	w.preview = stream
	w.follow(info, modelCall)
	if stream = w.streamNow(); stream != w.stream {
		w.stream = stream
		evs = append(evs, stream)
	}
	if !slices.Equal(tools, w.tools) {
		w.tools = tools
		evs = append(evs, ToolsChanged{tools})
	}
	if closed && !w.closed {
		w.closed = true
		evs = append(evs, Closed{runStatus(info.GetStatus())})
	}
	evs = w.trouble(evs, w.stalled(ctx, d, qerr))
	if len(evs) > 0 {
		evs = append(evs, Looked{time.Now()})
	}
	return evs, w.closed && w.state != nil
}

// stalled is why the session makes no progress, if it is for want of a
// worker: its work has waited longer than notPickedUp, a query timed out,
// or a running subagent's work waits (childStall). Otherwise it is qerr,
// the latest query's error (nil: none).
func (w *watcher) stalled(ctx context.Context, d *workflowservice.DescribeWorkflowExecutionResponse, qerr error) error {
	if w.waits == nil {
		w.waits = stalls{}
	}
	if wk, ok := w.waits.over(pendingWork(d), time.Now()); ok {
		return w.s.c.noWorker(ctx, wk.queue, wk.kind)
	}
	if qerr != nil && queryTimedOut(qerr) {
		return w.s.c.noWorker(ctx, d.GetWorkflowExecutionInfo().GetTaskQueue(), enumspb.TASK_QUEUE_TYPE_WORKFLOW)
	}
	if qerr != nil {
		return qerr
	}
	return w.childStall(ctx)
}

// changed reports the state as the watch shows it now: the run's own,
// with the model call the server retries, if any, as its model_error
// (modelerror.go).
func (w *watcher) changed() []Event {
	st := w.queried
	if w.retried != nil && st.Status == api.StatusRunning {
		st.ModelError = w.retried
	}
	evs := changes(w.state, st, time.Now())
	for i, ev := range evs {
		if mc, ok := ev.(ModelErrorChanged); ok && w.retried != nil && st.ModelError == w.retried {
			mc.Retry = w.retry
			evs[i] = mc
		}
	}
	w.state = &st
	return evs
}

// trouble adds a Problem to evs when the latest error (nil: none) is news.
func (w *watcher) trouble(evs []Event, err error) []Event {
	text := ""
	if err != nil {
		text = err.Error()
	}
	if text != w.problem {
		w.problem = text
		evs = append(evs, Problem{err})
	}
	return evs
}

// messages reads the messages after the ones reported, page by page.
func (w *watcher) messages(ctx context.Context) ([]model.Message, error) {
	all, err := w.s.messagesFrom(ctx, max(w.offset, 0))
	if err != nil {
		return nil, err
	}
	if w.offset < 0 {
		// After continue-as-new the whole transcript was read: skip up to
		// the last message reported, or all of it when that one was
		// compacted away (then everything in it was reported before).
		skip := len(all)
		for i := len(all) - 1; i >= 0 && w.last != nil; i-- {
			if sameMessage(all[i], *w.last) {
				skip = i + 1
				break
			}
		}
		w.offset = len(all)
		all = all[skip:]
	} else {
		w.offset += len(all)
	}
	if len(all) > 0 {
		w.last = &all[len(all)-1]
	}
	return all, nil
}

func sameMessage(a, b model.Message) bool {
	if a.Role != b.Role || a.Name != b.Name || a.Content != b.Content || a.ToolCallID != b.ToolCallID || len(a.ToolCalls) != len(b.ToolCalls) {
		return false
	}
	for i := range a.ToolCalls {
		if a.ToolCalls[i].ID != b.ToolCalls[i].ID || string(a.ToolCalls[i].Arguments) != string(b.ToolCalls[i].Arguments) {
			return false
		}
	}
	return true
}
