package workflows

import (
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/model"
)

// A session's idle timeout counts from the start of its last wait for the
// user, whether the run takes patchLeanTurn or replays a run that did not;
// the patch starts one timer per timeout of activity, not one per turn.
func TestIdleTimerMoves(t *testing.T) {
	const idle = 10 * time.Minute
	sent := []time.Duration{time.Minute, 2 * time.Minute, 3 * time.Minute}
	tests := []struct {
		name   string
		lean   bool
		timers int
	}{
		// One per wait: at the start and after each of the three turns.
		{"before the patch", false, 4},
		// The first, due at 10 min, then one for what is left of the
		// deadline its turns moved (3 min + 10 min).
		{"with the patch", true, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			var replies []model.Response
			for range sent {
				replies = append(replies, model.Response{Content: "ok"})
			}
			scripted(env, replies...)
			if !tt.lean {
				env.OnGetVersion(patchLeanTurn, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
			}
			timers := 0
			env.SetOnTimerScheduledListener(func(string, time.Duration) { timers++ })
			start := env.Now()
			for i, at := range sent {
				env.RegisterDelayedCallback(func() {
					env.SignalWorkflow(api.UserMessageSignal, "message "+string(rune('1'+i)))
				}, at)
			}
			env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{IdleTimeoutS: int(idle / time.Second)})
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			if st := queryState(t, env); st.Turns != len(sent) {
				t.Errorf("%d turns, want %d", st.Turns, len(sent))
			}
			// The scripted turns take no time: the last wait began at the
			// last message.
			if took, want := env.Now().Sub(start), sent[len(sent)-1]+idle; took != want {
				t.Errorf("the session idled out after %v, want %v", took, want)
			}
			if timers != tt.timers {
				t.Errorf("%d timers started, want %d", timers, tt.timers)
			}
		})
	}
}

// A session cancelled while it waits for its user ends cancelled, whether
// the cancel comes before or after its moving timer first fired.
func TestIdleWaitEndsOnCancel(t *testing.T) {
	for _, at := range []time.Duration{time.Minute, 12 * time.Minute} {
		t.Run(at.String(), func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			scripted(env, model.Response{Content: "ok"})
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.UserMessageSignal, "hello") }, 5*time.Minute)
			env.RegisterDelayedCallback(env.CancelWorkflow, at)
			env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{IdleTimeoutS: 600})
			if err := env.GetWorkflowError(); !temporal.IsCanceledError(err) {
				t.Fatalf("ended with %v, want cancelled", err)
			}
		})
	}
}
