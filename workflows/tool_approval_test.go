package workflows

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// approvalEnv scripts the model and records the tools that ran, sorted by
// call id: the approved calls of a response run at once, as activities on
// goroutines of their own, in no set order.
func approvalEnv(responses ...model.Response) (*testsuite.TestWorkflowEnvironment, *[]string) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	scripted(env, responses...)
	var (
		mu  sync.Mutex
		ran []string
	)
	env.RegisterActivityWithOptions(func(_ context.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
		mu.Lock()
		defer mu.Unlock()
		ran = append(ran, in.Call.ID)
		slices.Sort(ran)
		return activities.RunToolResult{Content: "ran " + in.Call.Name}, nil
	}, activity.RegisterOptions{Name: api.ToolActivity, DisableAlreadyRegisteredCheck: true})
	return env, &ran
}

// approveTool sends approve_tool; a rejection of the update goes to refused
// (a test error when nil).
func approveTool(t *testing.T, env *testsuite.TestWorkflowEnvironment, args api.ToolApprovalArgs, refused *error) {
	t.Helper()
	env.UpdateWorkflow(api.ApproveToolUpdate, "", &updateCallback{
		reject: func(err error) {
			if refused == nil {
				t.Errorf("approve_tool(%+v) refused: %v", args, err)
				return
			}
			*refused = err
		},
	}, args)
}

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

func approvalInput(policy todo.ToolApproval) api.AgentInput {
	zero, off := 0, false
	return api.AgentInput{Prompt: "work", IdleTimeoutS: 7 * 24 * 3600, Approval: policy,
		Todo: todo.Config{FinalizationMaxCorrections: &zero, Continuation: &off}}
}

// The calls of one response that need approval wait one after another, in
// call order, before any call of the response runs; the state shows the
// waiting call; a rejected call never runs and the model reads the
// feedback; a call_id that is not waiting is refused.
func TestToolApprovalApproveAndReject(t *testing.T) {
	env, ran := approvalEnv(
		calls(call("write_file", `{"path":"a","content":"x"}`), call("list_files", `{}`), call("write_file", `{"path":"b","content":"y"}`)),
		say("done"))
	var first, second api.State
	var wrongCall, nothing, noCall, unknown error
	env.RegisterDelayedCallback(func() {
		first = queryState(t, env)
		approveTool(t, env, api.ToolApprovalArgs{Approved: yes(), CallID: "c2", Remember: false}, &wrongCall)
		approveTool(t, env, api.ToolApprovalArgs{Approved: yes()}, &noCall)
		env.UpdateWorkflow(api.ApproveToolUpdate, "", &updateCallback{reject: func(err error) { unknown = err }},
			json.RawMessage(`{"approved": true, "call_id": "c1a", "remmber": true}`))
		approveTool(t, env, api.ToolApprovalArgs{Approved: yes(), CallID: "c1a"}, nil)
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		second = queryState(t, env)
		approveTool(t, env, api.ToolApprovalArgs{Approved: no(), Feedback: "not b, write c", CallID: "c1c"}, nil)
	}, 2*time.Hour)
	env.RegisterDelayedCallback(func() {
		approveTool(t, env, api.ToolApprovalArgs{Approved: yes(), CallID: "c1c"}, &nothing)
		env.SignalWorkflow(api.EndSessionSignal, nil)
	}, 3*time.Hour)
	env.ExecuteWorkflow(AgentWorkflow, approvalInput(todo.ToolApproval{"write_*": todo.ApprovalRequired}))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if first.Status != api.StatusAwaitingApproval || !first.AwaitingApproval || first.PendingApproval == nil ||
		first.PendingApproval.CallID != "c1a" || first.PendingApproval.Tool != "write_file" || string(first.PendingApproval.Arguments) != `{"path":"a","content":"x"}` {
		t.Errorf("state while the first call waits = %s", dump(first))
	}
	if len(first.Waiting) != 1 || first.Waiting[0] != (api.Wait{AgentID: "main", Kind: api.WaitToolApproval, Reason: `call c1a of write_file {"path":"a","content":"x"}`, CallID: "c1a"}) {
		t.Errorf("waiting = %s", dump(first.Waiting))
	}
	if second.PendingApproval == nil || second.PendingApproval.CallID != "c1c" {
		t.Errorf("second wait = %s; want call c1c", dump(second.PendingApproval))
	}
	if wrongCall == nil || !strings.Contains(wrongCall.Error(), `call "c2" is not waiting for approval; call c1a of write_file`) {
		t.Errorf("approve_tool with a wrong call_id: %v", wrongCall)
	}
	// Without a call_id, a second approval would approve a call nobody
	// was shown; a misspelt field would be ignored.
	if noCall == nil || !strings.Contains(noCall.Error(), "needs the call_id") {
		t.Errorf("approve_tool without a call_id: %v", noCall)
	}
	if unknown == nil || !strings.Contains(unknown.Error(), `unknown field "remmber"`) {
		t.Errorf("approve_tool with an unknown field: %v", unknown)
	}
	if nothing == nil || !strings.Contains(nothing.Error(), "no tool call is waiting for approval") {
		t.Errorf("approve_tool with nothing waiting: %v", nothing)
	}
	if strings.Join(*ran, ",") != "c1a,c1b" {
		t.Errorf("tools run = %v; want the approved write and the list, never the rejected write", *ran)
	}
	msgs := queryMessages(t, env)
	if m, ok := toolAnswer(msgs, "c1c"); !ok || !m.IsError || !strings.Contains(m.Content, "rejected") || !strings.Contains(m.Content, "not b, write c") {
		t.Errorf("the rejected call's answer = %+v", m)
	}
	if st := queryState(t, env); st.PendingApproval != nil {
		t.Errorf("pending_approval after the waits = %s", dump(st.PendingApproval))
	}
}

