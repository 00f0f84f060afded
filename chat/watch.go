package chat

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/workflows"
)

// Snapshot is what the watcher saw at one look at the session: what changed
// since the previous one (NewMessages), and the rest as it is now.
type Snapshot struct {
	RunID string
	// Closed is set once the session's workflow is no longer running;
	// CloseStatus says how it ended (completed, failed, terminated, …).
	Closed      bool
	CloseStatus string
	// State is the state query's latest answer, read at StateAt (the query
	// is made again only when the history has grown); nil until one could
	// be read. StateErr says why the latest query failed (most often: no
	// worker is running), nil when it did not.
	State    *workflows.State
	StateAt  time.Time
	StateErr error
	// NewMessages are the transcript's messages not seen before, oldest
	// first; the first snapshot has the whole transcript so far.
	NewMessages []model.Message
	// Stream is the root agent's model call that is running, with its reply
	// so far; nil when none runs.
	Stream *activities.ReplyStream
	// Tools are the names of the root agent's tools that are running.
	Tools []string
}

// watcher polls one session. Each look is one DescribeWorkflowExecution
// (served by the server alone: status, history length, the pending
// activities with their heartbeat details); the state and messages queries,
// which a worker answers, are made only when the history has grown since the
// last look, or the last query failed.
type watcher struct {
	c  client.Client
	id string
	dc converter.DataConverter

	runID      string
	historyLen int64
	stateOK    bool
	offset     int            // the transcript's messages seen
	last       *model.Message // the last message seen, to find the place again after continue-as-new
	closed     bool
	state      *workflows.State
	stateAt    time.Time
}

func newWatcher(c client.Client, id string, dc converter.DataConverter) *watcher {
	if dc == nil {
		dc = converter.GetDefaultDataConverter()
	}
	return &watcher{c: c, id: id, dc: dc}
}

// errNoSession says the workflow id names no session.
var errNoSession = errors.New("no such session")

// look takes one look at the session.
func (w *watcher) look(ctx context.Context) (Snapshot, error) {
	d, err := w.c.DescribeWorkflowExecution(ctx, w.id, "")
	if err != nil {
		if _, ok := errors.AsType[*serviceerror.NotFound](err); ok {
			return Snapshot{}, fmt.Errorf("%w: %s", errNoSession, w.id)
		}
		return Snapshot{}, fmt.Errorf("describe %s: %w", w.id, err)
	}
	info := d.GetWorkflowExecutionInfo()
	snap := Snapshot{RunID: info.GetExecution().GetRunId()}
	if s := info.GetStatus(); s != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		snap.Closed = true
		snap.CloseStatus = strings.ToLower(strings.TrimPrefix(s.String(), "WORKFLOW_EXECUTION_STATUS_"))
	}
	for _, pa := range d.GetPendingActivities() {
		switch pa.GetActivityType().GetName() {
		case activities.CallModelName:
			var rs activities.ReplyStream
			if hd := pa.GetHeartbeatDetails(); hd != nil && w.dc.FromPayloads(hd, &rs) == nil {
				snap.Stream = &rs
			} else {
				snap.Stream = &activities.ReplyStream{} // started, nothing written yet
			}
		case activities.RunToolName, activities.RunToolOnHostName:
			var name string
			if hd := pa.GetHeartbeatDetails(); hd != nil && w.dc.FromPayloads(hd, &name) == nil && name != "" {
				snap.Tools = append(snap.Tools, name)
			}
		}
	}

	changed := snap.RunID != w.runID || info.GetHistoryLength() != w.historyLen || !w.stateOK ||
		(snap.Closed && !w.closed)
	if !changed {
		snap.State, snap.StateAt = w.state, w.stateAt
		return snap, nil
	}
	at := time.Now()
	if snap.RunID != w.runID && w.runID != "" {
		// Continue-as-new: the new run's transcript is the old one compacted;
		// go on after the last message already seen.
		w.offset = -1
	}
	w.runID, w.historyLen, w.closed = snap.RunID, info.GetHistoryLength(), snap.Closed
	st, err := w.queryState(ctx)
	if err == nil {
		w.state, w.stateAt = &st, at
		snap.NewMessages, err = w.messages(ctx)
	}
	w.stateOK = err == nil
	snap.State, snap.StateAt, snap.StateErr = w.state, w.stateAt, err
	return snap, nil
}

func (w *watcher) queryState(ctx context.Context) (workflows.State, error) {
	v, err := w.c.QueryWorkflow(ctx, w.id, "", workflows.StateQuery)
	if err != nil {
		return workflows.State{}, fmt.Errorf("query the state of %s: %w", w.id, err)
	}
	var st workflows.State
	if err := v.Get(&st); err != nil {
		return workflows.State{}, fmt.Errorf("decode the state of %s: %w", w.id, err)
	}
	return st, nil
}

// messagesPage is how many messages one messages query asks for; the
// workflow also caps an answer's size.
const messagesPage = 200

// messages reads the messages after the ones seen, page by page.
func (w *watcher) messages(ctx context.Context) ([]model.Message, error) {
	from := max(w.offset, 0)
	var all []model.Message
	for {
		v, err := w.c.QueryWorkflow(ctx, w.id, "", workflows.MessagesQuery, from+len(all), messagesPage)
		if err != nil {
			return nil, fmt.Errorf("read the messages of %s: %w", w.id, err)
		}
		var page []model.Message
		if err := v.Get(&page); err != nil {
			return nil, fmt.Errorf("decode the messages of %s: %w", w.id, err)
		}
		if len(page) == 0 {
			break
		}
		all = append(all, page...)
	}
	if w.offset < 0 {
		// After continue-as-new the whole transcript was read: skip up to
		// the last message seen, or all of it when that one was compacted
		// away (then everything in it was seen before).
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

// watch looks at the session every interval and sends each snapshot to out
// until ctx ends or the session has closed (its last snapshot, Closed, is
// sent). A failed look is sent as an error and the watch goes on: the
// server may be restarting.
func (w *watcher) watch(ctx context.Context, interval time.Duration, out chan<- any) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		snap, err := w.look(lctx)
		cancel()
		var v any = snap
		if err != nil {
			v = err
		}
		select {
		case out <- v:
		case <-ctx.Done():
			return
		}
		if err == nil && snap.Closed && snap.State != nil {
			return
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}
