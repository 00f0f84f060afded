package workflows

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
)

// scripted registers fake activities: call N of the model answers with
// responses[N-1] (an empty final text past the end), tools echo their name.
func scripted(env *testsuite.TestWorkflowEnvironment, responses ...model.Response) *[]activities.CallModelInput {
	var seen []activities.CallModelInput
	env.RegisterActivityWithOptions(func(_ context.Context, in activities.CallModelInput) (model.Response, error) {
		seen = append(seen, in)
		if in.Call > len(responses) {
			return model.Response{}, nil
		}
		r := responses[in.Call-1]
		for i := range r.ToolCalls {
			if r.ToolCalls[i].ID == "" {
				r.ToolCalls[i].ID = "c" + string(rune('0'+in.Call)) + string(rune('a'+i))
			}
		}
		return r, nil
	}, activity.RegisterOptions{Name: api.ModelCallActivity})
	env.RegisterActivityWithOptions(func(_ context.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
		return activities.RunToolResult{Content: "ran " + in.Call.Name}, nil
	}, activity.RegisterOptions{Name: api.ToolActivity})
	registerHost(env)
	return &seen
}

func call(name, args string) model.ToolCall {
	return model.ToolCall{Name: name, Arguments: json.RawMessage(args)}
}

func calls(cs ...model.ToolCall) model.Response { return model.Response{ToolCalls: cs} }

func queryState(t *testing.T, env *testsuite.TestWorkflowEnvironment) api.State {
	t.Helper()
	v, err := env.QueryWorkflow(api.StateQuery)
	if err != nil {
		t.Fatalf("state query: %v", err)
	}
	var s api.State
	if err := v.Get(&s); err != nil {
		t.Fatalf("decode state: %v", err)
	}
	return s
}

func queryMessages(t *testing.T, env *testsuite.TestWorkflowEnvironment, args ...any) []model.Message {
	t.Helper()
	v, err := env.QueryWorkflow(api.MessagesQuery, args...)
	if err != nil {
		t.Fatalf("messages query: %v", err)
	}
	var ms []model.Message
	if err := v.Get(&ms); err != nil {
		t.Fatalf("decode messages: %v", err)
	}
	return ms
}

func TestLoopWritesTodosAndFinishes(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	seen := scripted(env,
		calls(call("write_todos", `{"todos":[{"content":"Find","status":"in_progress"},{"content":"Fix","status":"pending"}]}`)),
		calls(call("write_todos", `{"todos":[{"content":"Find","status":"completed"},{"content":"Fix","status":"in_progress"}]}`),
			call("read_file", `{"path":"a.go"}`), call("todo_read", `{}`)),
		calls(call("write_todos", `{"todos":[{"content":"Find","status":"completed"},{"content":"Fix","status":"completed"}]}`)),
		model.Response{Content: "Fixed."},
	)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "Fix the test.", IdleTimeoutS: 60})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: completed=%v err=%v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	var res api.AgentResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Reply != "Fixed." || res.ModelCalls != 4 || res.Turns != 1 {
		t.Errorf("result = %+v", res)
	}
	st := queryState(t, env)
	if st.Status != api.StatusCompleted || len(st.Todos) != 2 || st.Todos[1].Status != "completed" || st.Todos[0].ID != "1" {
		t.Errorf("state = %+v", st)
	}
	msgs := queryMessages(t, env)
	if msgs[0].Role != model.RoleSystem || !strings.Contains(msgs[0].Content, "write_todos") {
		t.Errorf("first message is not the system prompt with the todo prompt: %+v", msgs[0])
	}
	// The second response's three results come back in call order, the
	// activity's among the workflow's own.
	var tools []model.Message
	for _, m := range msgs {
		if m.Role == model.RoleTool {
			tools = append(tools, m)
		}
	}
	if len(tools) != 5 || tools[2].Content != "ran read_file" || !strings.Contains(tools[3].Content, "In progress (1)") {
		t.Errorf("tool messages = %+v", tools)
	}
	// Every model call names a growing span of the transcript, never the
	// messages themselves, and carries the todo tools.
	for i, in := range *seen {
		if in.Call != i+1 || len(in.Spans) != 1 || in.Spans[0].Start != 0 || in.Messages != nil || in.TodoTools == nil || len(in.Tools) != 0 {
			t.Errorf("call %d: spans %v, %d inline messages, todo tools %v, %d tools", i+1, in.Spans, len(in.Messages), in.TodoTools, len(in.Tools))
		}
	}
	if got := queryMessages(t, env, 1, 2); len(got) != 2 || got[0].Role != model.RoleUser {
		t.Errorf("paged messages = %+v", got)
	}
}

