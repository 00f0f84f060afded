package workflows

// The end of a subagent: cancelled by its parent, timed out, or asked to
// finish when the session ends.

import (
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// cancel_subagent stops a running child; the parent's steps that waited on
// it fail with the reason given; an unknown id is an error tool message.
func TestTreeCancelSubagent(t *testing.T) {
	env := newTreeEnv()
	scriptTree(env, map[string][]model.Response{
		"main": {
			calls(call("createPlan", `{"title":"Main","steps":["start the worker"]}`)),
			calls(call("startPlan", `{}`)),
			calls(spawnCall("worker", "work until main's step_1 is done", quiet)),
			calls(call("addDependentStep", `{"description":"use the worker's result","depends_on":[{"agent_id":"worker","step_id":"step_1"}]}`)),
			calls(call("cancel_subagent", `{"agent_id":"nobody"}`), call("cancel_subagent", `{"agent_id":"worker","reason":"the user changed their mind"}`)),
			// Ten minutes later (the worker has stopped meanwhile).
			calls(call("getBlockedSteps", `{}`)),
			say("step_2 failed, as it should"),
		},
		// The worker waits for ever: on a step of main that main never does.
		"worker": {
			calls(call("createPlan", `{"title":"Work","steps":["work"]}`)),
			calls(call("startPlan", `{}`)),
			calls(call("addDependentStep", `{"step_id":"step_1","depends_on":[{"agent_id":"main","step_id":"step_1"}]}`)),
			say("waiting for main"),
		},
	}, late{"main", 5, time.Hour}, late{"main", 6, 10 * time.Minute})
	var before api.State
	env.RegisterDelayedCallback(func() { before = queryState(t, env) }, 30*time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 2*time.Hour)
	env.ExecuteWorkflow(api.WorkflowName, rootInput("go"))
	completed(t, env)

	if sub := before.Subagents["worker"]; sub.Status != api.StatusBlocked || before.Status != api.StatusRunning {
		t.Fatalf("the script is off: before the cancel, root %s, worker %s", before.Status, sub.Status)
	}
	msgs := queryMessages(t, env)
	if m, ok := toolAnswer(msgs, "main-5-0"); !ok || !m.IsError || !strings.Contains(m.Content, `"nobody"`) || !strings.Contains(m.Content, "worker") {
		t.Errorf("cancel_subagent of an unknown id answered %+v", m)
	}
	if m, ok := toolAnswer(msgs, "main-5-1"); !ok || m.IsError {
		t.Errorf("cancel_subagent of the worker answered %+v", m)
	}
	root := queryState(t, env)
	s := step(t, root.Plan, "step_2")
	if s.Status != todo.StepFailed || !containsAll(s.Error, "worker", "cancelled", "the user changed their mind") {
		t.Errorf("the step that waited on the cancelled worker = %s", dump(s))
	}
	if sub := root.Subagents["worker"]; sub.Status != api.StatusFailed {
		t.Errorf("root's entry for the cancelled worker: %s", sub.Status)
	}
	var told bool
	for _, m := range named(msgs, api.NameTaskEvent) {
		told = told || containsAll(m.Content, "step_failed", "step_2")
	}
	if !told {
		t.Error("the root's model was not told that step_2 failed")
	}
	if got := len(eventsOf(root.Events, "main", todo.EventStepFailed)); got != 1 {
		t.Errorf("%d step_failed events of main", got)
	}
}

// A child that runs longer than subagent_timeout_s is ended, and the
// parent's step that waited on it fails saying so.
//
// The test environment enforces a child's run timeout but not its execution
// timeout (the limit spawn sets, which the server enforces on all its runs):
// the child here runs under a stand-in that ends it, as the server would,
// once the execution timeout its parent gave it has passed.
func TestTreeSubagentTimeout(t *testing.T) {
	var limit time.Duration
	env := newTreeEnv(withExecutionTimeout(&limit))
	scriptTree(env, map[string][]model.Response{
		"main": {
			calls(call("createPlan", `{"title":"Main","steps":["never done"]}`)),
			calls(call("startPlan", `{}`)),
			calls(spawnCall("slow", "wait for main's step_1", quiet)),
			calls(call("addDependentStep", `{"description":"use slow's result","depends_on":[{"agent_id":"slow","step_id":"step_1"}]}`)),
			say("waiting for slow"),
			say("slow timed out"),
		},
		"slow": {
			calls(call("createPlan", `{"title":"Slow","steps":["work"]}`)),
			calls(call("startPlan", `{}`)),
			calls(call("addDependentStep", `{"step_id":"step_1","depends_on":[{"agent_id":"main","step_id":"step_1"}]}`)),
			say("waiting for main"),
		},
	})
	var before, after api.State
	env.RegisterDelayedCallback(func() { before = queryState(t, env) }, 9*time.Minute)
	env.RegisterDelayedCallback(func() { after = queryState(t, env) }, 11*time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 3*time.Hour)
	in := rootInput("go")
	in.SubagentTimeoutS, in.ModelRetryWindowS = 600, 300
	env.ExecuteWorkflow(api.WorkflowName, in)
	completed(t, env)

	if limit != 10*time.Minute {
		t.Errorf("the child's execution timeout = %s, want subagent_timeout_s (10m)", limit)
	}
	root := queryState(t, env)
	s := step(t, root.Plan, "step_2")
	if s.Status != todo.StepFailed || !containsAll(s.Error, "slow", "timed out") {
		t.Errorf("the step that waited on the slow child = %s", dump(s))
	}
	if b, a := step(t, before.Plan, "step_2"), step(t, after.Plan, "step_2"); b.Status != todo.StepBlocked || a.Status != todo.StepFailed {
		t.Errorf("step_2 at 9 min %s, at 11 min %s: want blocked, then failed at the 10-minute limit", b.Status, a.Status)
	}
	if res := root.Subagents["slow"]; res.Status != api.StatusFailed {
		t.Errorf("root's entry for the slow child: %s", res.Status)
	}
}

// end_session while a child waits for ever (on a parent step that will never
// complete): the child is cancelled after subagent_grace_s and the root
// completes; a child still making model calls hears that the session ends.
func TestTreeEndSessionGrace(t *testing.T) {
	env := newTreeEnv()
	list := calls(call("list_files", `{}`))
	scriptTree(env, map[string][]model.Response{
		"main": {
			calls(call("createPlan", `{"title":"Main","steps":["never done"]}`)),
			calls(call("startPlan", `{}`)),
			calls(spawnCall("stuck", "wait for main's step_1", quiet), spawnCall("busy", "list files twice", quiet)),
			say("spawned"),
		},
		"stuck": {
			calls(call("createPlan", `{"title":"Stuck","steps":["work"]}`)),
			calls(call("startPlan", `{}`)),
			calls(call("addDependentStep", `{"step_id":"step_1","depends_on":[{"agent_id":"main","step_id":"step_1"}]}`)),
			say("waiting for main"),
		},
		"busy": {list, list, say("finished in time")},
	}, late{"busy", 1, 50 * time.Minute}, late{"busy", 2, 50 * time.Minute})
	start := env.Now()
	var during api.State
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, time.Hour)
	env.RegisterDelayedCallback(func() { during = queryState(t, env) }, 90*time.Minute)
	in := rootInput("go")
	in.SubagentGraceS = 3600
	env.ExecuteWorkflow(api.WorkflowName, in)
	completed(t, env)

	took := env.Now().Sub(start)
	if took < 2*time.Hour || took > 2*time.Hour+5*time.Minute {
		t.Errorf("the root completed %s after the start; want just after end_session (1h) + subagent_grace_s (1h)", took)
	}
	if during.Status != api.StatusBlocked || during.Subagents["stuck"].Status != api.StatusBlocked {
		t.Errorf("during the grace: root %s, stuck %s", during.Status, during.Subagents["stuck"].Status)
	}
	root := queryState(t, env)
	if root.Status != api.StatusCompleted || root.Subagents["stuck"].Status != api.StatusFailed || root.Subagents["busy"].Status != api.StatusCompleted {
		t.Errorf("at the end: root %s, stuck %s, busy %s", root.Status, root.Subagents["stuck"].Status, root.Subagents["busy"].Status)
	}
	var noted bool
	for _, m := range named(messagesOf(t, env, childWF("busy")), api.NameTaskEvent) {
		noted = noted || containsAll(m.Content, "session", "is ending", "3600 seconds")
	}
	if !noted {
		t.Error("busy's model was not told that the session is ending")
	}
	var res api.AgentResult
	if err := env.GetWorkflowResult(&res); err != nil || res.State == nil || res.State.Subagents["stuck"].Status != api.StatusFailed {
		t.Errorf("the root's result: %v, %+v", err, res.State)
	}
}

