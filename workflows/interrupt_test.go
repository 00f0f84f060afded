package workflows

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// interruptCase is one turn the user interrupts, and what the turn was doing
// when the interrupt came.
type interruptCase struct {
	name string
	in   api.AgentInput
	// answer answers model call n; the call named by block waits for its
	// cancellation (a model that takes its time) after it sends the
	// interrupt.
	answer func(n int) model.Response
	block  int
	// blockSummary blocks the first summarising call instead; toolResult
	// is what the tools answer.
	blockSummary bool
	toolResult   string
	// interruptAt, when not 0, sends the interrupt at that workflow time
	// instead (the turn waits for a human, not for a model).
	interruptAt time.Duration
	// wantTool is the content of the last tool message, when the turn was
	// waiting for a tool's approval.
	wantTool string
}

func TestInterruptStopsTheTurn(t *testing.T) {
	list := calls(call(todo.ToolWrite, `{"todos":[{"content":"step one","status":"in_progress"},{"content":"step two","status":"pending"}]}`))
	tests := []interruptCase{
		{
			name:   "a model call in flight",
			answer: func(int) model.Response { return list },
			block:  2,
		},
		{
			name: "a compaction's summarising call in flight",
			in:   api.AgentInput{Context: api.ContextConfig{MaxTokens: 8000}},
			answer: func(n int) model.Response {
				return map[bool]model.Response{true: list, false: calls(call("read_file", `{"path":"big"}`))}[n == 1]
			},
			blockSummary: true,
			toolResult:   strings.Repeat("a long file line\n", 4000),
		},
		{
			name: "a tool waiting for its approval",
			in:   api.AgentInput{Approval: map[string]string{"run_command": "required"}},
			answer: func(n int) model.Response {
				return map[bool]model.Response{true: list, false: calls(call("run_command", `{"command":"make"}`))}[n == 1]
			},
			interruptAt: 2 * time.Minute,
			wantTool:    "Not run: the user interrupted the turn before this call was approved.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			var interrupted, reply string
			var interruptErr error
			var sent atomic.Bool   // the interrupt was sent
			var after atomic.Int32 // model calls that started after it
			interrupt := func() {
				sent.Store(true)
				env.UpdateWorkflow(api.InterruptUpdate, "stop", &testsuite.TestUpdateCallback{
					OnReject:   func(err error) { interruptErr = err },
					OnAccept:   func() {},
					OnComplete: func(r any, err error) { interrupted, _ = r.(string); interruptErr = err },
				})
			}
			cancelled := modelCallCancelled(env)
			env.RegisterActivityWithOptions(func(ctx context.Context, in activities.CallModelInput) (model.Response, error) {
				if sent.Load() {
					after.Add(1)
				}
				if (tt.block != 0 && in.Call == tt.block && in.Summarize == nil) || (tt.blockSummary && in.Summarize != nil) {
					interrupt()
					return untilCancelled(cancelled)
				}
				r := tt.answer(in.Call)
				for i := range r.ToolCalls {
					r.ToolCalls[i].ID = "c" + string(rune('0'+in.Call))
				}
				return r, nil
			}, activity.RegisterOptions{Name: api.ModelCallActivity})
			env.RegisterActivityWithOptions(func(_ context.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
				if tt.toolResult != "" {
					return activities.RunToolResult{Content: tt.toolResult}, nil
				}
				return activities.RunToolResult{Content: "ran " + in.Call.Name}, nil
			}, activity.RegisterOptions{Name: api.ToolActivity})
			registerHost(env)
			env.RegisterDelayedCallback(func() {
				env.UpdateWorkflow(api.SendMessageUpdate, "m1", &testsuite.TestUpdateCallback{
					OnReject:   func(err error) { t.Errorf("send rejected: %v", err) },
					OnAccept:   func() {},
					OnComplete: func(r any, err error) { reply, _ = r.(string) },
				}, "do the two steps")
			}, time.Minute)
			if tt.interruptAt != 0 {
				env.RegisterDelayedCallback(interrupt, tt.interruptAt)
			}
			var between api.State
			var msgs []model.Message
			env.RegisterDelayedCallback(func() {
				between = queryState(t, env)
				msgs = queryMessages(t, env)
				env.SignalWorkflow(api.EndSessionSignal, nil)
			}, time.Hour)
			in := tt.in
			in.IdleTimeoutS = 7200
			env.ExecuteWorkflow(AgentWorkflow, in)
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			if interruptErr != nil || interrupted != interruptedReply || reply != interruptedReply {
				t.Fatalf("interrupt answered %q, %v; the turn replied %q", interrupted, interruptErr, reply)
			}
			if tt.block != 0 || tt.blockSummary {
				select {
				case <-cancelled:
				default:
					t.Error("the model call in flight was not cancelled")
				}
			}
			if n := after.Load(); n > 0 {
				t.Errorf("%d model calls started after the interrupt", n)
			}
			if between.Status != api.StatusWaitingUser || len(between.Todos) != 2 || between.Todos[0].Status != todo.InProgress {
				t.Errorf("after the interrupt: status %s, list %+v; want the session waiting, the list as it was", between.Status, between.Todos)
			}
			last := msgs[len(msgs)-1]
			if last.Name != api.NameInterrupted || last.Role != model.RoleAssistant {
				t.Errorf("the transcript ends with %+v, want the interrupted note", last)
			}
			if tt.wantTool != "" {
				tool := msgs[len(msgs)-2]
				if tool.Role != model.RoleTool || tool.Content != tt.wantTool {
					t.Errorf("the waiting call was answered %+v, want %q", tool, tt.wantTool)
				}
			}
		})
	}
}

