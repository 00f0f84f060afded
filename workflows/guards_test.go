package workflows

import (
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/testsuite"

	"github.com/todoflow/todoflow/model"
)

func named(msgs []model.Message, name string) []model.Message {
	var out []model.Message
	for _, m := range msgs {
		if m.Name == name {
			out = append(out, m)
		}
	}
	return out
}

func TestFinalizationGuardOneCorrection(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	scripted(env,
		calls(call("write_todos", `{"todos":[{"content":"Summarise","status":"in_progress"},{"content":"List questions","status":"pending"}]}`)),
		model.Response{Content: "Summary."},
		calls(call("write_todos", `{"todos":[{"content":"Summarise","status":"completed"},{"content":"List questions","status":"completed"}]}`)),
		model.Response{Content: "Checklist updated."},
	)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "go", IdleTimeoutS: 1})
	var res api.AgentResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	msgs := queryMessages(t, env)
	rem := named(msgs, api.NameCompletionReminder)
	if len(rem) != 1 || !strings.Contains(rem[0].Content, "List questions") || strings.Contains(rem[0].Content, "[completed]") {
		t.Errorf("completion reminders = %+v", rem)
	}
	if res.ModelCalls != 4 || res.Reply != "Checklist updated." {
		t.Errorf("result = %+v", res)
	}
	st := queryState(t, env)
	// The correction belonged to the turn, which has ended.
	if st.Extra.FinalizationCorrection != nil || st.Extra.GuardRetries["finalization"] != 1 {
		t.Errorf("extra = %+v", st.Extra)
	}
}

func TestGuardThenTwoContinuationsThenTurnEnds(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	scripted(env,
		calls(call("write_todos", `{"todos":[{"content":"A","status":"in_progress"}]}`)),
		model.Response{Content: "done?"}, model.Response{Content: "done!"}, model.Response{Content: "really"}, model.Response{Content: "stop"},
		model.Response{Content: "never asked"},
	)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "go", IdleTimeoutS: 1})
	var res api.AgentResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	msgs := queryMessages(t, env)
	cont := named(msgs, api.NameContinuation)
	if res.ModelCalls != 5 || len(named(msgs, api.NameCompletionReminder)) != 1 || len(cont) != 2 {
		t.Fatalf("calls=%d reminders=%d continuations=%d", res.ModelCalls, len(named(msgs, api.NameCompletionReminder)), len(cont))
	}
	if strings.Contains(cont[0].Content, "not changed") || !strings.Contains(cont[1].Content, "not changed") {
		t.Errorf("second continuation not firmer: %q / %q", cont[0].Content, cont[1].Content)
	}
	if res.Reply != "stop" {
		t.Errorf("reply = %q", res.Reply)
	}
}

func TestSetContinuationTakesEffectMidRun(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	slow := model.Response{Content: "thinking"}
	responses := []model.Response{calls(call("write_todos", `{"todos":[{"content":"A","status":"in_progress"}]}`)), slow, slow, slow}
	env.RegisterDelayedCallback(func() {
		off := false
		env.UpdateWorkflow(api.SetContinuationUpdate, "off", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Error(err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, api.ContinuationArgs{Enabled: &off})
	}, 0)
	scripted(env, responses...)
	zero := 0
	in := api.AgentInput{Prompt: "go", IdleTimeoutS: 1}
	in.Todo.FinalizationMaxCorrections = &zero
	env.ExecuteWorkflow(AgentWorkflow, in)
	var res api.AgentResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if n := len(named(queryMessages(t, env), api.NameContinuation)); n != 0 || res.ModelCalls != 2 {
		t.Errorf("continuations=%d calls=%d; continuation was switched off before the first final answer", n, res.ModelCalls)
	}
}

func TestPauseWaitsForResume(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	scripted(env,
		calls(call("write_todos", `{"todos":[{"content":"Deploy","status":"in_progress"}]}`)),
		calls(call("todo_pause", `{"reason":"The deploy key is missing."}`)),
		calls(call("write_todos", `{"todos":[{"content":"Deploy","status":"completed"}]}`)),
		model.Response{Content: "Deployed."},
	)
	env.RegisterDelayedCallback(func() {
		st := queryState(t, env)
		if st.Status != api.StatusPaused || !st.Paused || st.PauseReason != "The deploy key is missing." || st.ModelCalls != 2 {
			t.Errorf("while paused: %+v", st)
		}
		env.SignalWorkflow(api.ResumeSignal, "The key is in place now.")
	}, 48*time.Hour) // far beyond the idle timeout: a pause waits as long as it takes
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "Deploy.", IdleTimeoutS: 60})
	var res api.AgentResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	st := queryState(t, env)
	if res.ModelCalls != 4 || st.Paused || res.Reply != "Deployed." {
		t.Errorf("result = %+v, paused = %v", res, st.Paused)
	}
	var resumed bool
	for _, m := range queryMessages(t, env) {
		resumed = resumed || (m.Role == model.RoleUser && m.Content == "The key is in place now.")
	}
	if !resumed {
		t.Error("the resume text is not a user message")
	}
}

func TestContextWindowRemindsOfTheList(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	read := calls(call("list_files", `{}`))
	seen := scripted(env,
		calls(call("write_todos", `{"todos":[{"content":"A","status":"in_progress"}]}`)),
		read, read, read,
		calls(call("write_todos", `{"todos":[{"content":"A","status":"completed"}]}`)),
		model.Response{Content: "ok"},
	)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "go", IdleTimeoutS: 1, Context: api.ContextConfig{MaxMessages: 4}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	msgs := queryMessages(t, env)
	rem := named(msgs, api.NameTodoReminder)
	if len(rem) == 0 || !strings.Contains(rem[0].Content, "[in_progress] A") {
		t.Fatalf("no todo_reminder after write_todos left the window: %d reminders", len(rem))
	}
	for _, in := range *seen {
		// The head is always sent; the window never starts on a tool result.
		if in.Spans[0].Start != 0 || in.Spans[0].End < 2 {
			t.Errorf("call %d does not send the system prompt and first message: %+v", in.Call, in.Spans)
		}
		last := in.Spans[len(in.Spans)-1]
		if len(in.Spans) == 2 && msgs[last.Start].Role == model.RoleTool {
			t.Errorf("call %d window starts on a tool result: %+v", in.Call, in.Spans)
		}
		if !strings.Contains(msgs[0].Content, "write_todos") {
			t.Error("todo prompt missing")
		}
	}
}

func TestStaleReminderInTheLoop(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	read := calls(call("list_files", `{}`))
	responses := []model.Response{calls(call("write_todos", `{"todos":[{"content":"A","status":"in_progress"}]}`))}
	for range 10 {
		responses = append(responses, read)
	}
	responses = append(responses, calls(call("write_todos", `{"todos":[{"content":"A","status":"completed"}]}`)), model.Response{Content: "ok"})
	scripted(env, responses...)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "go", IdleTimeoutS: 1})
	var res api.AgentResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if n := len(named(queryMessages(t, env), api.NameStaleReminder)); n != 2 || res.ModelCalls != 13 {
		t.Errorf("stale reminders = %d (want 2, at 5 and 10), model calls = %d (want 13: soft reminders cost no call)", n, res.ModelCalls)
	}
}
