package client

import (
	"context"
	"fmt"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/internal/replystream"
	"github.com/todoflow/todoflow/model"
)

// Watch shows whichever is further along: the heartbeat's preview or the
// followed stream; nothing of a stream while no model call runs.
func TestStreamNow(t *testing.T) {
	tests := []struct {
		name    string
		preview StreamChanged
		live    *replystream.Assembled // nil: no frame came
		want    StreamChanged
	}{
		{"preview only", StreamChanged{Running: true, Call: 2, Text: "The fix"}, nil,
			StreamChanged{Running: true, Call: 2, Text: "The fix"}},
		{"the stream, further along", StreamChanged{Running: true, Call: 2, Text: "The fix"}, &replystream.Assembled{Call: 2, Text: "The fix is in"},
			StreamChanged{Running: true, Call: 2, Text: "The fix is in"}},
		{"the stream before any heartbeat", StreamChanged{Running: true}, &replystream.Assembled{Call: 3, Text: "T"},
			StreamChanged{Running: true, Call: 3, Text: "T"}},
		{"a stream that lags (it reconnected)", StreamChanged{Running: true, Call: 2, Text: "The fix is in"}, &replystream.Assembled{Call: 2, Text: "The"},
			StreamChanged{Running: true, Call: 2, Text: "The fix is in"}},
		{"a long reply, counted from its start", StreamChanged{Running: true, Call: 2, Text: "tail", Cut: 100}, &replystream.Assembled{Call: 2, Text: "the longer tail", Cut: 95},
			StreamChanged{Running: true, Call: 2, Text: "the longer tail", Cut: 95}},
		{"no call runs", StreamChanged{}, &replystream.Assembled{Call: 2, Text: "stale"}, StreamChanged{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &watcher{preview: tt.preview}
			if tt.live != nil {
				w.live = &liveStream{reply: *tt.live, got: true}
			}
			if got := w.streamNow(); got != tt.want {
				t.Errorf("streamNow() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// The server keeps a call's last heartbeat details for its next attempt,
// which writes its reply again from the start: Watch previews an attempt
// with its own details only, never with those of the attempt that failed
// (or whose worker died).
func TestCurrentDetails(t *testing.T) {
	details := &commonpb.Payloads{Payloads: []*commonpb.Payload{{Data: []byte(`{"text":"The fix"}`)}}}
	start := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	call := func(state enumspb.PendingActivityState, attempt int32, beat, started time.Duration) *workflowpb.PendingActivityInfo {
		pa := &workflowpb.PendingActivityInfo{State: state, Attempt: attempt, HeartbeatDetails: details,
			LastHeartbeatTime: timestamppb.New(start.Add(beat))}
		if started >= 0 {
			pa.LastStartedTime = timestamppb.New(start.Add(started))
		}
		return pa
	}
	tests := []struct {
		name string
		pa   *workflowpb.PendingActivityInfo
		want bool
	}{
		{"the first attempt's", call(enumspb.PENDING_ACTIVITY_STATE_STARTED, 1, 4*time.Second, 0), true},
		{"the next attempt's own", call(enumspb.PENDING_ACTIVITY_STATE_STARTED, 2, 14*time.Second, 10*time.Second), true},
		{"the failed attempt's, the next one started", call(enumspb.PENDING_ACTIVITY_STATE_STARTED, 2, 4*time.Second, 10*time.Second), false},
		{"the failed attempt's, the next one not started", call(enumspb.PENDING_ACTIVITY_STATE_SCHEDULED, 2, 4*time.Second, -1), false},
		{"the failed attempt's, a cancel asked", call(enumspb.PENDING_ACTIVITY_STATE_CANCEL_REQUESTED, 3, 4*time.Second, 10*time.Second), false},
	}
	for _, tt := range tests {
		if got := currentDetails(tt.pa) != nil; got != tt.want {
			t.Errorf("%s: details shown %v, want %v", tt.name, got, tt.want)
		}
	}
	if currentDetails(&workflowpb.PendingActivityInfo{Attempt: 2}) != nil {
		t.Error("a call without details has some")
	}
}

// The next attempt of a call is followed anew, even on the worker that
// ran the attempt before, under the same key: that attempt's stream ended
// with it.
func TestFollowTheNextAttempt(t *testing.T) {
	srv, err := replystream.Listen("127.0.0.1:0", replystream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &watcher{s: New(nil, Options{}).Session("s"), ctx: ctx, streamed: make(chan struct{}, 1)}
	run := &workflowpb.WorkflowExecutionInfo{Execution: &commonpb.WorkflowExecution{WorkflowId: "s", RunId: "r"}}
	call := func(attempt int32) *workflowpb.PendingActivityInfo {
		return &workflowpb.PendingActivityInfo{ActivityId: "6", State: enumspb.PENDING_ACTIVITY_STATE_STARTED,
			Attempt: attempt, LastWorkerIdentity: srv.Identity("1@host@")}
	}
	w.follow(run, call(1))
	first := w.live
	if first == nil || first.at != srv.URL() || first.attempt != 1 {
		t.Fatalf("the first attempt: following %+v, want its stream at %s", first, srv.URL())
	}
	// The first attempt's stream ended with it (its last frame came).
	first.mu.Lock()
	first.over, first.failed = true, time.Time{}
	first.mu.Unlock()
	w.follow(run, call(1))
	if w.live != first {
		t.Fatal("the same attempt, its stream over: followed again, want it kept")
	}
	w.follow(run, call(2))
	if w.live == first || w.live == nil || w.live.attempt != 2 || w.live.key != first.key {
		t.Errorf("the next attempt on the same worker: following %+v, want its own stream", w.live)
	}
}

// describedCall is a session whose describe shows its model call running
// (the describe was taken first) while its queries answer with the
// transcript as it stands now.
type describedCall struct {
	sdkclient.Client
	status string
	msgs   []model.Message
}

func (d *describedCall) DescribeWorkflowExecution(context.Context, string, string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	return &workflowservice.DescribeWorkflowExecutionResponse{
		WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{
			Execution: &commonpb.WorkflowExecution{WorkflowId: "s", RunId: "r"},
			Status:    enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, HistoryLength: 11,
		},
		PendingActivities: []*workflowpb.PendingActivityInfo{{ActivityId: "6", ActivityType: &commonpb.ActivityType{Name: api.ModelCallActivity},
			State: enumspb.PENDING_ACTIVITY_STATE_STARTED, Attempt: 1}},
	}, nil
}

func (d *describedCall) QueryWorkflow(_ context.Context, _, _, name string, args ...any) (converter.EncodedValue, error) {
	switch name {
	case api.StateQuery:
		return jsonValue{api.State{AgentID: "s", Status: d.status}}, nil
	case api.MessagesQuery:
		return jsonValue{d.msgs[min(args[0].(int), len(d.msgs)):]}, nil
	}
	return nil, fmt.Errorf("unexpected query %s", name)
}

// A look whose describe shows the model call running, and whose queries,
// made after it, read that call's answer: the call has answered, and its
// reply is not shown as still being written (it would show twice, in the
// transcript and in the stream, until the next look). A call that runs
// after the last message read (the user's) is.
func TestLookAnsweredCall(t *testing.T) {
	ask := model.Message{Role: model.RoleUser, Content: "fix the check"}
	reply := model.Message{Role: model.RoleAssistant, Content: "Done."}
	for _, tc := range []struct {
		name    string
		status  string
		msgs    []model.Message
		running bool
	}{
		{"answered since the describe", api.StatusWaitingUser, []model.Message{ask, reply}, false},
		{"answered with tool calls", api.StatusRunning, []model.Message{ask, {Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c1", Name: "read_file"}}}}, false},
		{"still running", api.StatusRunning, []model.Message{ask}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			w := &watcher{s: New(&describedCall{status: tc.status, msgs: tc.msgs}, Options{}).Session("s"), ctx: ctx, streamed: make(chan struct{}, 1)}
			evs, _ := w.look(ctx)
			var msgs int
			running := false
			for _, ev := range evs {
				switch ev := ev.(type) {
				case NewMessage:
					msgs++
				case StreamChanged:
					running = ev.Running
				}
			}
			if msgs != len(tc.msgs) || running != tc.running {
				t.Errorf("%d messages, the model call running %v; want %d, %v (events %+v)", msgs, running, len(tc.msgs), tc.running, evs)
			}
		})
	}
}
