package workflows

import (
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

func approve(env *testsuite.TestWorkflowEnvironment, t *testing.T, approved bool, feedback string, rejected *error) {
	env.UpdateWorkflow(api.ApprovePlanUpdate, "", &testsuite.TestUpdateCallback{
		OnReject: func(err error) {
			if rejected != nil {
				*rejected = err
				return
			}
			t.Errorf("approve_plan rejected: %v", err)
		},
		OnAccept:   func() {},
		OnComplete: func(any, error) {},
	}, api.ApprovalArgs{Approved: &approved, Feedback: feedback})
}

// The approval wait is durable and has no timeout: three days later the
// human's answer still starts the plan.
func TestApprovalWaitsForDays(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	scripted(env,
		calls(call("createPlan", `{"title":"Refactor","steps":["Read","Change"]}`)),
		calls(call("startPlan", `{"message":"Ready?"}`)),
		calls(call("setStepStatus", `{"step_id":"step_1","status":"completed","result":"read it"}`)),
		calls(call("setStepStatus", `{"step_id":"step_2","status":"completed","result":"changed it"}`)),
		calls(call("completePlan", `{"status":"completed"}`)),
		model.Response{Content: "Done."},
	)
	var early error
	env.RegisterDelayedCallback(func() { approve(env, t, true, "", &early) }, 0) // before any plan: refused
	env.RegisterDelayedCallback(func() {
		st := queryState(t, env)
		if st.Status != api.StatusAwaitingApproval || !st.AwaitingApproval || st.ModelCalls != 2 {
			t.Errorf("after three days: %+v", st)
		}
		approve(env, t, true, "go ahead", nil)
	}, 72*time.Hour)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "Refactor.", IdleTimeoutS: 60})
	var res api.AgentResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if early == nil || !strings.Contains(early.Error(), "no plan is waiting") {
		t.Errorf("an approval with no plan waiting was not refused: %v", early)
	}
	st := queryState(t, env)
	if st.Plan == nil || st.Plan.Status != todo.PlanCompleted || st.Plan.Progress.Percent != 100 || res.Reply != "Done." {
		t.Fatalf("plan = %+v, reply %q", st.Plan, res.Reply)
	}
	var types []string
	for _, ev := range st.Events {
		types = append(types, ev.Type)
	}
	if got := strings.Join(types, ","); got != "plan_created,plan_started,step_completed,step_completed,plan_completed" {
		t.Errorf("events = %s", got)
	}
	if v, err := env.QueryWorkflow(api.PlanQuery); err != nil {
		t.Fatal(err)
	} else {
		var text string
		_ = v.Get(&text)
		if !strings.Contains(text, "[x] step_2: Change") || !strings.HasSuffix(text, "Progress: 2/2 (100%)") {
			t.Errorf("plan query:\n%s", text)
		}
	}
}

func TestRejectedPlanGivesFeedbackToTheModel(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	scripted(env,
		calls(call("createPlan", `{"title":"Refactor","steps":["Read"]}`)),
		calls(call("startPlan", `{}`)),
		calls(call("completePlan", `{"status":"cancelled","summary":"the user said no"}`)),
		model.Response{Content: "Cancelled."},
	)
	env.RegisterDelayedCallback(func() { approve(env, t, false, "Not now, we freeze the code.", nil) }, time.Minute)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "Refactor.", IdleTimeoutS: 60})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var startResult string
	msgs := queryMessages(t, env)
	for i, m := range msgs {
		if m.Role == model.RoleTool && i > 0 && len(msgs[i-1].ToolCalls) > 0 && msgs[i-1].ToolCalls[0].Name == "startPlan" {
			startResult = m.Content
		}
	}
	if !strings.Contains(startResult, "Not now, we freeze the code.") {
		t.Errorf("startPlan result does not carry the feedback: %q", startResult)
	}
	if st := queryState(t, env); st.Plan.Status != todo.PlanCancelled || st.Plan.Started {
		t.Errorf("plan = %+v", st.Plan)
	}
}

