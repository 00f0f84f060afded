package workflows

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// A resume that reaches the root in the same workflow task as the brief in
// which its subagent paused is handed on, not dropped. Both come in one task
// when the task that took in the brief is lost and run again (the server
// was killed before it stored the task's completion, while the player had
// already seen the pause, from the worker's cache, and answered it): taken
// in the resume first, the root found no wait, dropped the resume, and then
// showed the pause for good. The load test (TestFaultsUnderLoad) found it.
func TestTreeResumeInTheTaskOfThePause(t *testing.T) {
	env := newTreeEnv()
	scriptTree(env, map[string][]model.Response{
		"main": {calls(spawnCall("kid", "deploy", quiet)), say("kid deploys")},
		"kid":  {say("deployed")}, // answered two hours in
	}, late{"kid", 1, 2 * time.Hour})
	// The kid's brief of its pause, as it sends it, and the human's resume,
	// in one workflow task.
	pause := Wait{AgentID: "kid", Kind: WaitPaused, Reason: "The deploy key is missing."}
	brief := TaskEvent{From: "kid", Brief: &Brief{Status: StatusPaused, Paused: true, PauseReason: pause.Reason, Waiting: []Wait{pause}}}
	var after State
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflowSkippingWorkflowTask(TaskEventSignal, brief)
		env.SignalWorkflow(ResumeSignal, "the key is in place")
	}, 30*time.Minute)
	env.RegisterDelayedCallback(func() { after = queryState(t, env) }, time.Hour)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(EndSessionSignal, nil) }, 3*time.Hour)
	env.ExecuteWorkflow(WorkflowName, rootInput("go"))
	completed(t, env)

	if after.Status == StatusPaused || len(after.Waiting) != 0 {
		t.Errorf("after the resume: status %s, waiting %s; want the kid's pause answered", after.Status, dump(after.Waiting))
	}
}

// An end notice that overtakes the events its keeper forwarded before it
// (Temporal orders one sender's signals only signal by signal) waits for
// them: the step that depends on the ended agent takes the output it did
// deliver, instead of failing as never completed. The load test found a
// consumer of 06c failed so ("agent producer ended (completed) without
// completing producer:step_1") with the producer's events right behind.
func TestTreeEndNoticeWaitsForTheEventsBeforeIt(t *testing.T) {
	env := newTreeEnv()
	scriptTree(env, map[string][]model.Response{
		// The root's turn runs for three hours, so that the want for
		// prod, an agent it may still spawn, stays pending: the keeper's
		// answers below are the test's.
		"main": {calls(spawnCall("cons", "consume", quiet)), say("cons works")},
		"cons": {
			calls(call("createPlan", `{"title":"Consume","steps":["prepare"]}`)),
			calls(call("startPlan", `{}`)),
			calls(call("addDependentStep", `{"description":"import prod's rows","depends_on":[{"agent_id":"prod","step_id":"step_1"}]}`)),
			calls(call("setStepStatus", `{"step_id":"step_1","status":"completed","result":"ready"}`)),
			say("waiting for prod"),
			calls(call("setStepStatus", `{"step_id":"step_2","status":"completed","result":"imported 42 rows"}`)),
			calls(call("completePlan", `{"status":"completed"}`)),
			say("cons done"),
		},
	}, late{"main", 2, 3 * time.Hour})
	completedStep := todo.Event{EventID: 3, Type: todo.EventStepCompleted, AgentID: "prod", PlanID: "plan_1", StepID: "step_1",
		Data: json.RawMessage(`{"description":"produce","output":{"rows":42},"result":"42 rows"}`)}
	send := func(te TaskEvent) {
		if err := env.SignalWorkflowByID(childWF("cons"), TaskEventSignal, te); err != nil {
			t.Error(err)
		}
	}
	// The keeper's end notice (it had sent one event of prod) comes first,
	// its answer to the want (the binding and that event) second.
	env.RegisterDelayedCallback(func() {
		send(TaskEvent{From: "main", Ended: &AgentEnd{AgentID: "prod", How: "completed", Sent: 1}})
	}, time.Hour)
	var held State
	env.RegisterDelayedCallback(func() { held = stateOf(t, env, childWF("cons")) }, time.Hour+30*time.Second)
	env.RegisterDelayedCallback(func() {
		send(TaskEvent{From: "main", Bind: &Binding{Of: "prod", Plan: "plan_1"}, Backlog: []todo.Event{completedStep}})
	}, time.Hour+time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(EndSessionSignal, nil) }, 4*time.Hour)
	env.ExecuteWorkflow(WorkflowName, rootInput("go"))
	completed(t, env)

	if s := step(t, held.Plan, "step_2"); s.Status != todo.StepBlocked {
		t.Errorf("with the end notice in and prod's event not yet: step_2 = %s, want still blocked", dump(s))
	}
	end := queryState(t, env).Subagents["cons"]
	s := step(t, end.Plan, "step_2")
	if s.Status != todo.StepCompleted || string(s.ReceivedOutputs["prod:step_1"]) != `{"rows":42}` {
		t.Errorf("cons step_2 at the end = %s; want completed with prod's output", dump(s))
	}
}

