// Package patient asks a workflow's queries again when the answer is late.
//
// A query is answered by a worker that holds (or replays) the run. One call
// of the SDK waits 10 s at most, and fails with DeadlineExceeded when no
// worker answered by then: a busy server, busy workers, or a worker that was
// killed while the run was cached on it (the server sends the run's queries
// to that worker's sticky queue until it notices it is gone). The server
// may also be briefly unavailable, restarting, and after a restart it says
// it has seen no worker poll until the workers poll again. None of these
// is an answer,
// and a query has no side effects, so asking again is right, for as long as
// the caller's context allows: the clients reading a session's state and
// messages, the scenario player reading a finished run.
package patient

import (
	"context"
	"errors"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
)

// Bounds of the waits between the attempts of a late query.
const (
	firstWait = 500 * time.Millisecond
	maxWait   = 10 * time.Second
)

// Query is client.QueryWorkflow, asked again while the answer is late
// (Late), until ctx ends; the error is then the last attempt's.
func Query(ctx context.Context, c client.Client, workflowID, runID, name string, args ...any) (converter.EncodedValue, error) {
	wait := firstWait
	for {
		v, err := c.QueryWorkflow(ctx, workflowID, runID, name, args...)
		if err == nil || !Late(err) || ctx.Err() != nil {
			return v, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(wait):
		}
		wait = min(2*wait, maxWait)
	}
}

// Late reports whether a query's error says only that no answer came in
// time, that the server could not be reached or dropped the call, or that
// it has seen no worker poll lately (as after it restarted, until the
// workers poll again): not that the query is wrong, refused, or its run
// gone.
func Late(err error) bool {
	var deadline *serviceerror.DeadlineExceeded
	var unavailable *serviceerror.Unavailable
	var canceled *serviceerror.Canceled
	var precondition *serviceerror.FailedPrecondition
	return errors.As(err, &deadline) || errors.As(err, &unavailable) || errors.As(err, &canceled) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		// The server's matching service words it so, untyped.
		errors.As(err, &precondition) && strings.Contains(precondition.Message, noRecentPoller)
}

// noRecentPoller is how the server says it has seen no worker poll lately.
const noRecentPoller = "no poller seen for task queue recently"
