package client

import (
	"context"
	"errors"
	"fmt"
	"github.com/todoflow/todoflow/api"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/timestamppb"
)

func TestStallWords(t *testing.T) {
	since := time.Date(2026, 1, 2, 9, 25, 43, 0, time.Local)
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"no worker, default queue", &NoWorkerError{TaskQueue: "todoflow", Since: since, Address: "localhost:7233"},
			"no worker polls `todoflow` since 09:25:43 (start one: go run ./worker --address localhost:7233)"},
		{"another queue, no poll remembered", &NoWorkerError{TaskQueue: "host-a"},
			"no worker polls `host-a` (start one: go run ./worker --task-queue host-a)"},
		{"a subagent's", &NoWorkerError{TaskQueue: "todoflow", Agent: "coder"},
			"subagent coder waits for a worker: no worker polls `todoflow` (start one: go run ./worker)"},
		{"server", &ServerDownError{Address: "127.0.0.1:7233"}, "the Temporal server at 127.0.0.1:7233 does not answer"},
		{"server, no address", &ServerDownError{}, "the Temporal server does not answer"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestServerDown(t *testing.T) {
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want bool
	}{
		{"unavailable", context.Background(), fmt.Errorf("describe: %w", serviceerror.NewUnavailable("connection refused")), true},
		{"deadline", context.Background(), context.DeadlineExceeded, true},
		{"refused", context.Background(), serviceerror.NewPermissionDenied("no", ""), false},
		{"not found", context.Background(), serviceerror.NewNotFound("gone"), false},
		{"the watch is ending", ended, serviceerror.NewUnavailable("x"), false},
	}
	for _, tt := range tests {
		if got := serverDown(tt.ctx, tt.err); got != tt.want {
			t.Errorf("%s: serverDown = %v, want %v", tt.name, got, tt.want)
		}
	}
	if !queryTimedOut(fmt.Errorf("query: %w", serviceerror.NewDeadlineExceeded("query timed out before a worker could process it"))) {
		t.Error("a query the server gave up on is not seen as timed out")
	}
	if queryTimedOut(errors.New("workflow panicked")) {
		t.Error("a query that failed otherwise is seen as timed out")
	}
}

// The work that waits for a worker: a scheduled workflow task, an activity
// due now; not one that runs, nor one that waits for its next attempt.
func TestPendingWork(t *testing.T) {
	later := timestamppb.New(time.Now().Add(time.Minute))
	d := &workflowservice.DescribeWorkflowExecutionResponse{
		WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{TaskQueue: "todoflow"},
		PendingWorkflowTask:   &workflowpb.PendingWorkflowTaskInfo{State: enumspb.PENDING_WORKFLOW_TASK_STATE_SCHEDULED, Attempt: 1},
		PendingActivities: []*workflowpb.PendingActivityInfo{
			{ActivityId: "5", State: enumspb.PENDING_ACTIVITY_STATE_SCHEDULED, Attempt: 2},
			{ActivityId: "6", State: enumspb.PENDING_ACTIVITY_STATE_STARTED, Attempt: 1},
			{ActivityId: "7", State: enumspb.PENDING_ACTIVITY_STATE_SCHEDULED, Attempt: 3, NextAttemptScheduleTime: later},
		},
	}
	got := pendingWork(d)
	want := []waiting{
		{key: "workflow task 1", queue: "todoflow", kind: enumspb.TASK_QUEUE_TYPE_WORKFLOW},
		{key: "activity 5 2", queue: "todoflow", kind: enumspb.TASK_QUEUE_TYPE_ACTIVITY},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pendingWork = %v, want %v", got, want)
	}
	d.PendingWorkflowTask.State = enumspb.PENDING_WORKFLOW_TASK_STATE_STARTED
	d.PendingActivities = nil
	if got := pendingWork(d); len(got) != 0 {
		t.Errorf("with the task started: %v, want nothing waiting", got)
	}
}

// Work is stuck once the same task has waited longer than notPickedUp
// across looks; a task taken meanwhile starts the count again.
func TestStallsOver(t *testing.T) {
	t0 := time.Now()
	a := waiting{key: "activity 5 2", queue: "todoflow"}
	b := waiting{key: "activity 5 3", queue: "todoflow"}
	s := stalls{}
	steps := []struct {
		at    time.Duration
		now   []waiting
		stuck bool
	}{
		{0, []waiting{a}, false},
		{notPickedUp / 2, []waiting{a}, false},
		{notPickedUp + time.Second, []waiting{a}, true},
		{notPickedUp + 2*time.Second, nil, false},          // taken
		{notPickedUp + 3*time.Second, []waiting{b}, false}, // its next attempt: counted anew
		{2*notPickedUp + 4*time.Second, []waiting{b}, true},
	}
	for i, st := range steps {
		if _, stuck := s.over(st.now, t0.Add(st.at)); stuck != st.stuck {
			t.Errorf("look %d (at %v): stuck = %v, want %v", i, st.at, stuck, st.stuck)
		}
	}
}