func TestAutoApprovalSkipsTheWait(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	scripted(env,
		calls(call("createPlan", `{"title":"T","steps":["A"]}`)),
		calls(call("startPlan", `{}`)),
		model.Response{Content: "Started; step A is next."},
		calls(call("setStepStatus", `{"step_id":"step_1","status":"completed","result":"did A"}`)),
		model.Response{Content: "All done."},
	)
	in := api.AgentInput{Prompt: "go", IdleTimeoutS: 60}
	in.Todo.PlanApproval = todo.ApprovalAuto
	env.ExecuteWorkflow(AgentWorkflow, in)
	var res api.AgentResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	// The final answer with a pending step of the started plan met the
	// finalization guard, which names the step.
	rem := named(queryMessages(t, env), api.NameCompletionReminder)
	if len(rem) != 1 || !strings.Contains(rem[0].Content, "A") || res.Reply != "All done." {
		t.Errorf("reminders = %+v, reply %q", rem, res.Reply)
	}
}

// Continue-as-new carries the todo list, the guard state, the plan and the
// transcript; the next run picks up where the last one stopped.
func TestContinueAsNewCarriesState(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	scripted(env,
		calls(call("write_todos", `{"todos":[{"content":"A","status":"in_progress"},{"content":"B","status":"pending"}]}`)),
		calls(call("createPlan", `{"title":"T","steps":["A"]}`)),
		model.Response{Content: "partial"},
		model.Response{Content: "still partial"},
	)
	suggestAfterTurn(env)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "go", IdleTimeoutS: 60})
	err := env.GetWorkflowError()
	var can *workflow.ContinueAsNewError
	if !asContinueAsNew(err, &can) {
		t.Fatalf("want continue-as-new, got %v", err)
	}
	var in api.AgentInput
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &in); err != nil {
		t.Fatal(err)
	}
	next, err := readHandover(in)
	if err != nil {
		t.Fatal(err)
	}
	c := next.Carry
	if c == nil || next.Prompt != "" || len(c.Todo.Todos) != 2 || c.Plans == nil || c.Plans.Plan == nil || c.Session.ModelCalls != 6 || c.Session.Turns != 1 {
		t.Fatalf("carry = %+v", c)
	}
	// One completion reminder, then two continuations (the script's empty
	// answers past its end), all carried.
	if c.Todo.GuardRetries[todo.RetryFinalization] != 1 || c.Todo.GuardRetries[todo.RetryContinuation] != 2 {
		t.Errorf("guard state not carried: retries %v", c.Todo.GuardRetries)
	}
	if len(c.Window.Messages) == 0 || c.Window.Messages[0].Role != model.RoleSystem {
		t.Errorf("transcript not carried")
	}

	// The next run starts from the carried state and numbers its model
	// calls on (the scripted model answers by call number).
	env2 := s.NewTestWorkflowEnvironment()
	seen := scripted(env2)
	env2.RegisterDelayedCallback(func() { env2.SignalWorkflow(api.EndSessionSignal, nil) }, time.Second)
	env2.SetContinuedExecutionRunID("the-run-before")
	env2.ExecuteWorkflow(AgentWorkflow, asInput(t, next))
	if err := env2.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	st := queryState(t, env2)
	if len(st.Todos) != 2 || st.Plan == nil || st.Plan.Title != "T" || st.ModelCalls != 6 || len(*seen) != 0 {
		t.Errorf("continued run state = %+v", st)
	}
}

// After continue-as-new the transcript is compacted; when the checklist's
// write_todos was cut, the next model call gets a todo_reminder.
func TestContinueAsNewCompactsAndReminds(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	responses := []model.Response{calls(call("write_todos", `{"todos":[{"content":"Read all","status":"in_progress"}]}`))}
	for range 70 {
		responses = append(responses, calls(call("list_files", `{}`)))
	}
	responses = append(responses, model.Response{Content: "Paused here."})
	scripted(env, responses...)
	suggestAfterTurn(env)
	zero := 0
	in := api.AgentInput{Prompt: "go", IdleTimeoutS: 60, MaxTurns: 100}
	in.Todo.StaleThreshold, in.Todo.FinalizationMaxCorrections, in.Todo.ContinuationMax = &zero, &zero, &zero
	env.ExecuteWorkflow(AgentWorkflow, in)
	next := continuedWith(t, env)
	if n := len(next.Carry.Window.Messages); n > 2+carryMessages {
		t.Fatalf("carried %d messages", n)
	}

	env2 := s.NewTestWorkflowEnvironment()
	scripted(env2, model.Response{}) // call numbers go on from the carry
	env2.RegisterDelayedCallback(func() { env2.SignalWorkflow(api.UserMessageSignal, "go on") }, time.Second)
	env2.RegisterDelayedCallback(func() { env2.SignalWorkflow(api.EndSessionSignal, nil) }, time.Minute)
	env2.SetContinuedExecutionRunID("the-run-before")
	env2.ExecuteWorkflow(AgentWorkflow, asInput(t, next))
	if err := env2.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	rem := named(queryMessages(t, env2), api.NameTodoReminder)
	if len(rem) != 1 || !strings.Contains(rem[0].Content, "[in_progress] Read all") {
		t.Errorf("todo_reminder after continue-as-new: %+v", rem)
	}
}

