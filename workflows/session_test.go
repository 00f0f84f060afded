package workflows

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/transcript"
)

// faulty registers a model that fails while fail(in, attempt) returns an
// error and otherwise answers call N with responses[N-1]; summarising calls
// answer with summary. It returns every input it saw.
func faulty(env *testsuite.TestWorkflowEnvironment, fail func(in activities.CallModelInput) error, summary string, responses ...model.Response) *[]activities.CallModelInput {
	var seen []activities.CallModelInput
	n := 0 // answers given, summaries aside
	env.RegisterActivityWithOptions(func(_ context.Context, in activities.CallModelInput) (model.Response, error) {
		seen = append(seen, in)
		if err := fail(in); err != nil {
			return model.Response{}, err
		}
		if in.Summarize != nil {
			return model.Response{Content: summary}, nil
		}
		n++
		if n > len(responses) {
			return model.Response{}, nil
		}
		return responses[n-1], nil
	}, activity.RegisterOptions{Name: api.ModelCallActivity})
	env.RegisterActivityWithOptions(func(_ context.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
		return activities.RunToolResult{Content: strings.Repeat("x", 3000)}, nil
	}, activity.RegisterOptions{Name: api.ToolActivity})
	registerHost(env)
	return &seen
}

func unavailable() error {
	return temporal.NewApplicationErrorWithOptions("openai: 503 Service Unavailable", activities.ErrTypeModel, temporal.ApplicationErrorOptions{})
}

// An outage shorter than the retry window never fails the run: the server
// retries the call, scheduled once, with growing waits and the run's
// retry window as its ScheduleToClose timeout; the turn goes on once the
// model is back. The run does not know meanwhile (its state has no
// model_error: clients read the pending activity); a history holds one
// ActivityTaskScheduled for the whole outage, not events and a timer per
// attempt.
//
// The outage is 4 minutes: the test environment stops retrying at 10
// attempts when a policy sets no maximum (the server does not).
func TestModelOutageIsRetriedByTheServer(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	start := env.Now()
	down := 4 * time.Minute
	var tries []activity.Info
	env.RegisterActivityWithOptions(func(ctx context.Context, in activities.CallModelInput) (model.Response, error) {
		tries = append(tries, activity.GetInfo(ctx))
		if env.Now().Sub(start) < down {
			return model.Response{}, unavailable()
		}
		return model.Response{Content: "back"}, nil
	}, activity.RegisterOptions{Name: api.ModelCallActivity})
	registerHost(env)
	var during api.State
	env.RegisterDelayedCallback(func() { during = queryState(t, env) }, 2*time.Minute)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "hi", IdleTimeoutS: 60, ModelRetryWindowS: 7200})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("the run failed on an outage: %v", err)
	}
	var res api.AgentResult
	_ = env.GetWorkflowResult(&res)
	if res.Reply != "back" || res.State.ModelError != nil || res.State.Turns != 1 {
		t.Errorf("result = %q after %d turns, model_error %+v", res.Reply, res.State.Turns, res.State.ModelError)
	}
	if during.ModelError != nil {
		t.Errorf("model_error in the run's own state during the outage = %+v; the run cannot know", during.ModelError)
	}
	// 0, 1, 3, 7, … 127 s fail, 255 s answers: 9 attempts of one activity.
	if n := len(tries); n != 9 {
		t.Errorf("%d attempts for a 4-minute outage, want 9 (waits of 1 s, 2 s, 4 s, …)", n)
	}
	for i, info := range tries {
		if info.ActivityID != tries[0].ActivityID || info.Attempt != int32(i+1) {
			t.Errorf("try %d is activity %s attempt %d; want activity %s attempt %d: the workflow scheduled the call again",
				i+1, info.ActivityID, info.Attempt, tries[0].ActivityID, i+1)
		}
		if info.ScheduleToCloseTimeout != 2*time.Hour {
			t.Errorf("try %d: ScheduleToClose = %s, want the retry window, 2h", i+1, info.ScheduleToCloseTimeout)
		}
	}
}