// noWorker names the latest poll the server remembers.
func TestNoWorkerSince(t *testing.T) {
	last := time.Date(2026, 1, 2, 9, 25, 43, 0, time.UTC)
	tc := &describedQueue{resp: &workflowservice.DescribeTaskQueueResponse{Pollers: []*taskqueuepb.PollerInfo{
		{LastAccessTime: timestamppb.New(last.Add(-time.Minute))}, {LastAccessTime: timestamppb.New(last)}, {},
	}}}
	c := New(tc, Options{Address: "h:1"})
	e := c.noWorker(context.Background(), "todoflow", enumspb.TASK_QUEUE_TYPE_WORKFLOW)
	if !e.Since.Equal(last) || e.TaskQueue != "todoflow" || e.Address != "h:1" {
		t.Errorf("noWorker = %+v, want since %v on todoflow at h:1", e, last)
	}
	tc.err = serviceerror.NewUnavailable("down")
	if e := c.noWorker(context.Background(), "q", enumspb.TASK_QUEUE_TYPE_ACTIVITY); !e.Since.IsZero() || e.TaskQueue != "q" {
		t.Errorf("with the queue unreadable: %+v, want the queue named and no time", e)
	}
}

// describedQueue answers DescribeTaskQueue only.
type describedQueue struct {
	sdkclient.Client
	resp *workflowservice.DescribeTaskQueueResponse
	err  error
}

func (d *describedQueue) DescribeTaskQueue(context.Context, string, enumspb.TaskQueueType) (*workflowservice.DescribeTaskQueueResponse, error) {
	return d.resp, d.err
}

// describedRuns answers DescribeWorkflowExecution by workflow id, and
// DescribeTaskQueue with no pollers.
type describedRuns struct {
	sdkclient.Client
	runs  map[string]*workflowservice.DescribeWorkflowExecutionResponse
	asked []string
}

func (d *describedRuns) DescribeWorkflowExecution(_ context.Context, id, _ string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	d.asked = append(d.asked, id)
	if r, ok := d.runs[id]; ok {
		return r, nil
	}
	return nil, serviceerror.NewNotFound(id)
}

func (d *describedRuns) DescribeTaskQueue(context.Context, string, enumspb.TaskQueueType) (*workflowservice.DescribeTaskQueueResponse, error) {
	return &workflowservice.DescribeTaskQueueResponse{}, nil
}

// A running subagent whose work no worker takes is named; a finished one
// is not looked at, and the children are looked at every childLook only.
func TestChildStall(t *testing.T) {
	waitingActivity := &workflowservice.DescribeWorkflowExecutionResponse{
		WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{TaskQueue: "todoflow"},
		PendingActivities:     []*workflowpb.PendingActivityInfo{{ActivityId: "5", State: enumspb.PENDING_ACTIVITY_STATE_SCHEDULED, Attempt: 2}},
	}
	tc := &describedRuns{runs: map[string]*workflowservice.DescribeWorkflowExecutionResponse{
		"root/coder":  waitingActivity,
		"root/tester": {WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{TaskQueue: "todoflow"}},
	}}
	w := &watcher{s: New(tc, Options{}).Session("root"), queried: api.State{Subagents: map[string]api.State{
		"coder": {Status: api.StatusRunning}, "tester": {Status: api.StatusRunning}, "done": {Status: api.StatusCompleted},
	}}}
	if err := w.childStall(context.Background()); err != nil {
		t.Fatalf("at the first look: %v, want nothing yet (the work just began to wait)", err)
	}
	if got := fmt.Sprint(tc.asked); got != "[root/coder root/tester]" {
		t.Errorf("described %s, want the running children only", got)
	}
	// The activity has waited a minute; the next look is due.
	w.children.waits["coder"]["activity 5 2"] = time.Now().Add(-time.Minute)
	w.children.at = time.Time{}
	err := w.childStall(context.Background())
	var nw *NoWorkerError
	if !errors.As(err, &nw) || nw.Agent != "coder" || nw.TaskQueue != "todoflow" {
		t.Fatalf("childStall = %v, want coder named, waiting on todoflow", err)
	}
	// Between looks the finding stands, without asking the server.
	asked := len(tc.asked)
	if err := w.childStall(context.Background()); !errors.As(err, &nw) || len(tc.asked) != asked {
		t.Errorf("between looks: %v, %d more describes; want the same finding and none", err, len(tc.asked)-asked)
	}
}
