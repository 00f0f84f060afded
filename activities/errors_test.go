package activities

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/transcript"
)

// errSDKStatus stands in for the OpenAI SDK's error, whose text is only
// the status line.
var errSDKStatus = errors.New("OpenAI API error: 400 Bad Request")

// wantAppErr checks that err is an application error of the type, retryable or not.
func wantAppErr(t *testing.T, err error, typ string, nonRetryable bool) *temporal.ApplicationError {
	t.Helper()
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) {
		t.Fatalf("got %v (%T), want an application error", err, err)
	}
	if appErr.Type() != typ || appErr.NonRetryable() != nonRetryable {
		t.Fatalf("got type %q, non-retryable %v (%v); want %q, non-retryable %v",
			appErr.Type(), appErr.NonRetryable(), appErr, typ, nonRetryable)
	}
	return appErr
}

func TestClassify(t *testing.T) {
	const where = `openai: model "m" at http://127.0.0.1:1/v1`
	timeout := errors.New(`Post "http://127.0.0.1:1/v1/chat/completions": context deadline exceeded`)
	tests := []struct {
		name             string
		err              error
		wantType         string
		wantNonRetryable bool
		wantDelay        time.Duration
		wantMessage      string
		wantCause        error // nil: no cause attached
	}{
		{
			name: "503 is retried after the provider's delay",
			err: &model.Error{Retryable: true, StatusCode: 503, RetryAfter: 7 * time.Second,
				Message: where + ": 503 Service Unavailable: overloaded", Err: errors.New("OpenAI API error: 503 Service Unavailable")},
			wantType: ErrTypeModel, wantDelay: 7 * time.Second,
			wantMessage: where + ": 503 Service Unavailable: overloaded",
		},
		{
			name: "a Retry-After under the floor waits the floor",
			err: &model.Error{Retryable: true, StatusCode: 429, RetryAfter: time.Second,
				Message: where + ": 429 Too Many Requests", Err: errors.New("OpenAI API error: 429 Too Many Requests")},
			wantType: ErrTypeModel, wantDelay: minRetryAfter,
			wantMessage: where + ": 429 Too Many Requests",
		},
		{
			name: "400 is not retried and the SDK's status line is not repeated",
			err: &model.Error{StatusCode: 400,
				Message: where + ": 400 Bad Request: Invalid value for 'temperature'", Err: errSDKStatus},
			wantType: ErrTypeModel, wantNonRetryable: true,
			wantMessage: where + ": 400 Bad Request: Invalid value for 'temperature'",
		},
		{
			name: "context overflow has its own type",
			err: &model.Error{StatusCode: 400, ContextOverflow: true,
				Message: where + ": 400 Bad Request: the request does not fit the model's context window (server said: This model's maximum context length is 8192 tokens)",
				Err:     errSDKStatus},
			wantType: ErrTypeContextOverflow, wantNonRetryable: true,
			wantMessage: where + ": 400 Bad Request: the request does not fit the model's context window (server said: This model's maximum context length is 8192 tokens)",
		},
		{
			name:     "context overflow is never retried",
			err:      &model.Error{Retryable: true, StatusCode: 413, ContextOverflow: true, Message: "too long"},
			wantType: ErrTypeContextOverflow, wantNonRetryable: true, wantMessage: "too long",
		},
		{
			name: "a transport error the message quotes is not repeated",
			err: &model.Error{Retryable: true,
				Message: "openai: cannot get an answer from http://127.0.0.1:1/v1: dial tcp 127.0.0.1:1: connection refused",
				Err:     errors.New("dial tcp 127.0.0.1:1: connection refused")},
			wantType:    ErrTypeModel,
			wantMessage: "openai: cannot get an answer from http://127.0.0.1:1/v1: dial tcp 127.0.0.1:1: connection refused",
		},
		{
			name:        "a transport error that says more is kept as the cause",
			err:         &model.Error{Retryable: true, Message: "openai: http://127.0.0.1:1/v1 did not answer within 50ms", Err: timeout},
			wantType:    ErrTypeModel,
			wantMessage: "openai: http://127.0.0.1:1/v1 did not answer within 50ms",
			wantCause:   timeout,
		},
		{
			name:        "a wrapped model error is classified by what it wraps",
			err:         fmt.Errorf("calling: %w", &model.Error{StatusCode: 400, ContextOverflow: true, Message: "too long"}),
			wantType:    ErrTypeContextOverflow,
			wantMessage: "too long", wantNonRetryable: true,
		},
		{
			name:        "an unclassified error is retried",
			err:         errors.New("something odd"),
			wantType:    ErrTypeModel,
			wantMessage: "something odd",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := classify(tt.err, 1, nil)
			app := wantAppErr(t, got, tt.wantType, tt.wantNonRetryable)
			if app.NextRetryDelay() != tt.wantDelay {
				t.Errorf("NextRetryDelay = %v, want %v", app.NextRetryDelay(), tt.wantDelay)
			}
			if app.Message() != tt.wantMessage {
				t.Errorf("Message = %q, want %q", app.Message(), tt.wantMessage)
			}
			if cause := app.Unwrap(); cause != tt.wantCause {
				t.Errorf("cause = %v, want %v", cause, tt.wantCause)
			}
			// What users read: the sentence once, and nothing said twice.
			if n := strings.Count(app.Error(), tt.wantMessage); n != 1 {
				t.Errorf("Error() = %q holds the message %d times, want once", app.Error(), n)
			}
			if strings.Contains(app.Error(), "OpenAI API error") {
				t.Errorf("Error() = %q repeats the SDK's status line", app.Error())
			}
		})
	}
}

