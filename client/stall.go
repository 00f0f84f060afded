package client

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/todoflow/todoflow/api"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
)

// Why a session makes no progress, named from what a client can see: the
// server that does not answer, or the work of the session that no worker
// takes (a workflow task or an activity the server holds, not picked up,
// or a query no worker answered) with the pollers the task queue had. A
// raw "query timed out" or a status that still says running tells the
// user nothing they can act on; these name what to start.

// ServerDownError: the Temporal server does not answer the client.
type ServerDownError struct {
	Address string // as the client was given it; "" when it was not
	Err     error
}

func (e *ServerDownError) Error() string {
	if e.Address == "" {
		return "the Temporal server does not answer"
	}
	return fmt.Sprintf("the Temporal server at %s does not answer", e.Address)
}

func (e *ServerDownError) Unwrap() error { return e.Err }

// NoWorkerError: no worker takes the session's work from TaskQueue.
type NoWorkerError struct {
	TaskQueue string
	// Since is the latest time a worker polled the queue, as the server
	// remembers it; zero when it remembers none.
	Since time.Time
	// Agent is the subagent whose work waits; "" for the session's own.
	Agent string
	// Address is the server's, for the command that starts a worker.
	Address string
}

func (e *NoWorkerError) Error() string {
	s := fmt.Sprintf("no worker polls `%s`", e.TaskQueue)
	if e.Agent != "" {
		s = fmt.Sprintf("subagent %s waits for a worker: %s", e.Agent, s)
	}
	if !e.Since.IsZero() {
		s += " since " + e.Since.Local().Format(time.TimeOnly)
	}
	cmd := "go run ./worker"
	if e.Address != "" {
		cmd += " --address " + e.Address
	}
	if e.TaskQueue != api.TaskQueue {
		cmd += " --task-queue " + e.TaskQueue
	}
	return s + " (start one: " + cmd + ")"
}

// notPickedUp is how long work may wait for a worker before the watch says
// none takes it: a worker polls all the time and takes a task within
// milliseconds, but a loaded machine may be slow, and a workflow task
// left on a dead worker's sticky queue moves to the shared one after 5 s.
const notPickedUp = 6 * time.Second

// serverDown reports whether err says the server could not be reached (as
// opposed to an answer that refused the request).
func serverDown(ctx context.Context, err error) bool {
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return false // the watch itself is ending
	}
	_, unavailable := errors.AsType[*serviceerror.Unavailable](err)
	return unavailable || queryTimedOut(err)
}

// queryTimedOut reports whether a query failed because no worker answered
// it in time.
func queryTimedOut(err error) bool {
	_, deadline := errors.AsType[*serviceerror.DeadlineExceeded](err)
	return deadline || errors.Is(err, context.DeadlineExceeded)
}

// waiting is a piece of the session's work that the server holds for a
// worker (due now, not started), with its task queue and kind.
type waiting struct {
	key   string // the task: the workflow task, or an activity's attempt
	queue string
	kind  enumspb.TaskQueueType
}

// pendingWork is what d shows waiting for a worker now.
func pendingWork(d *workflowservice.DescribeWorkflowExecutionResponse) []waiting {
	var out []waiting
	queue := d.GetWorkflowExecutionInfo().GetTaskQueue()
	if wt := d.GetPendingWorkflowTask(); wt != nil && wt.GetState() == enumspb.PENDING_WORKFLOW_TASK_STATE_SCHEDULED {
		out = append(out, waiting{key: fmt.Sprintf("workflow task %d", wt.GetAttempt()), queue: queue, kind: enumspb.TASK_QUEUE_TYPE_WORKFLOW})
	}
	for _, pa := range d.GetPendingActivities() {
		// An activity between two attempts (its next one is scheduled
		// for later) waits for its time, not for a worker.
		if pa.GetState() != enumspb.PENDING_ACTIVITY_STATE_SCHEDULED || pa.GetNextAttemptScheduleTime() != nil || pa.GetPaused() {
			continue
		}
		q := pa.GetActivityOptions().GetTaskQueue().GetName()
		if q == "" {
			q = queue
		}
		out = append(out, waiting{key: fmt.Sprintf("activity %s %d", pa.GetActivityId(), pa.GetAttempt()), queue: q, kind: enumspb.TASK_QUEUE_TYPE_ACTIVITY})
	}
	return out
}

// stalls remembers since when each piece of work has waited for a worker,
// across looks.
type stalls map[string]time.Time

// over returns the first work of now that has waited longer than
// notPickedUp, and forgets what is no longer waiting.
func (s stalls) over(now []waiting, at time.Time) (waiting, bool) {
	seen := map[string]bool{}
	var stuck waiting
	found := false
	for _, w := range now {
		seen[w.key] = true
		first, ok := s[w.key]
		if !ok {
			s[w.key] = at
			continue
		}
		if !found && at.Sub(first) > notPickedUp {
			stuck, found = w, true
		}
	}
	maps.DeleteFunc(s, func(k string, _ time.Time) bool { return !seen[k] })
	return stuck, found
}

// noWorker words what waits on queue of kind: the latest poll the server
// remembers. A server that cannot say still gets the queue named.
func (c *Client) noWorker(ctx context.Context, queue string, kind enumspb.TaskQueueType) *NoWorkerError {
	e := &NoWorkerError{TaskQueue: queue, Address: c.opts.Address}
	resp, err := c.tc.DescribeTaskQueue(ctx, queue, kind)
	if err != nil {
		return e
	}
	for _, p := range resp.GetPollers() {
		if t := p.GetLastAccessTime().AsTime(); p.GetLastAccessTime() != nil && t.After(e.Since) {
			e.Since = t
		}
	}
	return e
}

// childLook is how often the watch looks at the running subagents for
// work that waits: a child's run is its own workflow, which the root's
// describe does not show, so this costs one more describe per child.
const childLook = 2 * time.Second

// childWatch is what the watch remembers of the running subagents.
type childWatch struct {
	at    time.Time
	waits map[string]stalls // by agent id
	err   error             // the latest look's finding, kept between looks
}

// childStall is a *NoWorkerError naming the first running subagent (of
// the root's own, in id order) whose work waits for a worker; nil when
// none does. It looks every childLook, and says what it last found
// between two looks.
func (w *watcher) childStall(ctx context.Context) error {
	cw := &w.children
	now := time.Now()
	if now.Sub(cw.at) < childLook {
		return cw.err
	}
	cw.at, cw.err = now, nil
	running := runningChildren(w.queried)
	if cw.waits == nil {
		cw.waits = map[string]stalls{}
	}
	maps.DeleteFunc(cw.waits, func(id string, _ stalls) bool { return !slices.Contains(running, id) })
	for _, id := range running {
		d, err := w.s.c.tc.DescribeWorkflowExecution(ctx, w.s.id+"/"+id, "")
		if err != nil {
			continue // a child the server does not show cannot be judged
		}
		if cw.waits[id] == nil {
			cw.waits[id] = stalls{}
		}
		if wk, ok := cw.waits[id].over(pendingWork(d), now); ok && cw.err == nil {
			e := w.s.c.noWorker(ctx, wk.queue, wk.kind)
			e.Agent = id
			cw.err = e
		}
	}
	return cw.err
}

// runningChildren are the ids of st's subagents whose runs go on.
func runningChildren(st api.State) []string {
	var ids []string
	for _, id := range slices.Sorted(maps.Keys(st.Subagents)) {
		switch st.Subagents[id].Status {
		case api.StatusCompleted, api.StatusFailed:
		default:
			ids = append(ids, id)
		}
	}
	return ids
}