// A subagent's signals are taken in in the order it sent them: one that
// comes before a signal it follows waits for it. Taken in as they came, an
// older brief would undo the pause a newer one showed (the pause would go
// unseen for good), and the subagent's events would stand in another order
// in its parent's log (the load test saw step_blocked before step_added,
// both sent in one workflow task).
func TestTreeChildSignalsInOrder(t *testing.T) {
	env := newTreeEnv()
	scriptTree(env, map[string][]model.Response{
		"main": {calls(spawnCall("kid", "deploy", quiet)), say("kid deploys")},
		"kid":  {say("deployed")}, // answered two hours in
	}, late{"kid", 1, 2 * time.Hour})
	pause := Wait{AgentID: "kid", Kind: WaitPaused, Reason: "The deploy key is missing."}
	event := func(id int, typ string) *todo.Event {
		return &todo.Event{EventID: id, Type: typ, AgentID: "kid", PlanID: "plan_1", Data: json.RawMessage(`{"title":"Deploy"}`)}
	}
	var sent int // the kid's own signals so far
	var between, after State
	env.RegisterDelayedCallback(func() {
		sent = queryState(t, env).Subagents["kid"].Live.Seq
		// The later signal first: the plan started, and the pause.
		env.SignalWorkflow(TaskEventSignal, TaskEvent{From: "kid", Event: event(2, todo.EventPlanStarted),
			Brief: &Brief{Status: StatusPaused, Paused: true, PauseReason: pause.Reason, Waiting: []Wait{pause}, Seq: sent + 2}})
	}, 30*time.Minute)
	env.RegisterDelayedCallback(func() { between = queryState(t, env) }, 31*time.Minute)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(TaskEventSignal, TaskEvent{From: "kid", Event: event(1, todo.EventPlanCreated),
			Brief: &Brief{Status: StatusRunning, Seq: sent + 1}})
	}, 32*time.Minute)
	env.RegisterDelayedCallback(func() { after = queryState(t, env) }, time.Hour)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(EndSessionSignal, nil) }, 3*time.Hour)
	env.ExecuteWorkflow(WorkflowName, rootInput("go"))
	completed(t, env)

	if sent == 0 {
		t.Fatal("the kid's signals are not numbered")
	}
	if n := len(eventsOf(between.Events, "kid", "")); n != 0 || between.Status == StatusPaused {
		t.Errorf("with only the later signal in: %d of the kid's events taken in, status %s; want it kept for its turn", n, between.Status)
	}
	var types []string
	for _, ev := range eventsOf(after.Events, "kid", "") {
		types = append(types, ev.Type)
	}
	if !slices.Equal(types, []string{todo.EventPlanCreated, todo.EventPlanStarted}) {
		t.Errorf("the kid's events in the root's log: %v; want plan_created, plan_started", types)
	}
	if after.Status != StatusPaused || len(after.Waiting) != 1 || after.Waiting[0] != pause {
		t.Errorf("after both signals: status %s, waiting %s; want the later signal's pause", after.Status, dump(after.Waiting))
	}
}