// A cancelled call is not a model failure: the error goes back as it is,
// for Temporal to see the cancellation.
func TestClassifyCancellation(t *testing.T) {
	for _, err := range []error{context.Canceled, fmt.Errorf("post: %w", context.DeadlineExceeded)} {
		if got := classify(err, 1, nil); got != err {
			t.Errorf("classify(%v) = %v, want it unchanged", err, got)
		}
	}
}

// The provider's Retry-After is the next delay, but never under the floor,
// nor under the policy's backoff for the attempt, nor over its longest wait.
func TestRetryDelay(t *testing.T) {
	policy := &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 5 * time.Minute}
	tests := []struct {
		name       string
		retryAfter time.Duration
		attempt    int32
		policy     *temporal.RetryPolicy
		want       time.Duration
	}{
		{"no Retry-After: the policy's backoff", 0, 3, policy, 0},
		{"1 s is raised to the floor", time.Second, 1, policy, minRetryAfter},
		{"the floor without a policy", time.Second, 9, nil, minRetryAfter},
		{"over the floor as asked", 7 * time.Second, 2, policy, 7 * time.Second},
		{"the backoff goes on growing under a short Retry-After", time.Second, 6, policy, 32 * time.Second},
		{"never over the policy's longest wait", time.Hour, 1, policy, 5 * time.Minute},
		{"a late attempt waits the longest", time.Second, 40, policy, 5 * time.Minute},
	}
	for _, tt := range tests {
		if got := retryDelay(tt.retryAfter, tt.attempt, tt.policy); got != tt.want {
			t.Errorf("%s: retryDelay(%s, %d) = %s, want %s", tt.name, tt.retryAfter, tt.attempt, got, tt.want)
		}
	}
}