// end_session stops a root that waits, inside its turn, on a subagent
// that waits on the root: the turn ends, and the subagent is cancelled
// after subagent_grace_s.
func TestTreeEndSessionBreaksAWaitOnAChild(t *testing.T) {
	env := newTreeEnv()
	scriptTree(env, map[string][]model.Response{
		"main": {
			calls(call("createPlan", `{"title":"P","steps":["one","two"]}`)),
			calls(call("startPlan", `{}`)),
			calls(spawnCall("kid", "wait for main", quiet)),
			calls(call("addDependentStep", `{"description":"use kid's output","depends_on":[{"agent_id":"kid","step_id":"step_2"}]}`)),
			say("waiting for kid"),
			say("stopped"),
		},
		"kid": {
			calls(call("createPlan", `{"title":"K","steps":["one"]}`)),
			calls(call("startPlan", `{}`)),
			calls(call("addDependentStep", `{"description":"needs main","depends_on":[{"agent_id":"main","step_id":"step_2"}]}`)),
			say("waiting for main"),
		},
	})
	in := rootInput("go")
	in.SubagentGraceS = 30
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, time.Hour)
	env.ExecuteWorkflow(api.WorkflowName, in)
	completed(t, env)
	st := queryState(t, env)
	if kid := st.Subagents["kid"]; kid.Status != api.StatusFailed {
		t.Errorf("kid = %s, want failed (cancelled)", kid.Status)
	}
	if s := st.Plan.Steps[2]; s.Status != "failed" || !strings.Contains(s.Error, "subagent_grace_s") {
		t.Errorf("root's step on kid = %s %q, want failed naming subagent_grace_s", s.Status, s.Error)
	}
}

