package client

import (
	"context"
	"errors"
	"strings"
)

// Why is the cause of a run's failure in its own words: the innermost
// message of the chain (an activity's application error names the model
// reference a worker could not resolve), without the wrappers' ids and
// types, which say which run and which activity, not why. One line.
func Why(err error) string {
	type messager interface{ Message() string }
	why := ""
	for e := err; e != nil; e = errors.Unwrap(e) {
		if m, ok := e.(messager); ok && m.Message() != "" {
			why = m.Message()
		} else if errors.Unwrap(e) == nil && why == "" {
			why = e.Error()
		}
	}
	return strings.Join(strings.Fields(why), " ")
}

// Failure says why the session's latest run ended other than completed,
// or "" when it did not (it runs, or it completed). It reads the run's
// result, which the state query does not hold.
func (s *Session) Failure(ctx context.Context) (string, error) {
	status, err := s.RunStatus(ctx)
	if err != nil || status == RunRunning || status == RunCompleted {
		return "", err
	}
	if _, err := s.Wait(ctx); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return Why(err), nil
	}
	return "", nil
}