// remember approves the tool for the rest of the session, continue-as-new
// included: a later call of it runs without a wait.
func TestToolApprovalRemember(t *testing.T) {
	env, ran := approvalEnv(
		calls(call("write_file", `{"path":"a"}`)),
		calls(call("write_file", `{"path":"b"}`)),
		say("done"))
	waits := 0
	env.RegisterDelayedCallback(func() {
		if queryState(t, env).PendingApproval != nil {
			waits++
		}
		approveTool(t, env, api.ToolApprovalArgs{Approved: yes(), Remember: true, CallID: "c1a"}, nil)
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		if queryState(t, env).PendingApproval != nil {
			waits++
		}
		env.SignalWorkflow(api.EndSessionSignal, nil)
	}, 2*time.Hour)
	env.ExecuteWorkflow(AgentWorkflow, approvalInput(todo.ToolApproval{"*": todo.ApprovalRequired, "write_todos": todo.ApprovalAuto}))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if waits != 1 || len(*ran) != 2 {
		t.Errorf("%d waits, %d calls run; want 1 wait and both calls run", waits, len(*ran))
	}
}

// end_session while a call waits: the call is not run and the run ends.
func TestToolApprovalEndsWithTheSession(t *testing.T) {
	env, ran := approvalEnv(calls(call("write_file", `{"path":"a"}`)), say("stopped"))
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, time.Hour)
	env.ExecuteWorkflow(AgentWorkflow, approvalInput(todo.ToolApproval{"write_file": todo.ApprovalRequired}))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if len(*ran) != 0 {
		t.Errorf("tools run = %v", *ran)
	}
	if m, ok := toolAnswer(queryMessages(t, env), "c1a"); !ok || !strings.Contains(m.Content, "the session ended before this call was approved") {
		t.Errorf("answer = %+v", m)
	}
}

