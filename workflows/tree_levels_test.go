package workflows

import (
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/temporal"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// Trees of three levels: main (the root) spawns lead, which spawns the
// grandchildren. Every message goes through the root, so a grandchild's
// dependency on its grandparent or on its sibling takes the same path as a
// child's on its parent.

// A grandchild's step waits on its grandparent's step and unblocks, with
// its output, when the grandparent completes it an hour later; the lead in
// between hears nothing.
func TestTreeGrandchildWaitsOnGrandparent(t *testing.T) {
	env := newTreeEnv()
	scriptTree(env, map[string][]model.Response{
		"main": {
			calls(call("createPlan", `{"title":"Root","steps":["decide"]}`)),
			calls(call("startPlan", `{}`)),
			calls(spawnCall("lead", "get it built", quiet)),
			say("lead is on it"),
			// The user's next message, an hour later.
			calls(call("completeStepWithOutput", `{"step_id":"step_1","output":{"target":"arm64"},"result":"decided"}`)),
			say("decided"),
		},
		"lead": {calls(spawnCall("gc", "build for main's target", quiet)), say("gc builds it")},
		"gc": {
			calls(call("createPlan", `{"title":"Build","steps":["build"]}`)),
			calls(call("startPlan", `{}`)),
			calls(call("addDependentStep", `{"step_id":"step_1","depends_on":[{"agent_id":"main","step_id":"step_1"}]}`)),
			say("waiting for main"),
			calls(call("setStepStatus", `{"step_id":"step_1","status":"completed","result":"built for arm64"}`)),
			calls(call("completePlan", `{"status":"completed"}`)),
			say("built"),
		},
	})
	sc := countSignals(env)
	var waiting api.State
	env.RegisterDelayedCallback(func() {
		waiting = stateOf(t, env, childWF("lead/gc"))
		env.SignalWorkflow(api.UserMessageSignal, "the target is arm64")
	}, time.Hour)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 2*time.Hour)
	env.ExecuteWorkflow(api.WorkflowName, rootInput("go"))
	completed(t, env)

	if s := step(t, waiting.Plan, "step_1"); s.Status != todo.StepBlocked || waiting.Status != api.StatusBlocked {
		t.Errorf("before main's step: gc %s, step_1 %s", waiting.Status, s.Status)
	}
	gc := stateOf(t, env, childWF("lead/gc"))
	if s := step(t, gc.Plan, "step_1"); s.Status != todo.StepCompleted || string(s.ReceivedOutputs["main:step_1"]) != `{"target":"arm64"}` {
		t.Errorf("gc's step_1 = %s", dump(s))
	}
	var told bool
	for _, m := range named(messagesOf(t, env, childWF("lead/gc")), api.NameTaskEvent) {
		told = told || strings.Contains(m.Content, todo.EventStepUnblocked)
	}
	if !told {
		t.Error("gc's model was not told that its step unblocked")
	}
	if lead := stateOf(t, env, childWF("lead")); len(lead.Events) != 0 || lead.Subagents["gc"].Status != api.StatusCompleted {
		t.Errorf("lead: events %s, gc %s", dump(lead.Events), lead.Subagents["gc"].Status)
	}
	if len(eventsOf(queryState(t, env).Events, "gc", todo.EventStepCompleted)) != 1 {
		t.Error("the root's log lacks gc's step_completed")
	}
	sc.check(t)
}

// A grandchild waits on its sibling's step; the sibling completes it half
// an hour later. The counters of both reach the lead, which shows them. The
// binding is to w2's plan as the root knows it when w1 asks: plan_1, or
// every plan ("") when w2 has none yet.
func TestTreeGrandchildWaitsOnSibling(t *testing.T) {
	env := newTreeEnv()
	scriptTree(env, map[string][]model.Response{
		"main": {calls(spawnCall("lead", "split the work", quiet)), say("lead splits it")},
		"lead": {calls(spawnCall("w1", "use w2's rows", quiet), spawnCall("w2", "make rows", quiet)), say("w1 and w2 work")},
		"w1": {
			calls(call("createPlan", `{"title":"Use","steps":["import"]}`)),
			calls(call("startPlan", `{}`)),
			calls(call("addDependentStep", `{"step_id":"step_1","depends_on":[{"agent_id":"w2","step_id":"step_1"}]}`)),
			say("waiting for w2"),
			calls(call("setStepStatus", `{"step_id":"step_1","status":"completed","result":"imported 7 rows"}`)),
			calls(call("completePlan", `{"status":"completed"}`)),
			say("w1 done"),
		},
		"w2": {
			calls(call("createPlan", `{"title":"Make","steps":["rows"]}`)),
			calls(call("startPlan", `{}`)),
			calls(call("completeStepWithOutput", `{"step_id":"step_1","output":{"rows":7},"result":"7 rows"}`)),
			calls(call("completePlan", `{"status":"completed"}`)),
			say("w2 done"),
		},
	}, late{"w2", 3, 30 * time.Minute})
	sc := countSignals(env)
	var during api.State
	env.RegisterDelayedCallback(func() { during = stateOf(t, env, childWF("lead")) }, 15*time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, time.Hour)
	env.ExecuteWorkflow(api.WorkflowName, rootInput("go"))
	completed(t, env)

	w1 := stateOf(t, env, childWF("lead/w1"))
	if s := step(t, w1.Plan, "step_1"); s.Status != todo.StepCompleted || string(s.ReceivedOutputs["w2:step_1"]) != `{"rows":7}` || !slicesContains([]string{"", "plan_1"}, s.BoundPlans["w2"]) {
		t.Errorf("w1's step_1 = %s", dump(s))
	}
	if live := during.Subagents["w1"].Live; live == nil || during.Subagents["w1"].Status != api.StatusBlocked || live.PlanID != "plan_1" {
		t.Errorf("the lead's entry for the waiting w1 = %s", dump(during.Subagents["w1"]))
	}
	if len(eventsOf(stateOf(t, env, childWF("lead")).Events, "", "")) != 0 {
		t.Error("the lead received events it did not ask for")
	}
	sc.check(t)
}

