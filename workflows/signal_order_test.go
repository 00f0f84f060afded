package workflows

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"github.com/stretchr/testify/mock"
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
	pause := api.Wait{AgentID: "kid", Kind: api.WaitPaused, Reason: "The deploy key is missing."}
	brief := Events{Of: "kid", Brief: &api.Brief{Status: api.StatusPaused, Paused: true, PauseReason: pause.Reason, Waiting: []api.Wait{pause}}}
	var after api.State
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflowSkippingWorkflowTask(api.TaskEventSignal, brief)
		env.SignalWorkflow(api.ResumeSignal, "the key is in place")
	}, 30*time.Minute)
	env.RegisterDelayedCallback(func() { after = queryState(t, env) }, time.Hour)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 3*time.Hour)
	env.ExecuteWorkflow(api.WorkflowName, rootInput("go"))
	completed(t, env)

	if after.Status == api.StatusPaused || len(after.Waiting) != 0 {
		t.Errorf("after the resume: status %s, waiting %s; want the kid's pause answered", after.Status, dump(after.Waiting))
	}
}

// An agent's last events and its end reach the root in one workflow task,
// the end first (across signal names, Temporal keeps no order within a
// task): the root takes the events in first, so that the step that
// depends on the agent takes the output it did deliver, instead of failing
// as never completed. The load test once found a consumer of 06c failed so
// ("agent producer ended (completed) without completing producer:step_1").
func TestTreeEventsBeforeTheEndInOneTask(t *testing.T) {
	env := newTreeEnv()
	scriptTree(env, map[string][]model.Response{
		"main": {
			calls(call("createPlan", `{"title":"Consume","steps":["prepare"]}`)),
			calls(call("startPlan", `{}`)),
			calls(call("addDependentStep", `{"description":"import prod's rows","depends_on":[{"agent_id":"prod","step_id":"step_1"}]}`)),
			calls(call("setStepStatus", `{"step_id":"step_1","status":"completed","result":"ready"}`)),
			say("prod delivered"),
		},
		// The root's turn runs meanwhile: prod, not in the tree yet, may
		// still be spawned.
	}, late{"main", 5, 2 * time.Hour})
	completedStep := todo.Event{EventID: 3, Type: todo.EventStepCompleted, AgentID: "prod", PlanID: "plan_1", StepID: "step_1",
		Data: json.RawMessage(`{"description":"produce","output":{"rows":42},"result":"42 rows"}`)}
	// prod, as if spawned by another agent, joins; an hour later its last
	// event and its end come in one task, the end first.
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(JoinSignal, Join{Member: todo.Member{AgentID: "prod", WorkflowID: childWF("prod"), Parent: childWF("lead")}, Key: testTreeKey})
	}, 10*time.Minute)
	var joined api.State
	env.RegisterDelayedCallback(func() { joined = queryState(t, env) }, 20*time.Minute)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflowSkippingWorkflowTask(EndSignal, End{AgentID: "prod", How: api.StatusCompleted, Key: testTreeKey})
		env.SignalWorkflow(api.TaskEventSignal, Events{Of: "prod", Events: []todo.Event{completedStep}, Key: testTreeKey})
	}, time.Hour)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 4*time.Hour)
	// prod's parent, below the root, is told of its end: a parent that
	// adopted prod from an earlier run has no future to learn it from.
	var toldLead []End
	env.OnSignalExternalWorkflow(mock.Anything, childWF("lead"), "", EndSignal, mock.Anything).Return(
		func(_, _, _, _ string, e any) error { toldLead = append(toldLead, e.(End)); return nil })
	keyedRoot(env, "go")
	completed(t, env)
	if len(toldLead) != 1 || toldLead[0].AgentID != "prod" {
		t.Errorf("prod's parent was told %v, want prod's end once", toldLead)
	}

	if s := step(t, joined.Plan, "step_2"); s.Status != todo.StepBlocked || s.BoundPlans == nil {
		t.Errorf("once prod joined: step_2 = %s, want blocked and bound", dump(s))
	}
	s := step(t, queryState(t, env).Plan, "step_2")
	if s.Status != todo.StepPending || string(s.ReceivedOutputs["prod:step_1"]) != `{"rows":42}` {
		t.Errorf("step_2 at the end = %s; want unblocked with prod's output", dump(s))
	}
}