// A subagent's call that needs approval surfaces at the root (status,
// state.waiting with kind tool_approval) and the root's approve_tool is
// handed on to it.
func TestTreeToolApprovalAtTheRoot(t *testing.T) {
	env := newTreeEnv()
	scriptTree(env, map[string][]model.Response{
		"main": {calls(spawnCall("kid", "write it", quiet)), say("kid writes")},
		"kid":  {calls(call("write_file", `{"path":"out"}`)), say("written")},
	})
	var waiting api.State
	var reply any
	env.RegisterDelayedCallback(func() {
		waiting = queryState(t, env)
		env.UpdateWorkflow(api.ApproveToolUpdate, "", &updateCallback{
			reject:   func(err error) { t.Errorf("approve_tool refused: %v", err) },
			complete: func(r any, _ error) { reply = r },
		}, api.ToolApprovalArgs{Approved: yes(), Feedback: "fine", CallID: waiting.Waiting[0].CallID})
	}, 24*time.Hour)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 48*time.Hour)
	in := rootInput("delegate")
	in.Approval = todo.ToolApproval{"write_file": todo.ApprovalRequired}
	env.ExecuteWorkflow(AgentWorkflow, in)
	completed(t, env)
	if waiting.Status != api.StatusAwaitingApproval || len(waiting.Waiting) != 1 || waiting.Waiting[0].Kind != api.WaitToolApproval ||
		waiting.Waiting[0].AgentID != "kid" || !strings.Contains(waiting.Waiting[0].Reason, "write_file") {
		t.Errorf("root while the kid's call waits: status %s, waiting %s", waiting.Status, dump(waiting.Waiting))
	}
	if s, _ := reply.(string); !strings.Contains(s, "approved") || !strings.Contains(s, "kid") {
		t.Errorf("approve_tool's answer = %v", reply)
	}
	if m, ok := toolAnswer(messagesOf(t, env, childWF("kid")), "kid-1-0"); !ok || m.Content != "ran write_file" {
		t.Errorf("the kid's call answered %+v; want it run", m)
	}
}

func TestToolApprovalBadPolicyFailsTheRun(t *testing.T) {
	env, _ := approvalEnv(say("never"))
	env.ExecuteWorkflow(AgentWorkflow, approvalInput(todo.ToolApproval{"write_file": "ask"}))
	err := env.GetWorkflowError()
	if err == nil || !strings.Contains(err.Error(), `approval "write_file" is "ask": want "required", "auto" or "destructive"`) {
		t.Errorf("run error = %v", err)
	}
}

func TestWaitingCall(t *testing.T) {
	own := api.State{AgentID: "main", PendingApproval: &api.PendingApproval{CallID: "c1", Tool: "write_file"}}
	tree := api.State{AgentID: "main", Waiting: []api.Wait{
		{AgentID: "planner", Kind: api.WaitPlanApproval},
		{AgentID: "writer", Kind: api.WaitToolApproval, CallID: "w7"},
	}}
	tests := []struct {
		name  string
		st    api.State
		agent string
		want  string // "" when no call waits
	}{
		{"nothing waits", api.State{AgentID: "main"}, "", ""},
		{"own call", own, "", "c1"},
		{"own call, named", own, "main", "c1"},
		{"own call, another agent named", own, "writer", ""},
		{"a plan waits", api.State{Waiting: []api.Wait{{AgentID: "main", Kind: api.WaitPlanApproval}}}, "", ""},
		{"a subagent's call", tree, "writer", "w7"},
		{"a subagent's plan", tree, "planner", ""},
		{"any in the tree", tree, "", "w7"},
	}
	for _, tt := range tests {
		got, ok := tt.st.WaitingCall(tt.agent)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("%s: WaitingCall = %q, %v; want %q", tt.name, got, ok, tt.want)
		}
	}
}