// A subagent's limit is never shorter than the model retry window: an
// outage that the model calls wait out (24 hours by default) must not end
// every subagent after subagent_timeout_s (one hour by default).
func TestSubagentTimeoutCoversTheRetryWindow(t *testing.T) {
	tests := []struct {
		timeout, window int
		want            time.Duration
	}{
		{0, 0, api.DefaultModelRetryWindow},
		{600, 300, 10 * time.Minute},
		{600, 7200, 2 * time.Hour},
	}
	for _, tt := range tests {
		c, err := resolve(api.AgentInput{SubagentTimeoutS: tt.timeout, ModelRetryWindowS: tt.window})
		if err != nil || c.SubagentTimeout != tt.want {
			t.Errorf("subagent_timeout_s %d, model_retry_window_s %d: limit %s, %v; want %s", tt.timeout, tt.window, c.SubagentTimeout, err, tt.want)
		}
	}
}

// A subagent whose tree_end came before its future resolved has ended: the
// page, the state and the carry say so, and so does the page of the run
// that hands over then and of the run after it (its end was dropped from
// the briefs at the root, and the page said running).
func TestEndedChildNeverShownRunning(t *testing.T) {
	final := api.State{AgentID: "kid", Status: api.StatusCompleted, Turns: 1, ModelCalls: 2, Todos: []todo.Item{{ID: "1", Content: "a", Status: todo.Completed}}}
	tests := []struct {
		name string
		end  End
		want string
	}{
		{"with its summary", End{AgentID: "kid", How: api.StatusCompleted, Final: &final, Reply: "done"}, api.StatusCompleted},
		{"with no summary, its last brief said running", End{AgentID: "kid", How: api.StatusCompleted}, api.StatusCompleted},
		{"failed", End{AgentID: "kid", How: "failed: boom", Final: &final}, api.StatusFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := resolve(api.AgentInput{Prompt: "go"})
			if err != nil {
				t.Fatal(err)
			}
			a := newAgent(cfg)
			end := tt.end
			a.tree.children["kid"] = &child{AgentID: "kid", WorkflowID: "wf/kid", cancel: func() {}, end: &end}
			a.tree.childOrder = []string{"kid"}
			if tt.end.Final == nil {
				a.tree.briefs["kid"] = &api.Brief{Status: api.StatusRunning}
			}
			line := "subagent **kid**: " + tt.want
			if d := a.details(); !strings.Contains(d, line) {
				t.Errorf("the page, its future unresolved:\n%s\nwant %q", d, line)
			}
			if st := a.state().Subagents["kid"]; st.Status != tt.want {
				t.Errorf("state.subagents.kid.status = %q, want %q", st.Status, tt.want)
			}
			a.status = api.StatusContinued // the handover publishes, then carries
			if d := a.details(); !strings.Contains(d, line) {
				t.Errorf("the page the handover leaves:\n%s\nwant %q", d, line)
			}
			c := a.carryTree()
			if len(c.Running) != 0 || c.Subagents["kid"].Status != tt.want {
				t.Fatalf("carried running %v, subagents %s; want kid ended", c.Running, dump(c.Subagents))
			}
			next := newAgent(cfg)
			next.tree = newTree(&Carry{Tree: c})
			if d := next.details(); !strings.Contains(d, line) {
				t.Errorf("the page of the run after the handover:\n%s\nwant %q", d, line)
			}
		})
	}
}