func TestParallelWritesAndValidation(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	scripted(env,
		calls(call("write_todos", `{"todos":[{"content":"A","status":"in_progress"}]}`)),
		calls(call("write_todos", `{"todos":[{"content":"A","status":"completed"}]}`),
			call("list_files", `{}`),
			call("write_todos", `{"todos":[{"content":"B","status":"in_progress"}]}`)),
		calls(call("write_todos", `{"todos":[]}`)),
		calls(call("write_todos", `{"todos":[{"content":"A","status":"pending"}]}`)),
		model.Response{Content: "ok"},
	)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "go", IdleTimeoutS: 1})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	st := queryState(t, env)
	if len(st.Todos) != 1 || st.Todos[0].Content != "A" || st.Todos[0].Status != "in_progress" {
		t.Errorf("list did not roll back: %+v", st.Todos)
	}
	var errs, ok int
	for _, m := range queryMessages(t, env) {
		if m.Role == model.RoleTool {
			if m.IsError {
				errs++
			} else {
				ok++
			}
		}
	}
	if errs != 4 || ok != 2 { // two parallel writes, the empty list, no in_progress
		t.Errorf("tool results: %d errors, %d ok; want 4 and 2", errs, ok)
	}
}

func TestSessionTakesMessagesUntilEnded(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	scripted(env, model.Response{Content: "one"}, model.Response{Content: "two"}, model.Response{Content: "three"})
	var reply string
	var rejected error
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(api.SendMessageUpdate, "1", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("rejected: %v", err) },
			OnComplete: func(r any, err error) {
				if err != nil {
					t.Errorf("update: %v", err)
				}
				reply = r.(string)
			},
		}, "hello")
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(api.SendMessageUpdate, "2", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { rejected = err },
			OnComplete: func(any, error) {},
		}, "   ")
	}, 2*time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.UserMessageSignal, "again") }, 3*time.Minute)
	env.RegisterDelayedCallback(func() {
		if st := queryState(t, env); st.Status != api.StatusWaitingUser || st.Turns != 2 {
			t.Errorf("between messages: %+v", st)
		}
		env.SignalWorkflow(api.EndSessionSignal, nil)
	}, 4*time.Minute)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if reply != "one" {
		t.Errorf("send_message reply = %q, want one", reply)
	}
	if rejected == nil {
		t.Error("an empty message was not rejected")
	}
	var res api.AgentResult
	_ = env.GetWorkflowResult(&res)
	if res.Turns != 2 || res.Reply != "two" {
		t.Errorf("result = %+v", res)
	}
}

func TestIdleTimeoutCompletes(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	scripted(env, model.Response{Content: "hi"})
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "hello", IdleTimeoutS: 30})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if st := queryState(t, env); st.Status != api.StatusCompleted {
		t.Errorf("status = %s", st.Status)
	}
}

func TestMaxTurnsEndsTheTurn(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	loop := calls(call("list_files", `{}`))
	scripted(env, loop, loop, loop, loop, loop)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "loop", MaxTurns: 3, IdleTimeoutS: 1})
	var res api.AgentResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.ModelCalls != 3 || !strings.Contains(res.Reply, "max_turns") {
		t.Errorf("result = %+v", res)
	}
}

func TestBadInputFailsClearly(t *testing.T) {
	for name, in := range map[string]api.AgentInput{
		"policy":    {Prompt: "x", Todo: todoPolicy("one_please")},
		"max_turns": {Prompt: "x", MaxTurns: -1},
		"model":     {Prompt: "x", Model: "gpt-4o"},
		"idle":      {Prompt: "x", IdleTimeoutS: 1 << 62},
		"window":    {Prompt: "x", ModelRetryWindowS: 400_000_000},
	} {
		t.Run(name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			scripted(env)
			env.ExecuteWorkflow(AgentWorkflow, in)
			err := env.GetWorkflowError()
			if err == nil || !strings.Contains(err.Error(), "invalid AgentWorkflow input") {
				t.Errorf("err = %v", err)
			}
			if st := queryState(t, env); st.Status != api.StatusFailed {
				t.Errorf("state of a run with a bad input = %+v", st)
			}
		})
	}
}

func TestSetContinuationValidates(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	scripted(env, model.Response{Content: "hi"})
	var rejected, accepted bool
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(api.SetContinuationUpdate, "bad", &testsuite.TestUpdateCallback{
			OnReject: func(error) { rejected = true }, OnComplete: func(any, error) {},
		}, map[string]any{"enable": true})
		off := false
		env.UpdateWorkflow(api.SetContinuationUpdate, "good", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Error(err) }, OnComplete: func(any, error) { accepted = true },
		}, api.ContinuationArgs{Enabled: &off})
	}, time.Second)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "hello", IdleTimeoutS: 10})
	if !rejected || !accepted {
		t.Errorf("rejected=%v accepted=%v", rejected, accepted)
	}
	if st := queryState(t, env); st.Continuation {
		t.Error("continuation still on")
	}
}
