package workflows

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/todoflow/todoflow/todo"
	"go.temporal.io/sdk/temporal"
)

// An unknown field anywhere in the input is refused at the start, with the
// field named: {"aproval": ...} once started a run whose writes needed no
// approval.
func TestUnknownInputFieldsAreRefused(t *testing.T) {
	tests := []struct {
		input string
		field string
	}{
		{`{"prompt": "write", "aproval": {"*": "required"}}`, `unknown field "aproval"`},
		{`{"prompt": "write", "todo": {"plan_aproval": "required"}}`, `unknown field "plan_aproval"`},
		{`{"prompt": "write", "context": {"max_token": 5000}}`, `unknown field "max_token"`},
	}
	for _, tt := range tests {
		env := newTreeEnv()
		scripted(env, say("never"))
		env.ExecuteWorkflow(WorkflowName, json.RawMessage(tt.input))
		err := env.GetWorkflowError()
		if err == nil || !strings.Contains(err.Error(), "invalid AgentWorkflow input: "+tt.field) {
			t.Errorf("input %s: workflow error %v, want %s refused", tt.input, err, tt.field)
		}
	}
	var in AgentInput
	if err := json.Unmarshal([]byte(`{"prompt": "ok", "todo": {"enabled": true}}`), &in); err != nil || in.Validate() != nil {
		t.Errorf("a known input: %v, %v", err, in.Validate())
	}
}

// An approval sent as a plain tree_hand signal, not through approve_tool
// (whose validator checks the call_id), approves nothing; a resume with an
// unknown field resumes nothing; set_continuation with one is refused.
func TestAnswersOnlyThroughTheirMessage(t *testing.T) {
	env, ran := approvalEnv(calls(call("write_file", `{"path":"a"}`)), say("done"))
	var st State
	var contErr error
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(HandSignal, Handed{From: DefaultAgentID, ApproveTool: &ToolApprovalArgs{Approved: yes(), CallID: "c1a"}})
		env.UpdateWorkflow(SetContinuationUpdate, "", &updateCallback{reject: func(err error) { contErr = err }},
			json.RawMessage(`{"enabled": false, "enabeld": true}`))
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		st = queryState(t, env)
		env.SignalWorkflow(EndSessionSignal, nil)
	}, 2*time.Hour)
	env.ExecuteWorkflow(AgentWorkflow, approvalInput(todo.ToolApproval{"write_file": todo.ApprovalRequired}))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if st.Status != StatusAwaitingApproval || len(*ran) != 0 {
		t.Errorf("after a tree_hand approval: status %s, tools run %v; want the call still waiting", st.Status, *ran)
	}
	if contErr == nil || !strings.Contains(contErr.Error(), `unknown field "enabeld"`) {
		t.Errorf("set_continuation with an unknown field: %v", contErr)
	}

	env, _ = approvalEnv(calls(call("todo_pause", `{"reason": "need the key"}`)), say("resumed"))
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(ResumeSignal, json.RawMessage(`{"text": "go", "agnet_id": "main"}`))
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		st = queryState(t, env)
		env.SignalWorkflow(EndSessionSignal, nil)
	}, 2*time.Hour)
	env.ExecuteWorkflow(AgentWorkflow, approvalInput(nil))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if st.Status != StatusPaused {
		t.Errorf("after a resume with an unknown field: status %s, want still paused", st.Status)
	}
}

// A run refused at its start shows failed in the run list, not the
// "running" it was started with.
func TestRefusedRunShowsFailed(t *testing.T) {
	env := newTreeEnv()
	scripted(env, say("never"))
	var status string
	env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		sa := args.Get(0).(temporal.SearchAttributes)
		status, _ = sa.GetKeyword(AgentStatusKey)
	}).Return(nil)
	env.ExecuteWorkflow(WorkflowName, json.RawMessage(`{"prompt": "x", "aproval": {}}`))
	if env.GetWorkflowError() == nil || status != StatusFailed {
		t.Errorf("error %v, AgentStatus %q; want the run failed and shown failed", env.GetWorkflowError(), status)
	}
}