// A wait for a tool call's approval that outlasts its run's history
// crosses continue-as-new: no call of the response has run; the
// continuation keeps the verdicts given so far, asks for the rest, runs
// the approved calls and calls the model once they are answered.
func TestToolApprovalWaitCrossesContinueAsNew(t *testing.T) {
	response := calls(call("write_file", `{"path":"a","content":"x"}`), call("list_files", `{}`), call("write_file", `{"path":"b","content":"y"}`))
	env, ran := approvalEnv(response)
	env.RegisterDelayedCallback(func() {
		approveTool(t, env, api.ToolApprovalArgs{Approved: no(), Feedback: "not a", CallID: "c1a"}, nil)
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		if st := queryState(t, env); st.PendingApproval == nil || st.PendingApproval.CallID != "c1c" {
			t.Errorf("the second wait: %s", dump(st.PendingApproval))
		}
		env.SetContinueAsNewSuggested(true)
		env.SignalWorkflow(api.TaskEventSignal, Events{Of: "nobody", Brief: &api.Brief{Status: api.StatusRunning}})
	}, 24*time.Hour)
	env.ExecuteWorkflow(AgentWorkflow, approvalInput(todo.ToolApproval{"write_*": todo.ApprovalRequired}))
	next := continuedWith(t, env)
	if len(*ran) != 0 {
		t.Errorf("tools ran before the handover: %v", *ran)
	}
	c := next.Carry
	if len(c.Inbox.Queue) != 1 || c.Inbox.Queue[0].Blocked == nil || !c.Inbox.Queue[0].Blocked.Tools || c.Inbox.Queue[0].Blocked.Calls != 0 ||
		len(c.Inbox.Queue[0].Blocked.Verdicts) != 1 || !strings.Contains(c.Inbox.Queue[0].Blocked.Verdicts[0].Refusal, "not a") {
		t.Fatalf("carry: inbox %s; want the response waiting, with c1a's refusal", dump(c.Inbox.Queue))
	}
	if last := c.Window.Messages[len(c.Window.Messages)-1]; len(last.ToolCalls) != 3 {
		t.Fatalf("the carried transcript ends with %s, not the waiting response", dump(last))
	}

	env, ran = approvalEnv(say("(call 1, of the first run)"), say("done"))
	var waiting api.State
	env.RegisterDelayedCallback(func() {
		waiting = queryState(t, env)
		approveTool(t, env, api.ToolApprovalArgs{Approved: yes(), CallID: "c1c"}, nil)
	}, time.Hour)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 2*time.Hour)
	env.SetContinuedExecutionRunID("the-run-before")
	env.ExecuteWorkflow(AgentWorkflow, asInput(t, next))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if waiting.PendingApproval == nil || waiting.PendingApproval.CallID != "c1c" || waiting.Status != api.StatusAwaitingApproval {
		t.Errorf("the continuation waits for %s (%s); want c1c, asked again", dump(waiting.PendingApproval), waiting.Status)
	}
	if strings.Join(*ran, ",") != "c1b,c1c" {
		t.Errorf("tools run = %v; want the list and the approved write, never the refused one", *ran)
	}
	msgs := queryMessages(t, env)
	for id, want := range map[string]string{"c1a": "not a", "c1b": "ran list_files", "c1c": "ran write_file"} {
		if m, ok := toolAnswer(msgs, id); !ok || !strings.Contains(m.Content, want) {
			t.Errorf("%s answered %+v, want %q", id, m, want)
		}
	}
	if st := queryState(t, env); st.ModelCalls != 2 || st.Turns != 1 {
		t.Errorf("%d model calls in %d turns; want 2 in 1", st.ModelCalls, st.Turns)
	}
}

// An answer the root hands on can cross the handover of the wait it
// answers: it reaches the continuation before the continuation asks again.
// It is kept for that ask, not dropped (which would leave the call waiting
// for an answer the root thinks it gave).
func TestToolApprovalThatCrossedTheHandover(t *testing.T) {
	calls := []model.ToolCall{{ID: "c1", Name: "write_file"}, {ID: "c2", Name: "write_file"}}
	for _, tt := range []struct {
		name    string
		args    api.ToolApprovalArgs
		refusal string // "" for approved
	}{
		{"approved", api.ToolApprovalArgs{Approved: yes(), CallID: "c2"}, ""},
		{"rejected", api.ToolApprovalArgs{Approved: no(), CallID: "c2", Feedback: "not that file"}, "not that file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := &agent{window: window{msgs: []model.Message{{Role: model.RoleUser, Content: "go"}, {Role: model.RoleAssistant, ToolCalls: calls}}}}
			a.onHandedToolApproval(nil, tt.args)
			if a.approvals.early == nil {
				t.Fatal("the answer that crossed the handover was not kept")
			}
			r, handed := a.askApproval(nil, calls[1], nil)
			switch {
			case handed || a.approvals.early != nil:
				t.Errorf("the kept answer was not used: handed %v, still kept %v", handed, a.approvals.early != nil)
			case tt.refusal == "" && r != nil:
				t.Errorf("an approved call was refused: %s", r.Content)
			case tt.refusal != "" && (r == nil || !strings.Contains(r.Content, tt.refusal)):
				t.Errorf("a rejected call was answered %+v", r)
			}
		})
	}
}
