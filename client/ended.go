package client

import (
	"context"
	"errors"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/todoflow/todoflow/internal/text"
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
	return text.OneLine(why)
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

// Blocked says why the server cannot run the session's workflow now: the failure of its
// latest workflow task, which a worker refused and the server tries again (a worker of
// another protocol than the run's, or workflow code that fails on the run's history), or
// "" when no task is failing. The state query is not answered meanwhile; this reads the
// run's description and the end of its history.
func (s *Session) Blocked(ctx context.Context) (string, error) {
	d, err := s.describe(ctx)
	if err != nil {
		return "", err
	}
	// A task retried after its failure is the pending one's attempt 2 or later; the server
	// writes the first failure only, so the history's latest WorkflowTaskFailed says why.
	info := d.GetWorkflowExecutionInfo()
	if info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING || d.GetPendingWorkflowTask().GetAttempt() < 2 {
		return "", nil
	}
	req := &workflowservice.GetWorkflowExecutionHistoryReverseRequest{
		Namespace: s.c.opts.Namespace, Execution: info.GetExecution(), MaximumPageSize: 100,
	}
	for {
		page, err := s.c.tc.WorkflowService().GetWorkflowExecutionHistoryReverse(ctx, req)
		if err != nil {
			return "", s.wrap("read the history of", err)
		}
		for _, e := range page.GetHistory().GetEvents() {
			switch e.GetEventType() {
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED:
				return text.OneLine(e.GetWorkflowTaskFailedEventAttributes().GetFailure().GetMessage()), nil
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
				// Served since, or a worker that went away: nothing refuses it.
				return "", nil
			}
		}
		if req.NextPageToken = page.GetNextPageToken(); len(req.NextPageToken) == 0 {
			return "", nil
		}
	}
}