// The lead cancels a grandchild that waits on the root: the lead's step
// that waited on the grandchild fails with the reason, the grandchild's
// interest in the root's events leaves the table, and the root's step,
// completed later, is signalled to no one.
func TestTreeCancelMidWait(t *testing.T) {
	env := newTreeEnv()
	scriptTree(env, map[string][]model.Response{
		"main": {
			calls(call("createPlan", `{"title":"Root","steps":["decide"]}`)),
			calls(call("startPlan", `{}`)),
			calls(spawnCall("lead", "get it built", quiet)),
			say("lead is on it"),
			calls(call("setStepStatus", `{"step_id":"step_1","status":"completed","result":"decided"}`)), // 2 hours in
			say("decided"),
		},
		"lead": {
			calls(call("createPlan", `{"title":"Lead","steps":["ship gc's build"]}`)),
			calls(call("startPlan", `{}`)),
			calls(spawnCall("gc", "build once main decides", quiet)),
			calls(call("addDependentStep", `{"step_id":"step_1","depends_on":[{"agent_id":"gc","step_id":"step_1"}]}`)),
			calls(call("cancel_subagent", `{"agent_id":"gc","reason":"the build moved elsewhere"}`)), // an hour in
			say("gc cancelled"),
		},
		"gc": {
			calls(call("createPlan", `{"title":"Build","steps":["build"]}`)),
			calls(call("startPlan", `{}`)),
			calls(call("addDependentStep", `{"step_id":"step_1","depends_on":[{"agent_id":"main","step_id":"step_1"}]}`)),
			say("waiting for main"),
		},
	}, late{"lead", 5, time.Hour})
	sc := countSignals(env)
	var before api.State
	env.RegisterDelayedCallback(func() { before = stateOf(t, env, childWF("lead/gc")) }, 30*time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.UserMessageSignal, "decide now") }, 2*time.Hour)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 3*time.Hour)
	env.ExecuteWorkflow(api.WorkflowName, rootInput("go"))
	completed(t, env)

	if before.Status != api.StatusBlocked {
		t.Fatalf("the script is off: gc %s before the cancel", before.Status)
	}
	lead := stateOf(t, env, childWF("lead"))
	if s := step(t, lead.Plan, "step_1"); s.Status != todo.StepFailed || !containsAll(s.Error, "gc", "cancelled", "the build moved elsewhere") {
		t.Errorf("the lead's step on the cancelled gc = %s", dump(s))
	}
	root := queryState(t, env)
	if s := step(t, root.Plan, "step_1"); s.Status != todo.StepCompleted {
		t.Fatalf("the script is off: the root's step_1 %s", s.Status)
	}
	sc.check(t)
}

// A grandchild whose run fails sends no end: its parent's future is the
// backstop. The root's step that waited on it fails saying how it ended,
// and the events it did send are in the root's log.
func TestTreeGrandchildDiesWithoutItsEnd(t *testing.T) {
	env := newTreeEnv()
	tm := scriptTree(env, map[string][]model.Response{
		"main": {
			calls(call("createPlan", `{"title":"Root","steps":["ship"]}`)),
			calls(call("startPlan", `{}`)),
			calls(spawnCall("lead", "get it built", quiet)),
			calls(call("addDependentStep", `{"description":"ship the build","depends_on":[{"agent_id":"gc","step_id":"step_1"}]}`)),
			calls(call("setStepStatus", `{"step_id":"step_1","status":"completed","result":"delegated"}`)),
			say("waiting for gc"),
			say("gc failed"),
		},
		"lead": {calls(spawnCall("gc", "build", quiet)), say("gc builds it")},
		"gc": {
			calls(call("createPlan", `{"title":"Build","steps":["build"]}`)),
			calls(call("startPlan", `{}`)),
		},
	})
	tm.fail = func(in activities.CallModelInput) error {
		if in.AgentID == "gc" && in.Call == 3 {
			return temporal.NewNonRetryableApplicationError(`model "x": unknown`, activities.ErrTypeModelConfig, nil)
		}
		return nil
	}
	sc := countSignals(env)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, time.Hour)
	env.ExecuteWorkflow(api.WorkflowName, rootInput("go"))
	completed(t, env)

	root := queryState(t, env)
	if s := step(t, root.Plan, "step_2"); s.Status != todo.StepFailed || !containsAll(s.Error, "gc", "failed", "unknown") {
		t.Errorf("the root's step on the failed gc = %s", dump(s))
	}
	if len(eventsOf(root.Events, "gc", todo.EventPlanStarted)) != 1 {
		t.Errorf("the root's log lacks gc's plan_started: %s", dump(eventsOf(root.Events, "gc", "")))
	}
	if st := stateOf(t, env, childWF("lead")); st.Subagents["gc"].Status != api.StatusFailed || st.Status != api.StatusCompleted {
		t.Errorf("lead %s, its gc %s", st.Status, st.Subagents["gc"].Status)
	}
	sc.check(t)
}
