package workflows

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

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
		env.ExecuteWorkflow(api.WorkflowName, json.RawMessage(tt.input))
		err := env.GetWorkflowError()
		if err == nil || !strings.Contains(err.Error(), "invalid AgentWorkflow input: "+tt.field) {
			t.Errorf("input %s: workflow error %v, want %s refused", tt.input, err, tt.field)
		}
	}
	var in api.AgentInput
	if err := json.Unmarshal([]byte(`{"prompt": "ok", "todo": {"enabled": true}}`), &in); err != nil || in.Validate() != nil {
		t.Errorf("a known input: %v, %v", err, in.Validate())
	}
}

// A carry is the state a run hands its continuation: whoever starts a run
// cannot set one (it would set the transcript, the remembered approvals,
// the children to adopt), and a carry does not turn strict decoding off: a
// misspelt field beside it is refused, in a continuation too.
func TestCarryIsNoWayAroundTheInputsChecks(t *testing.T) {
	carry := `"carry": {"protocol": 2, "session": {"turns": 1, "model_calls": 1, "continuation": false, "usage": {}},
	  "window": {"messages": [{"role": "system", "content": "system"}]}, "todo": {},
	  "approvals": {"remembered": ["write_file"]}, "inbox": {"queue": [{"text": "go on"}]}}`
	tests := []struct {
		name      string
		input     string
		continued bool
		refused   string
	}{
		{"a carry on a first run", `{"model": "openai:gpt", ` + carry + `}`, false, "carry: set only by a run's continue-as-new"},
		{"a typo beside a carry, on a first run", `{"model": "openai:gpt", "aproval": {"*": "required"}, ` + carry + `}`, false, `unknown field "aproval"`},
		{"a typo beside a carry, in a continuation", `{"model": "openai:gpt", "aproval": {"*": "required"}, ` + carry + `}`, true, `unknown field "aproval"`},
		{"a continuation's carry", `{"model": "openai:gpt", ` + carry + `}`, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTreeEnv()
			scripted(env, say("went on"))
			if tt.continued {
				env.SetContinuedExecutionRunID("the-run-before")
			}
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, time.Minute)
			env.ExecuteWorkflow(api.WorkflowName, json.RawMessage(tt.input))
			err := env.GetWorkflowError()
			if tt.refused == "" {
				if err != nil {
					t.Fatalf("a continuation's own carry was refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "invalid AgentWorkflow input: "+tt.refused) {
				t.Errorf("workflow error %v; want %q refused", err, tt.refused)
			}
		})
	}
	var in api.AgentInput
	if err := json.Unmarshal([]byte(`{"prompt": "hi", `+carry+`}`), &in); err != nil {
		t.Fatal(err)
	}
	if err := in.Validate(); err == nil || !strings.Contains(err.Error(), "carry") {
		t.Errorf("Validate: %v; want the carry refused before a client starts the run", err)
	}
}

// An approval sent as a plain tree_hand signal, not through approve_tool
// (whose validator checks the call_id), approves nothing; a resume with an
// unknown field resumes nothing; set_continuation with one is refused.
func TestAnswersOnlyThroughTheirMessage(t *testing.T) {
	env, ran := approvalEnv(calls(call("write_file", `{"path":"a"}`)), say("done"))
	var st api.State
	var contErr error
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(HandSignal, Handed{From: api.DefaultAgentID, ApproveTool: &api.ToolApprovalArgs{Approved: yes(), CallID: "c1a"}})
		env.UpdateWorkflow(api.SetContinuationUpdate, "", &updateCallback{reject: func(err error) { contErr = err }},
			json.RawMessage(`{"enabled": false, "enabeld": true}`))
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		st = queryState(t, env)
		env.SignalWorkflow(api.EndSessionSignal, nil)
	}, 2*time.Hour)
	env.ExecuteWorkflow(AgentWorkflow, approvalInput(todo.ToolApproval{"write_file": todo.ApprovalRequired}))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if st.Status != api.StatusAwaitingApproval || len(*ran) != 0 {
		t.Errorf("after a tree_hand approval: status %s, tools run %v; want the call still waiting", st.Status, *ran)
	}
	if contErr == nil || !strings.Contains(contErr.Error(), `unknown field "enabeld"`) {
		t.Errorf("set_continuation with an unknown field: %v", contErr)
	}

	env, _ = approvalEnv(calls(call("todo_pause", `{"reason": "need the key"}`)), say("resumed"))
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(api.ResumeSignal, json.RawMessage(`{"text": "go", "agnet_id": "main"}`))
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		st = queryState(t, env)
		env.SignalWorkflow(api.EndSessionSignal, nil)
	}, 2*time.Hour)
	env.ExecuteWorkflow(AgentWorkflow, approvalInput(nil))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if st.Status != api.StatusPaused {
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
		status, _ = sa.GetKeyword(api.AgentStatusKey)
	}).Return(nil)
	env.ExecuteWorkflow(api.WorkflowName, json.RawMessage(`{"prompt": "x", "aproval": {}}`))
	if env.GetWorkflowError() == nil || status != api.StatusFailed {
		t.Errorf("error %v, AgentStatus %q; want the run failed and shown failed", env.GetWorkflowError(), status)
	}
}
