package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/todoflow/todoflow/api"

	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/temporal"
)

// A model call that fails is retried by the server (its activity's
// RetryPolicy, for the run's model_retry_window_s), and the run learns of
// it only when the server gives up: until then the state query's
// model_error is empty, or tells of an earlier turn. The pending CallModel
// activity knows what fails now: its attempt, its last failure, and when
// the call was first scheduled. So the state a client shows (starter
// state, the chat's retry line, Watch's events) takes its model_error from
// there while the call is retried; the field names are the state query's
// own (package api).

// retriedModelError is the model_error of the pending model call pa: nil
// when there is none, or it has not failed yet (its first attempt). Its
// attempts are those that failed; since is when the call was first
// scheduled, its expiration (the end of the retry window) less the
// window, or, from a server that does not say, the current attempt's.
func (c *Client) retriedModelError(pa *workflowpb.PendingActivityInfo) *api.ModelError {
	if pa == nil || pa.GetActivityType().GetName() != api.ModelCallActivity || pa.GetAttempt() <= 1 || pa.GetLastFailure() == nil {
		return nil
	}
	since := pa.GetScheduledTime().AsTime()
	if exp, window := pa.GetExpirationTime(), pa.GetActivityOptions().GetScheduleToCloseTimeout(); exp != nil && window != nil {
		since = exp.AsTime().Add(-window.AsDuration())
	}
	return &api.ModelError{
		Message:   api.ModelErrorText(c.lastFailure(pa)),
		Attempts:  int(pa.GetAttempt()) - 1,
		Since:     since.UTC(),
		Retryable: true,
	}
}

// Retry is what the pending model call tells beyond its model_error: the
// HTTP status the provider answered its last attempt with (0: none, or no
// HTTP answer) and when its next attempt is due (zero: it is under way, or
// the server does not say).
type Retry struct {
	Status int
	Next   time.Time
}

// retryOf is the Retry of the pending model call pa whose model_error is
// me (nil: none, and no Retry either).
func (c *Client) retryOf(pa *workflowpb.PendingActivityInfo, me *api.ModelError) Retry {
	if me == nil {
		return Retry{}
	}
	var r Retry
	if t := pa.GetNextAttemptScheduleTime(); t != nil {
		r.Next = t.AsTime()
	}
	var attempt int32
	if app, ok := errors.AsType[*temporal.ApplicationError](c.lastFailure(pa)); ok && app.HasDetails() {
		_ = app.Details(&attempt, &r.Status) // an older worker's failure has no status: 0
	}
	return r
}

// lastFailure is the error pa's last attempt failed with, its details
// decoded with the client's converter.
func (c *Client) lastFailure(pa *workflowpb.PendingActivityInfo) error {
	fc := temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{DataConverter: c.opts.DataConverter})
	return fc.FailureToError(pa.GetLastFailure())
}

// retriedModelCall is the model_error of the session's model call that the
// server retries now, nil when there is none (or the server could not be
// asked: the state goes on without it).
func (s *Session) retriedModelCall(ctx context.Context) *api.ModelError {
	d, err := s.c.tc.DescribeWorkflowExecution(ctx, s.id, "")
	if err != nil {
		return nil
	}
	for _, pa := range d.GetPendingActivities() {
		if me := s.c.retriedModelError(pa); me != nil {
			return me
		}
	}
	return nil
}

// withRetried is raw, a state query's answer, with the model call the
// server retries now as its model_error (see above); raw as it is when the
// run is not calling the model, or no call is being retried.
func (s *Session) withRetried(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
	var fields map[string]json.RawMessage
	var status string
	if json.Unmarshal(raw, &fields) != nil || json.Unmarshal(fields["status"], &status) != nil || status != api.StatusRunning {
		return raw, nil
	}
	me := s.retriedModelCall(ctx)
	if me == nil {
		return raw, nil
	}
	b, err := json.Marshal(me)
	if err != nil {
		return nil, fmt.Errorf("encode the model error of %s: %w", s.id, err)
	}
	fields["model_error"] = b
	out, err := json.Marshal(fields)
	if err != nil {
		return nil, fmt.Errorf("encode state of %s: %w", s.id, err)
	}
	return out, nil
}
