package activities

import (
	"errors"
	"strings"

	"go.temporal.io/sdk/temporal"
)

// Types of the Temporal application errors the activities return. A workflow
// tells failures apart by ApplicationError.Type(), not by message text, so
// these strings are part of the contract between activities and workflows,
// and they are recorded in workflow histories.
const (
	// ErrTypeModel is a failed model call: the server refused the request
	// or did not answer. It is retryable or not as model.Error classified
	// it, with the provider's Retry-After as the next retry delay, and its
	// details are the attempt's number (FailedAttempt).
	ErrTypeModel = "ModelError"

	// ErrTypeModelConfig means the worker is misconfigured for the call:
	// the model reference is unknown or its client cannot be built (no API
	// key), or the worker has no model resolver or no Temporal client. It
	// is not retryable, since no retry will fix the worker; the operator
	// must.
	ErrTypeModelConfig = "ModelConfig"

	// ErrTypeContextOverflow means the request does not fit the model's
	// context window. It is not retryable, because the same request will be
	// refused again, but unlike other model errors the workflow can recover:
	// a shorter transcript (summarised or trimmed) will be accepted.
	ErrTypeContextOverflow = "ContextLengthExceeded"
)

// distinctCause returns err when its text adds to msg, and nil when msg
// already quotes it. ApplicationError.Error() prints "msg (type: ...): cause"
// and the workflow shows the innermost message of a failure chain, so a cause
// that repeats the message would either say everything twice or replace a
// clear sentence by a bare Go error.
func distinctCause(msg string, err error) error {
	if err == nil || strings.Contains(msg, err.Error()) {
		return nil
	}
	return err
}

// FailedAttempt is the number of the CallModel attempt that failed with
// err, as the activity wrote it in the failure's details; 0 when err does
// not say (a timeout, a failure of another kind). A workflow reads it to
// tell how often the server tried a call before it gave up: the activity
// error the workflow receives does not carry the attempt.
func FailedAttempt(err error) int {
	var app *temporal.ApplicationError
	var n int32
	if !errors.As(err, &app) || !app.HasDetails() || app.Details(&n) != nil {
		return 0
	}
	return int(n)
}
