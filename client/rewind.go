package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/todoflow/todoflow/api"

	"github.com/google/uuid"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
)

// Rewind takes the session back to just before its turn n (1-based, as
// state.turns counts them) with Temporal's reset: the current run is
// reset to the workflow task that completed before turn n's message came,
// so the list, the plan and the transcript are as they were then, and the
// messages from turn n on are not taken in again (nothing is reapplied).
// The discarded turns stay readable in the reset run's history. Subagents
// that run when the reset happens belong to the reset run: they are asked
// to cancel (the parent close policy), as with any run that ends.
//
// Only turns of the current run can be rewound: a session that continued
// as new keeps its earlier turns in earlier runs, whose state the current
// run's carry replaced. The first turn of a session started with a prompt
// has nothing before it; start a new session instead.
//
// It returns the id of the run the session goes on in.
func (s *Session) Rewind(ctx context.Context, n int) (string, error) {
	if n < 1 {
		return "", fmt.Errorf("rewind %s: turn %d: turns count from 1", s.id, n)
	}
	d, err := s.c.tc.DescribeWorkflowExecution(ctx, s.id, "")
	if err != nil {
		return "", s.wrap("rewind", err)
	}
	exec := d.GetWorkflowExecutionInfo().GetExecution()
	events, err := s.events(ctx, exec.GetRunId())
	if err != nil {
		return "", err
	}
	var in api.AgentInput
	if start := events[0].GetWorkflowExecutionStartedEventAttributes(); start != nil {
		if err := s.c.opts.DataConverter.FromPayloads(start.GetInput(), &in); err != nil {
			return "", fmt.Errorf("rewind %s: read its input: %w", s.id, err)
		}
	}
	point, err := rewindPoint(events, in, n)
	if err != nil {
		return "", fmt.Errorf("rewind %s: %w", s.id, err)
	}
	resp, err := s.c.tc.ResetWorkflowExecution(ctx, &workflowservice.ResetWorkflowExecutionRequest{
		Namespace:                 s.c.opts.Namespace,
		WorkflowExecution:         &commonpb.WorkflowExecution{WorkflowId: s.id, RunId: exec.GetRunId()},
		Reason:                    fmt.Sprintf("rewind to before turn %d", n),
		WorkflowTaskFinishEventId: point,
		RequestId:                 uuid.NewString(),
		ResetReapplyType:          enumspb.RESET_REAPPLY_TYPE_NONE,
	})
	if err != nil {
		return "", s.wrap("rewind", err)
	}
	return resp.GetRunId(), nil
}

// rewindPoint is the event to reset a run of events (started with in) to
// so that it stands just before turn n: the last workflow task completed
// before the message of turn n came. A turn's message is the prompt, a
// send_message or retry_turn update accepted, or a user_message signal, in
// the order they came (the run takes them in that order).
func rewindPoint(events []*historypb.HistoryEvent, in api.AgentInput, n int) (int64, error) {
	first := in.CarriedTurns() + 1
	if n < first {
		return 0, fmt.Errorf("turn %d is in an earlier run of the session (this run began with turn %d); only its own turns can be rewound", n, first)
	}
	turn := first - 1
	if in.Prompt != "" && in.Carry == nil {
		if n == 1 {
			return 0, errors.New("turn 1 is the session's prompt: there is nothing before it; start a new session instead")
		}
		turn = 1
	}
	var lastDone int64
	for _, ev := range events {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			lastDone = ev.GetEventId()
			continue
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
			switch ev.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest().GetInput().GetName() {
			case api.SendMessageUpdate, api.RetryTurnUpdate:
			default:
				continue
			}
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
			if ev.GetWorkflowExecutionSignaledEventAttributes().GetSignalName() != api.UserMessageSignal {
				continue
			}
		default:
			continue
		}
		if turn++; turn == n {
			if lastDone == 0 {
				return 0, fmt.Errorf("turn %d came before the run's first workflow task completed; there is nothing to go back to", n)
			}
			return lastDone, nil
		}
	}
	return 0, fmt.Errorf("the session has had %d turns in this run; there is no turn %d to go back before", turn, n)
}