// modelCallCancelled is closed once a model call is cancelled. The test
// environment does not cancel an activity's context: it tells its
// listener, and the call's attempt ends there.
func modelCallCancelled(env *testsuite.TestWorkflowEnvironment) <-chan struct{} {
	cancelled := make(chan struct{})
	var once sync.Once
	env.SetOnActivityCanceledListener(func(info *activity.Info) {
		if info.ActivityType.Name == api.ModelCallActivity {
			once.Do(func() { close(cancelled) })
		}
	})
	return cancelled
}

// untilCancelled answers a model call that takes its time: it ends when
// the call is cancelled (cancelled is closed), or answers after 20 s.
func untilCancelled(cancelled <-chan struct{}) (model.Response, error) {
	select {
	case <-cancelled:
		return model.Response{}, context.Canceled
	case <-time.After(20 * time.Second):
		return model.Response{Content: "never cancelled"}, nil
	}
}

// An interrupt with no turn running is refused, not kept for the next turn.
func TestInterruptWithoutATurnIsRefused(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	seen := scripted(env, model.Response{Content: "hello"})
	var refused error
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(api.InterruptUpdate, "stop", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { refused = err },
			OnAccept:   func() { t.Error("an interrupt with no turn running was accepted") },
			OnComplete: func(any, error) {},
		})
	}, time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.UserMessageSignal, "hi") }, 2*time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 3*time.Minute)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{IdleTimeoutS: 3600})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if refused == nil || len(*seen) != 1 {
		t.Fatalf("refused: %v; %d model calls, want the next turn to run", refused, len(*seen))
	}
}

// An interrupt while the server waits to retry a failing model call stops
// the turn at once: the activity is cancelled between its attempts, and no
// attempt runs after.
func TestInterruptBetweenAttempts(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	var attempts, late int
	var sent bool
	seen := faulty(env, func(activities.CallModelInput) error {
		attempts++
		if sent {
			late++
		}
		return unavailable()
	}, "")
	var interrupted, reply string
	var interruptErr error
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(api.SendMessageUpdate, "m1", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { t.Errorf("send rejected: %v", err) },
			OnAccept:   func() {},
			OnComplete: func(r any, err error) { reply, _ = r.(string) },
		}, "hello")
	}, time.Minute)
	// The call failed at 1:00, 1:01, 1:03, … 2:03; the next attempt is due
	// at 3:07.
	env.RegisterDelayedCallback(func() {
		sent = true
		env.UpdateWorkflow(api.InterruptUpdate, "stop", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { interruptErr = err },
			OnAccept:   func() {},
			OnComplete: func(r any, err error) { interrupted, _ = r.(string); interruptErr = err },
		})
	}, 2*time.Minute+30*time.Second)
	var after api.State
	env.RegisterDelayedCallback(func() {
		after = queryState(t, env)
		env.SignalWorkflow(api.EndSessionSignal, nil)
	}, time.Hour)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{IdleTimeoutS: 7200})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if interruptErr != nil || interrupted != interruptedReply || reply != interruptedReply {
		t.Fatalf("interrupt answered %q, %v; the turn replied %q", interrupted, interruptErr, reply)
	}
	if attempts != 7 || late != 0 || len(*seen) != attempts {
		t.Errorf("%d attempts, %d after the interrupt; want the 7 before it and none after", attempts, late)
	}
	if after.Status != api.StatusWaitingUser || after.ModelError != nil {
		t.Errorf("after the interrupt: status %s, model_error %+v; want the session waiting, no failed turn", after.Status, after.ModelError)
	}
}