// A sender keeps its order: it signals a destination only once the
// previous signal to it was delivered, and an agent's events stand in the
// root's log in the order it emitted them (step_blocked never before
// step_added, as the load test once saw with both sent in one task).
func TestTreeSenderKeepsItsOrder(t *testing.T) {
	env := newTreeEnv()
	work := []model.Response{
		calls(call("createPlan", `{"title":"Kid","steps":["one","two","three"]}`)),
		calls(call("startPlan", `{}`)),
		calls(call("setStepStatus", `{"step_id":"step_1","status":"completed","result":"did one"}`),
			call("setStepStatus", `{"step_id":"step_2","status":"completed","result":"did two"}`)),
		calls(call("addDependentStep", `{"description":"use kid2's","depends_on":[{"agent_id":"kid2","step_id":"step_1"}]}`)),
		calls(call("setStepStatus", `{"step_id":"step_3","status":"completed","result":"did three"}`)),
		say("kid done"),
	}
	scriptTree(env, map[string][]model.Response{
		"main": {calls(spawnCall("kid", "work", quiet), spawnCall("kid2", "follow kid", quiet)), say("spawned")},
		"kid":  work,
		"kid2": {
			calls(call("subscribeToTasks", `{"agent_id":"kid","event_types":["step_completed","step_added","step_blocked","step_started"]}`)),
			calls(call("createPlan", `{"title":"Kid2","steps":["one"]}`)),
			calls(call("startPlan", `{}`)),
			calls(call("setStepStatus", `{"step_id":"step_1","status":"completed","result":"did one"}`)),
			say("kid2 done"),
		},
		// kid2 still runs while kid works.
	}, late{"kid", 1, time.Minute}, late{"kid2", 5, 30 * time.Minute})
	sc := countSignals(env)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, time.Hour)
	env.ExecuteWorkflow(api.WorkflowName, rootInput("go"))
	completed(t, env)

	sc.check(t)
	var own, atRoot, heard []string
	for _, ev := range eventsOf(stateOf(t, env, childWF("kid")).Events, "kid", "") {
		own = append(own, ev.Type)
	}
	for _, ev := range eventsOf(queryState(t, env).Events, "kid", "") {
		atRoot = append(atRoot, ev.Type)
	}
	for _, ev := range eventsOf(stateOf(t, env, childWF("kid2")).Events, "kid", "") {
		heard = append(heard, ev.Type)
	}
	if len(own) < 8 || !slices.Equal(own, atRoot) {
		t.Errorf("kid's events: its own log %v, the root's %v", own, atRoot)
	}
	want := slices.DeleteFunc(slices.Clone(own), func(typ string) bool {
		return !slices.Contains([]string{todo.EventStepCompleted, todo.EventStepAdded, todo.EventStepBlocked, todo.EventStepStarted}, typ)
	})
	if !slices.Equal(heard, want) {
		t.Errorf("kid2 heard %v of kid, want %v", heard, want)
	}
}

// An agent that unsubscribes hears no more of what it had subscribed to:
// the root, which forwards the tree's events, is told and stops.
func TestUnsubscribeStopsTheForwarding(t *testing.T) {
	env := newTreeEnv()
	scriptTree(env, map[string][]model.Response{
		"main": {calls(spawnCall("kid", "work", quiet), spawnCall("kid2", "watch kid, then not", quiet)), say("spawned")},
		"kid": {
			calls(call("createPlan", `{"title":"Kid","steps":["one","two"]}`)),
			calls(call("startPlan", `{}`)),
			calls(call("setStepStatus", `{"step_id":"step_1","status":"completed","result":"did one"}`),
				call("setStepStatus", `{"step_id":"step_2","status":"completed","result":"did two"}`)),
			say("kid done"),
		},
		"kid2": {
			calls(call("subscribeToTasks", `{"agent_id":"kid","event_types":["step_completed"]}`)),
			calls(call("unsubscribe", `{"subscription_id":"sub_1"}`)),
			say("kid2 done"),
		},
		// kid2 still runs, unsubscribed, while kid works.
	}, late{"kid", 1, time.Minute}, late{"kid2", 3, 30 * time.Minute})
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, time.Hour)
	env.ExecuteWorkflow(api.WorkflowName, rootInput("go"))
	completed(t, env)

	if done := eventsOf(stateOf(t, env, childWF("kid")).Events, "kid", todo.EventStepCompleted); len(done) != 2 {
		t.Fatalf("kid completed %d steps, want 2", len(done))
	}
	if heard := eventsOf(stateOf(t, env, childWF("kid2")).Events, "kid", ""); len(heard) != 0 {
		t.Errorf("kid2 heard %d events of kid after it unsubscribed: %s", len(heard), dump(heard))
	}
}