// end_session ends a wait for a plan's approval: the plan is not started,
// the model reads why, and the run completes instead of waiting for ever.
func TestEndSessionEndsAPlanApprovalWait(t *testing.T) {
	env := newTreeEnv()
	scriptTree(env, map[string][]model.Response{"main": {
		calls(call("createPlan", `{"title":"Release","steps":["tag"]}`)),
		calls(call("startPlan", `{}`)),
		say("stopped"),
	}})
	var waiting api.State
	env.RegisterDelayedCallback(func() {
		waiting = queryState(t, env)
		env.SignalWorkflow(api.EndSessionSignal, nil)
	}, 24*time.Hour)
	in := rootInput("release")
	in.Todo.PlanApproval = todo.ApprovalRequired
	env.ExecuteWorkflow(api.WorkflowName, in)
	completed(t, env)
	if waiting.Status != api.StatusAwaitingApproval {
		t.Fatalf("status before end_session = %s, want awaiting_approval", waiting.Status)
	}
	msgs := queryMessages(t, env)
	if m, ok := toolAnswer(msgs, "main-2-0"); !ok || !strings.Contains(m.Content, "The session ended before the plan was approved") {
		t.Errorf("startPlan answered %+v", m)
	}
	if st := queryState(t, env); st.Status != api.StatusCompleted || st.Plan == nil || st.Plan.Started {
		t.Errorf("after end_session: status %s, plan %s", st.Status, dump(st.Plan))
	}
}

