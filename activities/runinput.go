package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
)

// The model is offered only the tools its run allows (CallModel's
// WorkerTools), but it may still call another by name: it guessed, or text
// it read told it to. RunTool therefore checks the call against the run's
// own input, which it reads from the first event of the run's history: the
// one record of the restriction that the worker can trust and that needs no
// change to what the workflow sends. A run's input never changes, so it is
// read once per run and worker, and kept.

// ErrTypeRunInput means the input of the run that scheduled a tool call
// cannot be read or decoded, so what it allows is unknown; the call is not
// run. It is not retryable: the history will not change.
const ErrTypeRunInput = "RunInput"

// maxKnownRuns bounds the restrictions kept; past it the cache starts over,
// which costs one history read per run that calls a tool again.
const maxKnownRuns = 4096

// runRestrictions caches the tool restriction of runs by run id.
type runRestrictions struct {
	mu    sync.Mutex
	byRun map[string][]string
}

func (c *runRestrictions) get(runID string) ([]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	allow, ok := c.byRun[runID]
	return allow, ok
}

func (c *runRestrictions) put(runID string, allow []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byRun == nil || len(c.byRun) >= maxKnownRuns {
		c.byRun = make(map[string][]string)
	}
	c.byRun[runID] = allow
}

// runTools returns the "tools" of the input of the run that scheduled this
// activity: nil when the input has none (every tool allowed).
func (a *Activities) runTools(ctx context.Context) ([]string, error) {
	info := activity.GetInfo(ctx)
	run := info.WorkflowExecution
	if allow, ok := a.restrictions.get(run.RunID); ok {
		return allow, nil
	}
	if a.Client == nil {
		return nil, temporal.NewNonRetryableApplicationError("worker has no Temporal client to read the run's input with", ErrTypeRunInput, nil)
	}
	resp, err := a.Client.WorkflowService().GetWorkflowExecutionHistory(ctx, &workflowservice.GetWorkflowExecutionHistoryRequest{
		Namespace:       info.WorkflowNamespace,
		Execution:       &commonpb.WorkflowExecution{WorkflowId: run.ID, RunId: run.RunID},
		MaximumPageSize: 1,
	})
	if err != nil {
		// A server that did not answer: worth another attempt.
		return nil, fmt.Errorf("read the input of %s (run %s): %w", run.ID, run.RunID, err)
	}
	events := resp.GetHistory().GetEvents()
	if len(events) == 0 || events[0].GetWorkflowExecutionStartedEventAttributes() == nil {
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("the history of %s (run %s) does not start with the run's input", run.ID, run.RunID), ErrTypeRunInput, nil)
	}
	allow, err := inputTools(a.dataConverter(), events[0].GetWorkflowExecutionStartedEventAttributes().GetInput())
	if err != nil {
		err = fmt.Errorf("the input of %s (run %s): %w", run.ID, run.RunID, err)
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeRunInput, err)
	}
	a.restrictions.put(run.RunID, allow)
	return allow, nil
}

// inputTools decodes the "tools" of a workflow input: the first payload, a
// JSON object (AgentInput).
func inputTools(dc converter.DataConverter, in *commonpb.Payloads) ([]string, error) {
	payloads := in.GetPayloads()
	if len(payloads) == 0 {
		return nil, nil // no input: nothing restricted
	}
	var raw json.RawMessage
	if err := dc.FromPayload(payloads[0], &raw); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil // a nil input: nothing restricted
	}
	var v struct {
		Tools []string `json:"tools"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("decode tools: %w", err)
	}
	return v.Tools, nil
}

func (a *Activities) dataConverter() converter.DataConverter {
	if a.DataConverter != nil {
		return a.DataConverter
	}
	return converter.GetDefaultDataConverter()
}
