package scenario

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
)

// Bounds of the waits between the attempts of a late query, and of how
// long a late query is asked again: with no worker at all, it would never
// be answered, and the caller must hear so.
const (
	queryRetryFirst = 500 * time.Millisecond
	queryRetryMax   = 10 * time.Second
	queryPatience   = 3 * time.Minute
)

// queryFinished asks a query of a run that has ended, and asks again while
// the answer is late. A worker answers queries, replaying the run; on a busy
// server, or with busy workers, it may not within one call's time (the SDK
// gives a call 10 s) and the call fails with DeadlineExceeded, or the
// server is briefly unavailable (restarting). What an ended run answers
// does not change, so asking again is safe, for queryPatience at most.
func queryFinished(ctx context.Context, c client.Client, workflowID, name string, args ...any) (converter.EncodedValue, error) {
	ctx, cancel := context.WithTimeout(ctx, queryPatience)
	defer cancel()
	wait := queryRetryFirst
	for {
		v, err := c.QueryWorkflow(ctx, workflowID, "", name, args...)
		if err == nil || !late(err) || ctx.Err() != nil {
			return v, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(wait):
		}
		wait = min(2*wait, queryRetryMax)
	}
}

// late reports whether a query's error says only that no answer came in
// time, or that the server could not be reached: not that the query is
// wrong or the run gone.
func late(err error) bool {
	var deadline *serviceerror.DeadlineExceeded
	var unavailable *serviceerror.Unavailable
	return errors.As(err, &deadline) || errors.As(err, &unavailable) || errors.Is(err, context.DeadlineExceeded)
}
