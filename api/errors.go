package api

import (
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/sdk/temporal"
)

// ModelErrorText is one sentence a user can act on, never Temporal's wrapped
// chain of activity, attempt and type: for state.model_error, written by
// the run when a call ended a turn and by clients from the failure of a
// call the server still retries.
func ModelErrorText(err error) string {
	// The activity's own message is the account; a cause it kept (a
	// transport error's raw text) is the detail under it. When the retry
	// window ran out, the last attempt's failure is the cause of the
	// timeout, and says more than the timeout.
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.Message() != "" {
		return app.Message()
	}
	// The innermost timeout is the attempt's own (a heartbeat missed),
	// not the window's around it.
	var timeout *temporal.TimeoutError
	for e := err; errors.As(e, &timeout); e = timeout.Unwrap() {
		// timeout holds the last one found
	}
	if timeout != nil {
		return fmt.Sprintf("the model call timed out (%s): the worker was lost or the model did not answer in time",
			strings.ToLower(strings.TrimPrefix(timeout.TimeoutType().String(), "TIMEOUT_TYPE_")))
	}
	return RootMessage(err)
}

// RootMessage is the innermost message of an activity or child error, the
// part a model or a user can act on ("no such file"), without Temporal's
// wrapping and its "(type: ..., retryable: ...)" suffix.
func RootMessage(err error) string {
	for next := errors.Unwrap(err); next != nil; next = errors.Unwrap(err) {
		err = next
	}
	if app, ok := err.(*temporal.ApplicationError); ok && app.Message() != "" {
		return app.Message()
	}
	return err.Error()
}
