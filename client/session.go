package client

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/todoflow/todoflow/api"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	sdkclient "go.temporal.io/sdk/client"
)

// Session is one agent session (an AgentWorkflow run and its
// continuations, under one workflow id). Its methods may be called from any
// goroutine. What it is asked to do (Send, Approve, Resume, End, …) goes
// through one queue and reaches the session in the order it was asked.
type Session struct {
	c  *Client
	id string

	mu      sync.Mutex
	run     sdkclient.WorkflowRun // the run Start started; nil when attached
	queue   []*request
	sending bool
}

// ID is the session's workflow id.
func (s *Session) ID() string { return s.id }

// Send queues text as the session's next user message (the send_message
// update) and returns at once. The session takes the messages of one
// process in the order Send was called, each accepted before the next is
// sent, whatever goroutine calls it; ctx bounds the delivery, not the
// answer. Every message carries an update id, so a message sent again after
// an answer was lost is answered once. sent.Accepted says the session took
// it; sent.Reply waits for the agent's reply.
func (s *Session) Send(ctx context.Context, text string) *Sent {
	return s.post(ctx, api.SendMessageUpdate, text, "")
}

// SendWithID is Send under the update id given: a message sent again with
// the id of one the session has taken is answered once, with the first
// reply (`starter send --update-id`). An empty id is a fresh one.
func (s *Session) SendWithID(ctx context.Context, updateID, text string) *Sent {
	return s.post(ctx, api.SendMessageUpdate, text, updateID)
}

// Answer is a human's answer to what waits for approval. The workflow
// takes it only for the wait it names: a tool call by its CallID, which
// the caller must have shown (WaitingCall.Answer gives it); without a
// CallID, the plan that waits (a startPlan).
type Answer struct {
	// CallID is the tool call answered (api.State.WaitingCall); empty
	// answers a plan.
	CallID string
	// AgentID is the agent of the tree whose wait is answered, when several
	// wait; empty for the only one.
	AgentID string
	// Feedback is a note for the agent; a rejected call or plan tells the
	// agent why.
	Feedback string
	// Remember approves the call's tool for the rest of the session (tool
	// calls, approvals only).
	Remember bool
}

// AnswerTo is the answer to what st shows waiting for approval in agent's
// tree ("" for the only wait): the tool call st names, else the plan. It
// shows nothing: a client that asks a human shows the call first
// (WaitingCalls, ReadWhole) and answers it with WaitingCall.Answer.
func AnswerTo(st api.State, agent string) Answer {
	callID, _ := st.WaitingCall(agent)
	return Answer{CallID: callID, AgentID: agent}
}

// Approve approves the tool call or plan a names and returns the session's
// word on it.
func (s *Session) Approve(ctx context.Context, a Answer) (string, error) {
	return s.answer(ctx, true, a)
}

// Reject rejects the tool call or plan a names, with a.Feedback as the
// reason the agent reads (a.Remember does not apply).
func (s *Session) Reject(ctx context.Context, a Answer) (string, error) {
	a.Remember = false
	return s.answer(ctx, false, a)
}

func (s *Session) answer(ctx context.Context, approve bool, a Answer) (string, error) {
	var out string
	var err error
	if a.CallID != "" {
		err = s.call(ctx, api.ApproveToolUpdate, api.ToolApprovalArgs{
			Approved: &approve, Feedback: a.Feedback, CallID: a.CallID, Remember: a.Remember, AgentID: a.AgentID}, &out)
	} else {
		if a.Remember {
			return "", &RefusedError{Message: "remember approves a tool for the session: name the tool call (its call_id)"}
		}
		err = s.call(ctx, api.ApprovePlanUpdate, api.ApprovalArgs{Approved: &approve, Feedback: a.Feedback, AgentID: a.AgentID}, &out)
	}
	return out, err
}

// Resume continues a paused agent (todo_pause) with text, what changed
// ("" for nothing); agent picks one of the tree when several are paused.
func (s *Session) Resume(ctx context.Context, text, agent string) error {
	var arg any = text
	if agent != "" {
		arg = api.ResumeArgs{Text: text, AgentID: agent}
	}
	return s.signal(ctx, api.ResumeSignal, arg)
}

// Retry runs again a turn that failed on the model, once its cause is fixed
// (retry_turn), and returns the turn's reply.
func (s *Session) Retry(ctx context.Context) (string, error) {
	return s.post(ctx, api.RetryTurnUpdate, nil, "").Reply(ctx)
}

// Interrupt stops the session's running turn (interrupt): its model call
// is cancelled, a wait for an approval refused, and the turn ends with what
// it did; the list and plan stay. It returns once the turn has ended, with
// its reply; with no turn running it is refused.
func (s *Session) Interrupt(ctx context.Context) (string, error) {
	return s.post(ctx, api.InterruptUpdate, nil, "").Reply(ctx)
}

// Compact summarises the session's older messages now (compact_context).
func (s *Session) Compact(ctx context.Context) (api.CompactResult, error) {
	var res api.CompactResult
	err := s.call(ctx, api.CompactContextUpdate, nil, &res)
	return res, err
}

// SetContinuation switches todo continuation on or off and returns the
// setting now in effect.
func (s *Session) SetContinuation(ctx context.Context, on bool) (bool, error) {
	var now bool
	err := s.call(ctx, api.SetContinuationUpdate, api.ContinuationArgs{Enabled: &on}, &now)
	return now, err
}

// End asks the session to finish after its current turn (end_session): it
// waits for its subagents and completes. It returns once the request is
// delivered, after everything asked before it.
func (s *Session) End(ctx context.Context) error {
	return s.signal(ctx, api.EndSessionSignal, nil)
}

// Wait waits until the session has ended, following continue-as-new, and
// returns its result; a run that failed is the SDK's error as it is (a
// *temporal.WorkflowExecutionError with the cause).
func (s *Session) Wait(ctx context.Context) (api.AgentResult, error) {
	s.mu.Lock()
	run := s.run
	s.mu.Unlock()
	if run == nil {
		run = s.c.tc.GetWorkflow(ctx, s.id, "")
	}
	var res api.AgentResult
	err := run.Get(ctx, &res)
	if _, ok := errors.AsType[*serviceerror.NotFound](err); ok {
		return res, s.wrap("wait for", err)
	}
	return res, err
}

// Run statuses, as RunStatus names them: how the session's latest run
// stands (Temporal's execution status, lower case).
const (
	RunRunning    = "running"
	RunCompleted  = "completed"
	RunFailed     = "failed"
	RunTerminated = "terminated"
	RunCanceled   = "canceled"
	RunTimedOut   = "timed_out"
)

// RunStatus is how the session's latest run stands: RunRunning, or how it
// ended. The server answers it alone, without a worker.
func (s *Session) RunStatus(ctx context.Context) (string, error) {
	d, err := s.describe(ctx)
	if err != nil {
		return "", err
	}
	return runStatus(d.GetWorkflowExecutionInfo().GetStatus()), nil
}

// runStatus is st as the Run* constants name it: the enum's own name
// ("Running", "Canceled") in lower case, but TimedOut, which they spell
// timed_out.
func runStatus(st enumspb.WorkflowExecutionStatus) string {
	if st == enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT {
		return RunTimedOut
	}
	return strings.ToLower(st.String())
}

// Terminate stops the session at once, with reason in its history: for a
// session nobody will answer (a scenario that could not be played). End is
// the way to finish one.
func (s *Session) Terminate(ctx context.Context, reason string) error {
	if err := s.c.tc.TerminateWorkflow(ctx, s.id, "", reason); err != nil {
		return s.wrap("terminate", err)
	}
	return nil
}