// TestCallModelRetryAfterFloor runs CallModel as a worker would: a provider
// that asks for "Retry-After: 1" is asked again after the floor, and the
// failure says which attempt failed.
func TestCallModelRetryAfterFloor(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	a := &Activities{Models: func(string) (model.Client, string, error) {
		return stubModel{err: &model.Error{Retryable: true, StatusCode: 429, RetryAfter: time.Second, Message: "openai: 429 Too Many Requests"}}, "m", nil
	}}
	env.RegisterActivity(a)
	_, err := env.ExecuteActivity(a.CallModel, CallModelInput{Model: "m", Call: 1, Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}})
	app := wantAppErr(t, err, ErrTypeModel, false)
	if got := app.NextRetryDelay(); got != minRetryAfter {
		t.Errorf("NextRetryDelay = %s, want the floor %s", got, minRetryAfter)
	}
	if n := FailedAttempt(err); n != 1 {
		t.Errorf("FailedAttempt = %d, want 1", n)
	}
	// The provider's status follows the attempt, for a client that shows
	// what the provider answers while the call is retried.
	var attempt int32
	var status int
	if err := app.Details(&attempt, &status); err != nil || status != 429 {
		t.Errorf("details: status %d (%v), want 429 after the attempt", status, err)
	}
}

// stubModel answers every call with err.
type stubModel struct{ err error }

func (m stubModel) Complete(context.Context, model.Request) (model.Response, error) {
	return model.Response{}, m.err
}

// TestCallModelErrorTypes runs CallModel as a worker would, so the errors
// are seen after Temporal's failure conversion, as a workflow sees them.
func TestCallModelErrorTypes(t *testing.T) {
	overflow := &model.Error{StatusCode: 400, ContextOverflow: true, Err: errSDKStatus,
		Message: "openai: model \"m\" at http://x/v1: 400 Bad Request: the request does not fit the model's context window (server said: prompt is too long)"}
	tests := []struct {
		name             string
		models           ModelResolver
		wantType         string
		wantNonRetryable bool
		wantMessage      string
	}{
		{
			name: "context overflow",
			models: func(string) (model.Client, string, error) {
				return stubModel{err: overflow}, "m", nil
			},
			wantType: ErrTypeContextOverflow, wantNonRetryable: true, wantMessage: overflow.Message,
		},
		{
			name: "server error",
			models: func(string) (model.Client, string, error) {
				return stubModel{err: &model.Error{Retryable: true, StatusCode: 502, Message: "openai: 502 Bad Gateway"}}, "m", nil
			},
			wantType: ErrTypeModel, wantMessage: "openai: 502 Bad Gateway",
		},
		{
			name:     "no resolver",
			wantType: ErrTypeModelConfig, wantNonRetryable: true, wantMessage: "worker has no model resolver",
		},
		{
			name: "unknown model",
			models: func(string) (model.Client, string, error) {
				return nil, "", errors.New(`unknown model kind "x": want openai or script`)
			},
			wantType: ErrTypeModelConfig, wantNonRetryable: true, wantMessage: `model "x:y": unknown model kind "x": want openai or script`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestActivityEnvironment()
			a := &Activities{Models: tt.models}
			env.RegisterActivity(a)
			_, err := env.ExecuteActivity(a.CallModel, CallModelInput{
				Model:    "x:y",
				Call:     1,
				Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}},
			})
			app := wantAppErr(t, err, tt.wantType, tt.wantNonRetryable)
			if app.Message() != tt.wantMessage {
				t.Errorf("Message = %q, want %q", app.Message(), tt.wantMessage)
			}
		})
	}
}

// A tool call read outside an activity cannot be checked against the
// transcript, and says so with the mismatch type.
func TestReadCallOutsideActivity(t *testing.T) {
	_, err := (&Activities{}).readCall(context.Background(), RunToolInput{From: &transcript.CallRef{}, Call: model.ToolCall{ID: "call_1"}})
	wantAppErr(t, err, transcript.ErrTypeMismatch, true)
}

// The types are recorded in histories and switched on by workflows; a
// renamed constant would silently stop matching.
func TestErrorTypeNames(t *testing.T) {
	for got, want := range map[string]string{
		ErrTypeModel:               "ModelError",
		ErrTypeModelConfig:         "ModelConfig",
		ErrTypeContextOverflow:     "ContextLengthExceeded",
		transcript.ErrTypeMismatch: "TranscriptMismatch",
		transcript.ErrTypeHole:     "TranscriptHole",
	} {
		if got != want {
			t.Errorf("error type %q, want %q", got, want)
		}
	}
}