// An outage longer than model_retry_window_s ends the turn, not the run;
// retry_turn runs it again once the model is back. The provider asks for 5
// minutes between attempts (the test environment stops at 10 attempts,
// the server does not): 0, 5, 10 and 15 minutes fail, and the window of 15
// minutes is over before the next.
func TestOutageBeyondTheWindowEndsTheTurn(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	healthy := false
	seen := faulty(env, func(activities.CallModelInput) error {
		if !healthy {
			return temporal.NewApplicationErrorWithOptions("openai: 503 Service Unavailable", activities.ErrTypeModel,
				temporal.ApplicationErrorOptions{NextRetryDelay: 5 * time.Minute})
		}
		return nil
	}, "", model.Response{Content: "done after the retry"})
	var failedAfter int
	var failed api.State
	var retryReply string
	var refused error
	env.RegisterDelayedCallback(func() {
		failed, failedAfter = queryState(t, env), len(*seen)
		healthy = true
		env.UpdateWorkflow(api.RetryTurnUpdate, "r1", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { t.Errorf("retry refused: %v", err) },
			OnComplete: func(r any, err error) { retryReply, _ = r.(string) },
		})
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(api.RetryTurnUpdate, "r2", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { refused = err },
			OnComplete: func(any, error) {},
		})
		env.SignalWorkflow(api.EndSessionSignal, nil)
	}, 2*time.Hour)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "hi", ModelRetryWindowS: 900, IdleTimeoutS: 36000})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("the run failed: %v", err)
	}
	if failed.Status != api.StatusWaitingUser || failed.ModelError == nil || failed.ModelError.Retryable {
		t.Errorf("after the window: status %s, model_error %+v", failed.Status, failed.ModelError)
	}
	if failedAfter != 4 {
		t.Errorf("%d attempts in a window of 15 minutes, 5 minutes apart; want 4", failedAfter)
	}
	if retryReply != "done after the retry" {
		t.Errorf("retry_turn reply = %q", retryReply)
	}
	if refused == nil || !strings.Contains(refused.Error(), "nothing to retry") {
		t.Errorf("a retry with no failed turn: %v", refused)
	}
	msgs := queryMessages(t, env)
	for _, m := range msgs {
		if m.Name == api.NameModelError {
			t.Errorf("the failure notice stayed after the retry: %+v", m)
		}
	}
	if n := len(msgs); msgs[n-1].Content != "done after the retry" || msgs[n-2].Role != model.RoleUser {
		t.Errorf("transcript tail = %+v", msgs[n-2:])
	}
}

// An error that waiting will not fix ends the turn at once with a reply that
// says what to do; the list stays.
func TestNonRetryableModelErrorEndsTheTurn(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	calls := 0
	faulty(env, func(in activities.CallModelInput) error {
		if in.Call == 2 {
			calls++
			return temporal.NewNonRetryableApplicationError("openai: 401 Unauthorized: check OPENAI_API_KEY", activities.ErrTypeModel, nil)
		}
		return nil
	}, "", model.Response{ToolCalls: []model.ToolCall{{ID: "a", Name: "write_todos", Arguments: []byte(`{"todos":[{"content":"A","status":"in_progress"}]}`)}}})
	answered := false
	var st api.State
	var msgs []model.Message
	env.RegisterDelayedCallback(func() {
		st, msgs = queryState(t, env), queryMessages(t, env)
		env.UpdateWorkflow(api.SendMessageUpdate, "m", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("refused: %v", err) }, OnComplete: func(any, error) { answered = true },
		}, "again")
	}, time.Minute)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "hi", IdleTimeoutS: 600})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("the run failed: %v", err)
	}
	if calls != 1 || st.Status != api.StatusWaitingUser || len(st.Todos) != 1 || st.ModelError == nil || st.ModelError.Retryable {
		t.Errorf("attempts %d, state after the failed turn %+v", calls, st)
	}
	last := msgs[len(msgs)-1]
	if last.Name != api.NameModelError || !strings.Contains(last.Content, "OPENAI_API_KEY") || !strings.Contains(last.Content, "starter retry") {
		t.Errorf("the failed turn ended with %+v", last)
	}
	if !answered {
		t.Error("the next message got no reply")
	}
	if end := queryState(t, env); end.ModelError != nil {
		t.Errorf("model_error after a good turn = %+v", end.ModelError)
	}
}

// A subagent has no user to retry its turn: its run fails, so its parent
// sees it.
func TestSubagentFailsOnAFailedTurn(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	faulty(env, func(activities.CallModelInput) error {
		return temporal.NewNonRetryableApplicationError("model \"x\": unknown", activities.ErrTypeModelConfig, nil)
	}, "")
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "task", AgentID: "worker"})
	if err := env.GetWorkflowError(); err == nil || !strings.Contains(err.Error(), "unknown") {
		t.Fatalf("subagent error = %v", err)
	}
}

// Over the budget the older messages are summarised before the call, the
// summary stands in for them, the stored transcript keeps them all, and the
// todo_reminder restores the checklist.
func TestContextBudgetCompacts(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	read := model.Response{ToolCalls: []model.ToolCall{{Name: "read_file", Arguments: []byte(`{"path":"a"}`)}}}
	write := model.Response{ToolCalls: []model.ToolCall{{ID: "w", Name: "write_todos", Arguments: []byte(`{"todos":[{"content":"Read","status":"in_progress"}]}`)}}}
	seen := faulty(env, func(activities.CallModelInput) error { return nil }, "The user asked to read files; a was read.",
		write, read, read, read, read, read, read, model.Response{Content: "read"})
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "read", IdleTimeoutS: 1, Context: api.ContextConfig{MaxTokens: 9000}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	summaries := 0
	for _, in := range *seen {
		if in.Summarize != nil {
			summaries++
			if len(in.WorkerTools) != 0 || in.TodoTools != nil {
				t.Errorf("a summarising call offers tools: %+v", in)
			}
		}
	}
	msgs := queryMessages(t, env)
	var summaryAt, reminders int
	for i, m := range msgs {
		switch m.Name {
		case api.NameContextSummary:
			summaryAt = i
		case api.NameTodoReminder:
			reminders++
		}
	}
	if summaries == 0 || summaryAt == 0 || reminders == 0 {
		t.Fatalf("%d summarising calls, summary at %d, %d reminders", summaries, summaryAt, reminders)
	}
	// Every tool result is still stored.
	if n := countRole(msgs, model.RoleTool); n != 7 {
		t.Errorf("%d tool messages stored, want 7", n)
	}
	// The last call did not send what the summary replaced.
	last := (*seen)[len(*seen)-1]
	if last.Spans[0] != (transcript.Span{Start: 0, End: 2}) || last.Spans[1].Start != summaryAt {
		t.Errorf("last call spans = %v (summary at %d)", last.Spans, summaryAt)
	}
	if st := queryState(t, env); st.Compactions == 0 {
		t.Errorf("compactions = %d", st.Compactions)
	}
}

