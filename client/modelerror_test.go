package client

import (
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	activitypb "go.temporal.io/api/activity/v1"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// A model call the server retries is the state's model_error: its failed
// attempts, its last failure in a sentence, and since when (the start of
// its retry window); a first attempt, or another activity, is none.
func TestRetriedModelError(t *testing.T) {
	c := New(nil, Options{})
	first := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	window := 24 * time.Hour
	call := func(attempt int32, failure *failurepb.Failure) *workflowpb.PendingActivityInfo {
		return &workflowpb.PendingActivityInfo{
			ActivityType:    &commonpb.ActivityType{Name: api.ModelCallActivity},
			State:           enumspb.PENDING_ACTIVITY_STATE_SCHEDULED,
			Attempt:         attempt,
			LastFailure:     failure,
			ScheduledTime:   timestamppb.New(first.Add(3 * time.Minute)),
			ExpirationTime:  timestamppb.New(first.Add(window)),
			ActivityOptions: &activitypb.ActivityOptions{ScheduleToCloseTimeout: durationpb.New(window)},
		}
	}
	unavailable := &failurepb.Failure{Message: "openai: 503 Service Unavailable", FailureInfo: &failurepb.Failure_ApplicationFailureInfo{
		ApplicationFailureInfo: &failurepb.ApplicationFailureInfo{Type: "ModelError"}}}
	got := c.retriedModelError(call(4, unavailable))
	want := api.ModelError{Message: "openai: 503 Service Unavailable", Attempts: 3, Since: first, Retryable: true}
	if got == nil || *got != want {
		t.Errorf("a call at its fourth attempt: %+v, want %+v", got, want)
	}

	timedOut := &failurepb.Failure{Message: "activity Heartbeat timeout", FailureInfo: &failurepb.Failure_TimeoutFailureInfo{
		TimeoutFailureInfo: &failurepb.TimeoutFailureInfo{TimeoutType: enumspb.TIMEOUT_TYPE_HEARTBEAT}}}
	if got := c.retriedModelError(call(2, timedOut)); got == nil || !strings.Contains(got.Message, "timed out (heartbeat)") {
		t.Errorf("a call whose attempt timed out: %+v, want the timeout in a sentence", got)
	}

	old := call(2, unavailable)
	old.ActivityOptions = nil // a server that does not say: the attempt's own time
	if got := c.retriedModelError(old); got == nil || !got.Since.Equal(first.Add(3*time.Minute)) {
		t.Errorf("since from a server without activity options: %+v", got)
	}

	tool := call(3, unavailable)
	tool.ActivityType.Name = api.ToolActivity
	for name, pa := range map[string]*workflowpb.PendingActivityInfo{
		"first attempt": call(1, nil), "no failure": call(2, nil), "a tool": tool, "none": nil,
	} {
		if got := c.retriedModelError(pa); got != nil {
			t.Errorf("%s: %+v, want none", name, got)
		}
	}
}