// A plan's wait for approval that outlasts its run's history crosses
// continue-as-new: startPlan is answered that the verdict comes later, the
// response's other calls run, and the continuation waits for approve_plan,
// tells the model the verdict and goes on with the turn.
func TestApprovalWaitCrossesContinueAsNew(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	scripted(env,
		calls(call("createPlan", `{"title":"Refactor","steps":["Read"]}`)),
		calls(call("startPlan", `{"message":"Ready?"}`), call("write_todos", `{"todos":[{"content":"Read","status":"in_progress"}]}`)),
	)
	env.RegisterDelayedCallback(func() {
		if st := queryState(t, env); st.Status != api.StatusAwaitingApproval {
			t.Errorf("after a day: %s, want awaiting approval", st.Status)
		}
		env.SetContinueAsNewSuggested(true)
		env.SignalWorkflow(api.TaskEventSignal, Events{Of: "nobody", Brief: &api.Brief{Status: api.StatusRunning}})
	}, 24*time.Hour)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "Refactor.", IdleTimeoutS: 60})
	next := continuedWith(t, env)
	c := next.Carry
	if len(c.Inbox.Queue) != 1 || c.Inbox.Queue[0].Blocked == nil || !c.Inbox.Queue[0].Blocked.Approval || c.Inbox.Queue[0].Blocked.Calls != 2 || c.Session.Turns != 1 {
		t.Fatalf("carry: inbox %s, %d turns; want the turn waiting for approval before its third call", dump(c.Inbox.Queue), c.Session.Turns)
	}
	if !c.Plans.AwaitingApproval || len(c.Todo.Todos) != 1 {
		t.Errorf("carry: awaiting approval %v, list %s; want the plan waiting, the list written", c.Plans.AwaitingApproval, dump(c.Todo.Todos))
	}
	var answered bool
	for _, m := range c.Window.Messages {
		answered = answered || m.Role == model.RoleTool && strings.Contains(m.Content, "the answer comes in a message of its own")
	}
	if !answered {
		t.Errorf("startPlan was not answered that its verdict comes later: %s", dump(c.Window.Messages))
	}

	env = s.NewTestWorkflowEnvironment()
	seen := scripted(env,
		say("(call 1, of the first run)"), say("(call 2, of the first run)"),
		calls(call("setStepStatus", `{"step_id":"step_1","status":"completed","result":"read it"}`)),
		calls(call("write_todos", `{"todos":[{"content":"Read","status":"completed"}]}`), call("completePlan", `{"status":"completed"}`)),
		model.Response{Content: "Done."},
	)
	env.RegisterDelayedCallback(func() {
		if st := queryState(t, env); st.Status != api.StatusAwaitingApproval || len(st.Waiting) != 1 || st.Waiting[0].Kind != api.WaitPlanApproval {
			t.Errorf("the continuation: %s, waiting %s; want the plan's approval", st.Status, dump(st.Waiting))
		}
		approve(env, t, true, "go ahead", nil)
	}, 24*time.Hour)
	env.SetContinuedExecutionRunID("the-run-before")
	env.ExecuteWorkflow(AgentWorkflow, asInput(t, next))
	var res api.AgentResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	st := queryState(t, env)
	if st.Turns != 1 || st.ModelCalls != 5 || res.Reply != "Done." || st.Plan.Status != todo.PlanCompleted {
		t.Errorf("after the approval: %d turns, %d calls, reply %q, plan %s", st.Turns, st.ModelCalls, res.Reply, st.Plan.Status)
	}
	first := (*seen)[0]
	var verdict string
	for _, m := range first.New.Messages {
		if m.Name == api.NamePlanVerdict {
			verdict = m.Content
		}
	}
	if !strings.Contains(verdict, "The user's answer to your startPlan") || !strings.Contains(verdict, "go ahead") {
		t.Errorf("the model's first call in the continuation did not carry the verdict: %q", verdict)
	}
}

// A plan carried across continue-as-new answers as it did before: the same
// completion reported again changes nothing and tells nobody again. A run
// that v0.1.0 started (no plan-restored marker) still replays with the
// event it recorded.
func TestRepeatedReportAfterHandoverEmitsNothing(t *testing.T) {
	for _, tc := range []struct {
		name    string
		patched bool
		want    int
	}{
		{"patched", true, 1},
		{"as v0.1.0 did", false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := todo.NewPlanState("main")
			for _, c := range []todo.Call{
				{ID: "1", Name: todo.ToolCreatePlan, Args: []byte(`{"title":"T","steps":["a"]}`)},
				{ID: "2", Name: todo.ToolStartPlan, Args: []byte(`{}`)},
				{ID: "3", Name: todo.ToolSetStepStatus, Args: []byte(`{"step_id":"step_1","status":"completed","result":"done"}`)},
			} {
				if out := ps.ApplyPlan(c, false); out.Result.IsError {
					t.Fatalf("%s: %s", c.Name, out.Result.Content)
				}
			}
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			if !tc.patched {
				env.OnGetVersion(patchPlanRestored, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
			}
			// The carry counts one model call: this run's first is call 2.
			scripted(env, model.Response{}, calls(call(todo.ToolSetStepStatus, `{"step_id":"step_1","status":"completed","result":"done"}`)), model.Response{Content: "done"})
			env.SetContinuedExecutionRunID("the-run-before")
			env.ExecuteWorkflow(AgentWorkflow, withCarry(t, api.AgentInput{IdleTimeoutS: 1},
				&Carry{Plans: ps, Inbox: InboxCarry{Queue: []Inbound{{Text: "report it again"}}}, Session: SessionCarry{Turns: 1, ModelCalls: 1}}))
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			var res api.AgentResult
			if err := env.GetWorkflowResult(&res); err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, ev := range res.State.Events {
				if ev.Type == todo.EventStepCompleted {
					n++
				}
			}
			if n != tc.want {
				t.Errorf("%d step_completed events after the repeated report; want %d", n, tc.want)
			}
		})
	}
}