// The provider's context_length_exceeded compacts and calls again.
func TestContextOverflowCompactsAndRetries(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	read := model.Response{ToolCalls: []model.ToolCall{{Name: "read_file", Arguments: []byte(`{"path":"a"}`)}}}
	overflowed := 0
	faulty(env, func(in activities.CallModelInput) error {
		size := 0
		for _, sp := range in.Spans {
			size += sp.End - sp.Start
		}
		if in.Summarize == nil && size > 8 {
			overflowed++
			return temporal.NewNonRetryableApplicationError("maximum context length", activities.ErrTypeContextOverflow, nil)
		}
		return nil
	}, "summary", read, read, read, read, model.Response{Content: "fits"})
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "go", IdleTimeoutS: 1, Context: api.ContextConfig{Summarize: new(false)}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res api.AgentResult
	_ = env.GetWorkflowResult(&res)
	if res.Reply != "fits" || overflowed == 0 {
		t.Errorf("reply %q after %d overflows", res.Reply, overflowed)
	}
}

// compact_context asks for a compaction by hand; with nothing old enough it
// says so.
func TestCompactContextUpdate(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	faulty(env, func(activities.CallModelInput) error { return nil }, "short summary", model.Response{Content: "one"})
	var got api.CompactResult
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(api.CompactContextUpdate, "c", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("refused: %v", err) }, OnComplete: func(r any, _ error) { got, _ = r.(api.CompactResult) },
		})
	}, time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 2*time.Minute)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "hi"})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if got.Compacted || !strings.Contains(got.Message, "Nothing to compact") {
		t.Errorf("compact_context = %+v", got)
	}
}

// A send_message that arrives while a finished session waits for its
// reporters' drain is taken into a new turn, not accepted and forgotten.
func TestMessageDuringWindDownGetsATurn(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	plan := model.Response{ToolCalls: []model.ToolCall{{ID: "p", Name: "createPlan", Arguments: []byte(`{"title":"T","steps":["a"]}`)}}}
	faulty(env, func(activities.CallModelInput) error { return nil }, "", plan, model.Response{Content: "one"}, model.Response{Content: "two"})
	env.RegisterActivityWithOptions(func(ctx context.Context, in activities.ReportInput) error {
		return temporal.NewApplicationError("webhook down", "Webhook")
	}, activity.RegisterOptions{Name: activities.ReportName})
	var reply string
	var status string
	env.RegisterDelayedCallback(func() {
		status = queryState(t, env).Status
		env.UpdateWorkflow(api.SendMessageUpdate, "late", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("refused: %v", err) }, OnComplete: func(r any, _ error) { reply, _ = r.(string) },
		}, "late message")
	}, 90*time.Second)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "hi", IdleTimeoutS: 60,
		Reporters: []api.ReporterConfig{{Type: "console", RetryWindowS: 300}}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	// The idle timeout (60 s) had passed: the run was draining its
	// reporter, the last step before it completes.
	if status != api.StatusWaitingUser {
		t.Errorf("status when the late message came = %s", status)
	}
	if reply != "two" {
		t.Errorf("late message reply = %q", reply)
	}
}

func countRole(msgs []model.Message, role string) int {
	n := 0
	for _, m := range msgs {
		if m.Role == role {
			n++
		}
	}
	return n
}

// What a user reads of a failed call: the last attempt's own account, also
// when the retry window ran out around it, and the attempt's own timeout,
// not the window's.
func TestModelErrorText(t *testing.T) {
	unavailable := temporal.NewApplicationError("openai: 503 Service Unavailable", activities.ErrTypeModel)
	heartbeat := temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil)
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"the last attempt's failure", unavailable, "openai: 503 Service Unavailable"},
		{"the window ran out on a failure", temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE, unavailable), "openai: 503 Service Unavailable"},
		{"an attempt's timeout", heartbeat, "the model call timed out (heartbeat): the worker was lost or the model did not answer in time"},
		{"the window ran out on a timeout", temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE, heartbeat),
			"the model call timed out (heartbeat): the worker was lost or the model did not answer in time"},
	} {
		if got := api.ModelErrorText(tt.err); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
