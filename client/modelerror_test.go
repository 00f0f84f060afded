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
	"go.temporal.io/sdk/temporal"
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

// A retried call's Retry: the provider's HTTP status, from the failure's
// details as CallModel writes them (attempt, status), and when the next
// attempt is due; a failure without the status (an older worker's, a
// timeout) has none.
func TestRetryOf(t *testing.T) {
	c := New(nil, Options{})
	fc := temporal.GetDefaultFailureConverter()
	failed := func(details ...any) *failurepb.Failure {
		return fc.ErrorToFailure(temporal.NewApplicationError("openai: 429 Too Many Requests", "ModelError", details...))
	}
	next := time.Date(2026, 11, 28, 9, 31, 0, 0, time.UTC)
	me := &api.ModelError{Attempts: 1}
	tests := []struct {
		name string
		pa   *workflowpb.PendingActivityInfo
		me   *api.ModelError
		want Retry
	}{
		{"status and next attempt", &workflowpb.PendingActivityInfo{LastFailure: failed(int32(1), 429), NextAttemptScheduleTime: timestamppb.New(next)}, me, Retry{Status: 429, Next: next}},
		{"an older worker's failure", &workflowpb.PendingActivityInfo{LastFailure: failed(int32(1))}, me, Retry{}},
		{"a timeout", &workflowpb.PendingActivityInfo{LastFailure: &failurepb.Failure{Message: "timeout", FailureInfo: &failurepb.Failure_TimeoutFailureInfo{
			TimeoutFailureInfo: &failurepb.TimeoutFailureInfo{TimeoutType: enumspb.TIMEOUT_TYPE_HEARTBEAT}}}}, me, Retry{}},
		{"no model error", &workflowpb.PendingActivityInfo{LastFailure: failed(int32(1), 429)}, nil, Retry{}},
	}
	for _, tt := range tests {
		if got := c.retryOf(tt.pa, tt.me); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
