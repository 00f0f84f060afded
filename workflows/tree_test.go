package workflows

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// A child's step that depends on its parent's step unblocks when the parent
// completes it, with the parent's output, and the child's model is told.
func TestTreeChildWaitsOnParentStep(t *testing.T) {
	env := newTreeEnv()
	scriptTree(env, map[string][]model.Response{
		"main": {
			calls(call("createPlan", `{"title":"Parent","steps":["a","b"]}`)),
			calls(call("startPlan", `{}`)),
			calls(spawnCall("kid", "use main's step_2", quiet)),
			say("kid is on it"),
			// The user's next message (an hour later): the parent's steps.
			calls(call("setStepStatus", `{"step_id":"step_1","status":"completed","result":"did a"}`)),
			calls(call("completeStepWithOutput", `{"step_id":"step_2","output":{"answer":42},"result":"did b"}`)),
			say("both done"),
		},
		"kid": {
			calls(call("createPlan", `{"title":"Kid","steps":["use the answer"]}`)),
			calls(call("startPlan", `{}`)),
			calls(call("addDependentStep", `{"step_id":"step_1","depends_on":[{"agent_id":"main","step_id":"step_2"}]}`)),
			say("waiting for main"),
			calls(call("setStepStatus", `{"step_id":"step_1","status":"completed","result":"used 42"}`)),
			calls(call("completePlan", `{"status":"completed","summary":"used it"}`)),
			say("kid done"),
		},
	})
	var waiting State
	env.RegisterDelayedCallback(func() {
		waiting = stateOf(t, env, childWF("kid"))
		env.SignalWorkflow(UserMessageSignal, "finish your steps")
	}, time.Hour)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(EndSessionSignal, nil) }, 2*time.Hour)
	env.ExecuteWorkflow(WorkflowName, rootInput("go"))
	completed(t, env)

	if s := step(t, waiting.Plan, "step_1"); s.Status != todo.StepBlocked || waiting.Status != StatusBlocked {
		t.Errorf("before the parent's step: kid %s, step_1 %s; want blocked, blocked", waiting.Status, s.Status)
	}
	kid := stateOf(t, env, childWF("kid"))
	s := step(t, kid.Plan, "step_1")
	if s.Status != todo.StepCompleted || string(s.ReceivedOutputs["main:step_2"]) != `{"answer":42}` {
		t.Errorf("kid's step_1 = %s", dump(s))
	}
	if kid.Status != StatusCompleted || len(eventsOf(kid.Events, "kid", todo.EventStepUnblocked)) != 1 {
		t.Errorf("kid: %s, events %s", kid.Status, dump(kid.Events))
	}
	var told bool
	for _, m := range messagesOf(t, env, childWF("kid")) {
		told = told || (m.Role == model.RoleUser && m.Name == NameTaskEvent && strings.Contains(m.Content, todo.EventStepUnblocked))
	}
	if !told {
		t.Error("the kid's model was not told (task_event) that its step unblocked")
	}
	root := queryState(t, env)
	if sub := root.Subagents["kid"]; sub.Status != StatusCompleted || sub.Plan == nil || sub.Plan.Status != todo.PlanCompleted {
		t.Errorf("root's record of kid = %s", dump(sub))
	}
}

// A dependency is bound to the producer's plan that is current when it is
// added: a sibling's step_1 of its finished plan_1 does not settle it, its
// plan_2's step_1 does. With a subscription the consumer's own log holds
// plan_1's step_completed of step_1 too; without one only the keeper's does.
func TestTreeDependencyBindsToTheProducersCurrentPlan(t *testing.T) {
	for _, subscribed := range []bool{false, true} {
		name := map[bool]string{false: "asked_of_the_keeper", true: "after_seeing_plan_2"}[subscribed]
		t.Run(name, func(t *testing.T) {
			env := newTreeEnv()
			var cons []model.Response
			if subscribed {
				cons = append(cons, calls(call("subscribeToTasks", `{"agent_id":"prod","event_types":["plan_created","step_completed"]}`)))
			}
			addDep := len(cons) + 3 // the call that adds the dependency, an hour in
			cons = append(cons,
				calls(call("createPlan", `{"title":"Consume","steps":["use prod's step_1"]}`)),
				calls(call("startPlan", `{}`)),
				calls(call("addDependentStep", `{"step_id":"step_1","depends_on":[{"agent_id":"prod","step_id":"step_1"}]}`)),
				say("waiting for prod"),
				calls(call("setStepStatus", `{"step_id":"step_1","status":"completed","result":"used it"}`)),
				calls(call("completePlan", `{"status":"completed"}`)),
				say("cons done"),
			)
			scriptTree(env, map[string][]model.Response{
				"main": {
					calls(spawnCall("prod", "produce twice", quiet), spawnCall("cons", "consume", quiet)),
					say("both spawned"),
				},
				"prod": {
					calls(call("createPlan", `{"title":"First","steps":["make"]}`)),
					calls(call("startPlan", `{}`)),
					calls(call("completeStepWithOutput", `{"step_id":"step_1","output":{"from":"plan_1"},"result":"first"}`)),
					calls(call("completePlan", `{"status":"completed"}`)),
					calls(call("createPlan", `{"title":"Second","steps":["make again"]}`)),
					calls(call("startPlan", `{}`)),
					// Two hours in: plan_2's step_1.
					calls(call("completeStepWithOutput", `{"step_id":"step_1","output":{"from":"plan_2"},"result":"second"}`)),
					calls(call("completePlan", `{"status":"completed"}`)),
					say("prod done"),
				},
				"cons": cons,
			}, late{"cons", addDep, time.Hour}, late{"prod", 7, 2 * time.Hour})
			var between, prodBetween State
			env.RegisterDelayedCallback(func() {
				between, prodBetween = stateOf(t, env, childWF("cons")), stateOf(t, env, childWF("prod"))
			}, 90*time.Minute)
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(EndSessionSignal, nil) }, 3*time.Hour)
			env.ExecuteWorkflow(WorkflowName, rootInput("go"))
			completed(t, env)

			if prodBetween.Plan == nil || prodBetween.Plan.PlanID != "plan_2" || step(t, prodBetween.Plan, "step_1").Status == todo.StepCompleted {
				t.Fatalf("the script is off: prod at 90 min = %s", dump(prodBetween.Plan))
			}
			s := step(t, between.Plan, "step_1")
			if s.Status != todo.StepBlocked || len(s.ReceivedOutputs) != 0 || s.BoundPlans["prod"] != "plan_2" {
				t.Errorf("at 90 min, with prod's plan_1 step_1 done and plan_2 step_1 not: cons step_1 = %s", dump(s))
			}
			if subscribed && len(eventsOf(between.Events, "prod", todo.EventStepCompleted)) == 0 {
				t.Errorf("the subscribed consumer's log lacks prod's plan_1 step_completed: %s", dump(between.Events))
			}
			end := stateOf(t, env, childWF("cons"))
			s = step(t, end.Plan, "step_1")
			if s.Status != todo.StepCompleted || string(s.ReceivedOutputs["prod:step_1"]) != `{"from":"plan_2"}` {
				t.Errorf("cons step_1 at the end = %s", dump(s))
			}
		})
	}
}

// Events reach the agents that subscribed to them or depend on them, and no
// one else: of three siblings where only b follows a, neither a nor c hears
// of anyone, and b hears of a only.
func TestTreeRelaysOnlyToSubscribers(t *testing.T) {
	env := newTreeEnv()
	work := func(title string) []model.Response {
		return []model.Response{
			calls(call("createPlan", `{"title":"`+title+`","steps":["one","two"]}`)),
			calls(call("startPlan", `{}`)),
			calls(call("setStepStatus", `{"step_id":"step_1","status":"completed","result":"did one"}`)),
			calls(call("setStepStatus", `{"step_id":"step_2","status":"completed","result":"did two"}`)),
			calls(call("completePlan", `{"status":"completed"}`)),
			say(title + " done"),
		}
	}
	b := append([]model.Response{calls(call("subscribeToTasks", `{"agent_id":"a","event_types":["step_completed","plan_completed"]}`))}, work("B")...)
	scriptTree(env, map[string][]model.Response{
		"main": {
			calls(call("createPlan", `{"title":"Main","steps":["spawn"]}`)),
			calls(call("startPlan", `{}`)),
			calls(spawnCall("a", "work a", quiet), spawnCall("b", "work b", quiet), spawnCall("c", "work c", quiet)),
			calls(call("setStepStatus", `{"step_id":"step_1","status":"completed","result":"spawned"}`)),
			say("spawned"),
		},
		"a": work("A"),
		"b": b,
		"c": work("C"),
		// b gives its final answer half an hour in, so that it still runs
		// when a works (a subscriber that ended hears nothing more).
	}, late{"b", len(b), 30 * time.Minute})
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(EndSessionSignal, nil) }, time.Hour)
	env.ExecuteWorkflow(WorkflowName, rootInput("go"))
	completed(t, env)

	hears := map[string][]string{"a": {"a"}, "b": {"a", "b"}, "c": {"c"}}
	for _, id := range []string{"a", "b", "c"} {
		st := stateOf(t, env, childWF(id))
		if st.Status != StatusCompleted || st.Plan == nil || st.Plan.Status != todo.PlanCompleted {
			t.Errorf("%s did not finish its plan: %s", id, st.Status)
		}
		for _, ev := range st.Events {
			if !slicesContains(hears[id], ev.AgentID) {
				t.Errorf("%s's log holds an event of %s, which it neither follows nor depends on: %+v", id, ev.AgentID, ev)
			}
		}
	}
	if got := eventsOf(stateOf(t, env, childWF("b")).Events, "a", ""); len(got) != 3 {
		t.Errorf("b follows a's step_completed and plan_completed: want 3 of a's events, got %s", dump(got))
	}
	// The root keeps every event of its children, and its own.
	root := queryState(t, env)
	for _, id := range []string{"main", "a", "b", "c"} {
		if len(eventsOf(root.Events, id, "")) == 0 {
			t.Errorf("the root's log has no event of %s", id)
		}
	}
}

// A dependency on an agent that is never spawned fails visibly when the
// root's turn ends; an id that cannot name an agent is refused at once.
func TestTreeDependencyOnAnAgentNeverSpawned(t *testing.T) {
	env := newTreeEnv()
	scriptTree(env, map[string][]model.Response{
		"main": {
			calls(call("createPlan", `{"title":"Main","steps":["a"]}`)),
			calls(call("startPlan", `{}`)),
			calls(call("addDependentStep", `{"description":"use ghost's work","depends_on":[{"agent_id":"ghost","step_id":"step_1"}]}`)),
			calls(call("addDependentStep", `{"description":"use a bad id","depends_on":[{"agent_id":"no spaces allowed","step_id":"step_1"}]}`)),
			say("waiting for ghost"),
		},
	})
	var during State
	env.RegisterDelayedCallback(func() { during = queryState(t, env) }, time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(EndSessionSignal, nil) }, time.Hour)
	env.ExecuteWorkflow(WorkflowName, rootInput("go"))
	completed(t, env)

	s := step(t, during.Plan, "step_2")
	if s.Status != todo.StepFailed || !strings.Contains(s.Error, "not in this run tree") || !strings.Contains(s.Error, "ghost") {
		t.Errorf("after the root's turn ended, the step on ghost = %s", dump(s))
	}
	if evs := eventsOf(during.Events, "main", todo.EventStepFailed); len(evs) != 1 || !strings.Contains(string(evs[0].Data), "not in this run tree") {
		t.Errorf("step_failed events = %s", dump(evs))
	}
	if during.Status != StatusWaitingUser {
		t.Errorf("the root waits on nothing: status %s", during.Status)
	}
	msgs := queryMessages(t, env)
	bad, ok := toolAnswer(msgs, "main-4-0")
	if !ok || !bad.IsError || !strings.Contains(bad.Content, "no spaces allowed") || !strings.Contains(bad.Content, "not in this run tree") {
		t.Errorf("addDependentStep on an invalid agent id answered %+v", bad)
	}
	if len(during.Plan.Steps) != 2 {
		t.Errorf("the refused call added a step: %s", dump(during.Plan.Steps))
	}
}

// A subagent's dependency on an agent that is never spawned, asked of the
// root while the root's turn runs (a spawn of the rest of that turn could
// still bring it), fails when the root's turn ends without the spawn.
func TestTreeChildDependencyOnAnAgentNeverSpawned(t *testing.T) {
	env := newTreeEnv()
	scriptTree(env, map[string][]model.Response{
		"main": {
			calls(spawnCall("kid", "wait for ghost", quiet)),
			say("done spawning"), // an hour in: the kid asked for ghost meanwhile
		},
		"kid": {
			calls(call("createPlan", `{"title":"Kid","steps":["use ghost's work"]}`)),
			calls(call("startPlan", `{}`)),
			calls(call("addDependentStep", `{"step_id":"step_1","depends_on":[{"agent_id":"ghost","step_id":"step_1"}]}`)),
			say("waiting for ghost"),
			say("ghost never came"),
		},
	}, late{"main", 2, time.Hour})
	var during, after State
	env.RegisterDelayedCallback(func() { during = stateOf(t, env, childWF("kid")) }, 30*time.Minute)
	env.RegisterDelayedCallback(func() { after = stateOf(t, env, childWF("kid")) }, 2*time.Hour)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(EndSessionSignal, nil) }, 3*time.Hour)
	env.ExecuteWorkflow(WorkflowName, rootInput("go"))
	completed(t, env)

	if s := step(t, during.Plan, "step_1"); s.Status != todo.StepBlocked {
		t.Fatalf("while the root's turn runs the kid's step waits: %s", dump(s))
	}
	s := step(t, after.Plan, "step_1")
	if s.Status != todo.StepFailed || !strings.Contains(s.Error, "not in this run tree") {
		t.Errorf("an hour after the root's turn ended without spawning ghost, the kid's step = %s (kid %s)", dump(s), after.Status)
	}
}

// A subagent's todo_pause is the root's wait: the root reads paused, its
// waiting names the child, and a resume sent to the root (the plain string
// of older clients or the object form) reaches the child, which goes on.
func TestTreePausedSubagentResumedAtTheRoot(t *testing.T) {
	for name, resume := range map[string]any{
		"plain_string": "the key is in place",
		"object":       map[string]any{"text": "the key is in place", "agent_id": "kid"},
	} {
		t.Run(name, func(t *testing.T) {
			env := newTreeEnv()
			scriptTree(env, map[string][]model.Response{
				"main": {calls(spawnCall("kid", "deploy", quiet)), say("kid deploys")},
				"kid": {
					calls(call("write_todos", `{"todos":[{"content":"Deploy","status":"in_progress"}]}`)),
					calls(call("todo_pause", `{"reason":"The deploy key is missing."}`)),
					calls(call("write_todos", `{"todos":[{"content":"Deploy","status":"completed"}]}`)),
					say("deployed"),
				},
			})
			var paused, after State
			env.RegisterDelayedCallback(func() {
				paused = queryState(t, env)
				env.SignalWorkflow(ResumeSignal, resume)
			}, 24*time.Hour) // far beyond any idle limit: a pause waits
			env.RegisterDelayedCallback(func() { after = queryState(t, env) }, 25*time.Hour)
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(EndSessionSignal, nil) }, 26*time.Hour)
			env.ExecuteWorkflow(WorkflowName, rootInput("go"))
			completed(t, env)

			want := []Wait{{AgentID: "kid", Kind: WaitPaused, Reason: "The deploy key is missing."}}
			if paused.Status != StatusPaused || dump(paused.Waiting) != dump(want) {
				t.Errorf("root while the kid is paused: status %s, waiting %s", paused.Status, dump(paused.Waiting))
			}
			if sub := paused.Subagents["kid"]; sub.Status != StatusPaused || !sub.Paused || sub.PauseReason != "The deploy key is missing." {
				t.Errorf("root's entry for the paused kid = %s", dump(sub))
			}
			if after.Status != StatusWaitingUser || len(after.Waiting) != 0 {
				t.Errorf("root after the resume: status %s, waiting %s", after.Status, dump(after.Waiting))
			}
			kid := stateOf(t, env, childWF("kid"))
			if kid.Status != StatusCompleted || kid.Paused || len(kid.Todos) != 1 || kid.Todos[0].Status != "completed" {
				t.Errorf("kid after the resume = %s", dump(kid))
			}
			var heard bool
			for _, m := range messagesOf(t, env, childWF("kid")) {
				heard = heard || (m.Role == model.RoleUser && m.Content == "the key is in place")
			}
			if !heard {
				t.Error("the resume text did not reach the kid's transcript")
			}
		})
	}
}

// A subagent's startPlan that needs approval is the root's wait: the root
// reads awaiting_approval, and its approve_plan (naming the agent or not)
// is handed on; with two agents waiting, an answer that names none is
// refused, naming both.
func TestTreePlanApprovalAtTheRoot(t *testing.T) {
	const needs = `{"plan_approval":"required","finalization_max_corrections":0,"continuation":false}`
	kidScript := func(title string) []model.Response {
		return []model.Response{
			calls(call("createPlan", `{"title":"`+title+`","steps":["do it"]}`)),
			calls(call("startPlan", `{"message":"May I?"}`)),
			calls(call("setStepStatus", `{"step_id":"step_1","status":"completed","result":"did it"}`)),
			calls(call("completePlan", `{"status":"completed"}`)),
			say(title + " done"),
		}
	}
	// answer sends approve_plan to the root; a rejection goes to rejected
	// (an error of the test when nil), then runs when it completed.
	answer := func(env testEnv, t *testing.T, agentID string, rejected *error, then func()) {
		yes := true
		env.UpdateWorkflow(ApprovePlanUpdate, "", &updateCallback{
			reject: func(err error) {
				if rejected != nil {
					*rejected = err
					return
				}
				t.Errorf("approve_plan(%q) rejected: %v", agentID, err)
			},
			complete: func(_ any, err error) {
				if err != nil {
					t.Errorf("approve_plan(%q) failed: %v", agentID, err)
				}
				if then != nil {
					then()
				}
			},
		}, ApprovalArgs{Approved: &yes, Feedback: "go ahead", AgentID: agentID})
	}
	for _, agentID := range []string{"", "kid"} {
		t.Run("one_waiting/agent_id="+agentID, func(t *testing.T) {
			env := newTreeEnv()
			scriptTree(env, map[string][]model.Response{
				"main": {calls(spawnCall("kid", "plan it", needs)), say("kid plans")},
				"kid":  kidScript("Kid"),
			})
			var waiting, answered, after State
			var again error
			env.RegisterDelayedCallback(func() {
				waiting = queryState(t, env)
				answer(env, t, agentID, nil, func() {
					// At once, before the kid tells how it stands: the
					// wait is answered, and a second answer is refused.
					answered = queryState(t, env)
					answer(env, t, "", &again, nil)
				})
			}, 48*time.Hour)
			env.RegisterDelayedCallback(func() { after = queryState(t, env) }, 49*time.Hour)
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(EndSessionSignal, nil) }, 50*time.Hour)
			env.ExecuteWorkflow(WorkflowName, rootInput("go"))
			completed(t, env)

			if waiting.Status != StatusAwaitingApproval || len(waiting.Waiting) != 1 ||
				waiting.Waiting[0].AgentID != "kid" || waiting.Waiting[0].Kind != WaitPlanApproval {
				t.Errorf("root while the kid's plan waits: status %s, waiting %s", waiting.Status, dump(waiting.Waiting))
			}
			if answered.Status == StatusAwaitingApproval || len(answered.Waiting) != 0 {
				t.Errorf("root as the approval is handed on: status %s, waiting %s", answered.Status, dump(answered.Waiting))
			}
			if again == nil || !strings.Contains(again.Error(), "no plan is waiting") {
				t.Errorf("a second approval right after the first: %v", again)
			}
			if after.Status != StatusWaitingUser || len(after.Waiting) != 0 {
				t.Errorf("root after the approval: status %s, waiting %s", after.Status, dump(after.Waiting))
			}
			kid := stateOf(t, env, childWF("kid"))
			if kid.Plan == nil || !kid.Plan.Started || kid.Plan.Status != todo.PlanCompleted {
				t.Errorf("kid's plan after the approval = %s", dump(kid.Plan))
			}
			if evs := eventsOf(kid.Events, "kid", todo.EventPlanStarted); len(evs) != 1 || !strings.Contains(string(evs[0].Data), "go ahead") {
				t.Errorf("plan_started = %s", dump(evs))
			}
		})
	}
	t.Run("two_waiting", func(t *testing.T) {
		env := newTreeEnv()
		scriptTree(env, map[string][]model.Response{
			"main": {calls(spawnCall("kid1", "plan it", needs), spawnCall("kid2", "plan it too", needs)), say("kids plan")},
			"kid1": kidScript("One"),
			"kid2": kidScript("Two"),
		})
		var unnamed error
		var waiting State
		env.RegisterDelayedCallback(func() {
			waiting = queryState(t, env)
			answer(env, t, "", &unnamed, nil)
		}, time.Hour)
		env.RegisterDelayedCallback(func() { answer(env, t, "kid2", nil, nil) }, 2*time.Hour)
		env.RegisterDelayedCallback(func() { answer(env, t, "kid1", nil, nil) }, 3*time.Hour)
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(EndSessionSignal, nil) }, 4*time.Hour)
		env.ExecuteWorkflow(WorkflowName, rootInput("go"))
		completed(t, env)

		if waiting.Status != StatusAwaitingApproval || len(waiting.Waiting) != 2 {
			t.Errorf("root with two plans waiting: status %s, waiting %s", waiting.Status, dump(waiting.Waiting))
		}
		if unnamed == nil || !containsAll(unnamed.Error(), "kid1", "kid2", "agent_id") {
			t.Errorf("an approval naming no agent, with two waiting: %v", unnamed)
		}
		for _, id := range []string{"kid1", "kid2"} {
			if p := stateOf(t, env, childWF(id)).Plan; p == nil || p.Status != todo.PlanCompleted {
				t.Errorf("%s's plan = %s", id, dump(p))
			}
		}
	})
}

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
	var before State
	env.RegisterDelayedCallback(func() { before = queryState(t, env) }, 30*time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(EndSessionSignal, nil) }, 2*time.Hour)
	env.ExecuteWorkflow(WorkflowName, rootInput("go"))
	completed(t, env)

	if sub := before.Subagents["worker"]; sub.Status != StatusBlocked || before.Status != StatusRunning {
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
	if sub := root.Subagents["worker"]; sub.Status != StatusFailed {
		t.Errorf("root's entry for the cancelled worker: %s", sub.Status)
	}
	var told bool
	for _, m := range named(msgs, NameTaskEvent) {
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
	var before, after State
	env.RegisterDelayedCallback(func() { before = queryState(t, env) }, 9*time.Minute)
	env.RegisterDelayedCallback(func() { after = queryState(t, env) }, 11*time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(EndSessionSignal, nil) }, 3*time.Hour)
	in := rootInput("go")
	in.SubagentTimeoutS, in.ModelRetryWindowS = 600, 300
	env.ExecuteWorkflow(WorkflowName, in)
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
	if res := root.Subagents["slow"]; res.Status != StatusFailed {
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
	var during State
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(EndSessionSignal, nil) }, time.Hour)
	env.RegisterDelayedCallback(func() { during = queryState(t, env) }, 90*time.Minute)
	in := rootInput("go")
	in.SubagentGraceS = 3600
	env.ExecuteWorkflow(WorkflowName, in)
	completed(t, env)

	took := env.Now().Sub(start)
	if took < 2*time.Hour || took > 2*time.Hour+5*time.Minute {
		t.Errorf("the root completed %s after the start; want just after end_session (1h) + subagent_grace_s (1h)", took)
	}
	if during.Status != StatusBlocked || during.Subagents["stuck"].Status != StatusBlocked {
		t.Errorf("during the grace: root %s, stuck %s", during.Status, during.Subagents["stuck"].Status)
	}
	root := queryState(t, env)
	if root.Status != StatusCompleted || root.Subagents["stuck"].Status != StatusFailed || root.Subagents["busy"].Status != StatusCompleted {
		t.Errorf("at the end: root %s, stuck %s, busy %s", root.Status, root.Subagents["stuck"].Status, root.Subagents["busy"].Status)
	}
	var noted bool
	for _, m := range named(messagesOf(t, env, childWF("busy")), NameTaskEvent) {
		noted = noted || containsAll(m.Content, "session", "is ending", "3600 seconds")
	}
	if !noted {
		t.Error("busy's model was not told that the session is ending")
	}
	var res AgentResult
	if err := env.GetWorkflowResult(&res); err != nil || res.State == nil || res.State.Subagents["stuck"].Status != StatusFailed {
		t.Errorf("the root's result: %v, %+v", err, res.State)
	}
}

// Escalation: after todo_blocked the next model call is offered no tools;
// a tool it calls anyway is answered, never run, and its content ends the
// turn. The next turn offers the tools again.
func TestTreeEscalationLastCallHasNoTools(t *testing.T) {
	env := newTreeEnv()
	one := 1
	in := rootInput("") // the first message comes by send_message, whose reply is the turn's
	in.Todo.FinalizationMaxCorrections, in.Todo.FinalizationEscalation = &one, true
	tm := scriptTree(env, map[string][]model.Response{
		"main": {
			calls(call("write_todos", `{"todos":[{"content":"Ship it","status":"in_progress"}]}`)),
			say("done?"),
			say("done!"),
			{Content: "Shipping is not done: the registry refused the upload.",
				ToolCalls: []model.ToolCall{call("write_todos", `{"todos":[{"content":"Ship it","status":"completed"}]}`)}},
			say("a new turn"),
		},
	})
	var reply any
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(SendMessageUpdate, "", &updateCallback{
			reject:   func(err error) { t.Errorf("send_message rejected: %v", err) },
			complete: func(r any, err error) { reply = r },
		}, "go")
	}, time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(UserMessageSignal, "and now?") }, time.Hour)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(EndSessionSignal, nil) }, 2*time.Hour)
	env.ExecuteWorkflow(WorkflowName, in)
	completed(t, env)

	if reply != "Shipping is not done: the registry refused the upload." {
		t.Errorf("the turn's reply = %v, want the last call's content", reply)
	}
	seen := tm.inputs("main")
	if len(seen) < 5 {
		t.Fatalf("%d model calls", len(seen))
	}
	for i, in := range seen[:5] {
		last := i == 3
		if noTools := in.TodoTools == nil && in.WorkerTools != nil && len(in.WorkerTools) == 0; noTools != last {
			t.Errorf("call %d: todo tools %v, worker tools %#v; want none offered only on call 4, after todo_blocked", in.Call, in.TodoTools, in.WorkerTools)
		}
	}
	msgs := queryMessages(t, env)
	next := slices.IndexFunc(msgs, func(m model.Message) bool { return m.Role == model.RoleUser && m.Content == "and now?" })
	if next < 0 {
		t.Fatal("the second user message is not in the transcript")
	}
	if n := len(named(msgs[:next], NameBlocked)); n != 1 {
		t.Errorf("%d todo_blocked messages in the first turn", n)
	}
	m, ok := toolAnswer(msgs, "main-4-0")
	if !ok || !m.IsError || !strings.Contains(m.Content, "Not run") {
		t.Errorf("the tool call of the last call was answered %+v", m)
	}
	st := queryState(t, env)
	if len(st.Todos) != 1 || st.Todos[0].Status != "in_progress" {
		t.Errorf("the write_todos of the last call ran: %s", dump(st.Todos))
	}
	// The turn ended with the last call's answer (and the refusal of its
	// tool call): no call came between it and the next user message.
	if a := msgs[next-2]; a.Role != model.RoleAssistant || a.Content != "Shipping is not done: the registry refused the upload." || msgs[next-1].Role != model.RoleTool {
		t.Errorf("the first turn ended with %+v, %+v", a, msgs[next-1])
	}
}

// The escape from a plan tool refused again and again: the third identical
// refused setStepStatus says that repeating it will not work and what to do.
func TestTreeRepeatedRefusalOfAPlanTool(t *testing.T) {
	env := newTreeEnv()
	refused := calls(call("setStepStatus", `{"step_id":"step_1","status":"completed","result":"could not build it"}`))
	scriptTree(env, map[string][]model.Response{
		"main": {
			calls(call("createPlan", `{"title":"Build","steps":["build"]}`)),
			calls(call("startPlan", `{}`)),
			refused, refused, refused,
			calls(call("setStepStatus", `{"step_id":"step_1","status":"failed","error":"could not build it"}`)),
			say("the build failed"),
		},
	})
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(EndSessionSignal, nil) }, time.Hour)
	env.ExecuteWorkflow(WorkflowName, rootInput("go"))
	completed(t, env)

	msgs := queryMessages(t, env)
	const escape = "You have made this same setStepStatus call 3 times in a row and it failed each time"
	for call, wantEscape := range map[int]bool{3: false, 4: false, 5: true} {
		m, ok := toolAnswer(msgs, "main-"+string(rune('0'+call))+"-0")
		if !ok || !m.IsError || !strings.Contains(m.Content, "could not") {
			t.Errorf("call %d: the refusal = %+v", call, m)
		}
		if got := strings.Contains(m.Content, escape); got != wantEscape {
			t.Errorf("call %d: escape sentence %v, want %v: %q", call, got, wantEscape, m.Content)
		}
		if wantEscape && !containsAll(m.Content, "status failed", "todo_pause") {
			t.Errorf("the escape does not say what to do instead: %q", m.Content)
		}
	}
	if s := step(t, queryState(t, env).Plan, "step_1"); s.Status != todo.StepFailed {
		t.Errorf("step_1 = %s", s.Status)
	}
}

// A resume that comes while the model call that pauses is still running
// (before the pause is recorded), or with its answer, is kept for the pause
// and not dropped: the run goes on.
func TestTreeResumeBeforeThePause(t *testing.T) {
	for name, at := range map[string]time.Duration{"during_the_call": 30 * time.Minute, "with_its_answer": time.Hour} {
		t.Run(name, func(t *testing.T) {
			env := newTreeEnv()
			scriptTree(env, map[string][]model.Response{
				"main": {
					calls(call("todo_pause", `{"reason":"need the key"}`)), // answered an hour in
					say("resumed"),
				},
			}, late{"main", 1, time.Hour})
			var after State
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(ResumeSignal, "here is the key") }, at)
			env.RegisterDelayedCallback(func() { after = queryState(t, env) }, 2*time.Hour)
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(EndSessionSignal, nil) }, 3*time.Hour)
			env.ExecuteWorkflow(WorkflowName, rootInput("go"))
			completed(t, env)

			if after.Paused || after.Status != StatusWaitingUser || after.ModelCalls != 2 {
				t.Errorf("after the early resume: status %s, paused %v, %d model calls", after.Status, after.Paused, after.ModelCalls)
			}
			var res AgentResult
			_ = env.GetWorkflowResult(&res)
			if res.Reply != "resumed" {
				t.Errorf("reply = %q", res.Reply)
			}
			var heard bool
			for _, m := range queryMessages(t, env) {
				heard = heard || (m.Role == model.RoleUser && m.Content == "here is the key")
			}
			if !heard {
				t.Error("the resume text is not in the transcript")
			}
		})
	}
}

// A subagent tells its parent its counters (a Brief), not its state: while
// it runs, the parent's entry for it is live, with the counters and no list;
// once it has ended, the entry is its final state.
func TestTreeChildSendsABriefNotItsState(t *testing.T) {
	env := newTreeEnv()
	scriptTree(env, map[string][]model.Response{
		"main": {calls(spawnCall("kid", "work", quiet)), say("kid works")},
		"kid": {
			calls(call("write_todos", `{"todos":[{"content":"Read","status":"completed"},{"content":"Write","status":"in_progress"}]}`)),
			calls(call("createPlan", `{"title":"Kid","steps":["read","write"]}`)),
			calls(call("startPlan", `{}`)),
			calls(call("setStepStatus", `{"step_id":"step_1","status":"completed","result":"read it"}`)),
			// An hour in: the rest.
			calls(call("write_todos", `{"todos":[{"content":"Read","status":"completed"},{"content":"Write","status":"completed"}]}`)),
			calls(call("setStepStatus", `{"step_id":"step_2","status":"completed","result":"wrote it"}`)),
			calls(call("completePlan", `{"status":"completed"}`)),
			say("kid done"),
		},
	}, late{"kid", 5, time.Hour})
	var during State
	env.RegisterDelayedCallback(func() { during = queryState(t, env) }, 30*time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(EndSessionSignal, nil) }, 2*time.Hour)
	env.ExecuteWorkflow(WorkflowName, rootInput("go"))
	completed(t, env)

	sub := during.Subagents["kid"]
	live := sub.Live
	if live == nil {
		t.Fatalf("the parent's entry for the running kid has no live counters: %s", dump(sub))
	}
	if len(sub.Todos) != 0 || sub.Plan != nil || len(sub.Events) != 0 {
		t.Errorf("the running kid's entry carries state, not a brief: todos %d, plan %v, events %d", len(sub.Todos), sub.Plan != nil, len(sub.Events))
	}
	if live.TodosTotal != 2 || live.TodosCompleted != 1 || live.Current != "Write" || live.PlanID != "plan_1" ||
		live.StepsTotal != 2 || live.StepsCompleted != 1 || live.ModelCalls < 4 || sub.Status != StatusRunning {
		t.Errorf("the live counters = %s, status %s", dump(live), sub.Status)
	}
	// The parent's log has the kid's events, one by one.
	if got := len(eventsOf(during.Events, "kid", "")); got != 3 {
		t.Errorf("the parent's log has %d of the kid's events, want 3", got)
	}
	end := queryState(t, env).Subagents["kid"]
	if end.Live != nil || end.Status != StatusCompleted || len(end.Todos) != 2 || end.Plan == nil || end.Plan.Status != todo.PlanCompleted {
		t.Errorf("the parent's entry for the ended kid = %s", dump(end))
	}
}

// A root whose idle timeout passes while a subagent is paused keeps
// waiting: the human wait takes as long as it takes, and the session is
// still open (waiting_user) once the subagent was resumed.
func TestTreeIdleTimeoutWaitsForAPausedSubagent(t *testing.T) {
	env := newTreeEnv()
	scriptTree(env, map[string][]model.Response{
		"main": {calls(spawnCall("kid", "deploy", quiet)), say("kid deploys")},
		"kid": {
			calls(call("todo_pause", `{"reason":"The deploy key is missing."}`)),
			say("deployed"),
		},
	})
	in := rootInput("go")
	in.IdleTimeoutS = 60
	var paused, after State
	env.RegisterDelayedCallback(func() {
		paused = queryState(t, env)
		env.SignalWorkflow(ResumeSignal, "the key is in place")
	}, 2*time.Hour)
	env.RegisterDelayedCallback(func() { after = queryState(t, env) }, 2*time.Hour+30*time.Second)
	env.ExecuteWorkflow(WorkflowName, in)
	completed(t, env)
	if paused.Status != StatusPaused || len(paused.Waiting) != 1 {
		t.Errorf("root two hours into the kid's pause: status %s, waiting %s", paused.Status, dump(paused.Waiting))
	}
	if after.Status != StatusWaitingUser {
		t.Errorf("root after the resume: status %s, want %s (its idle timeout starts again)", after.Status, StatusWaitingUser)
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
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(EndSessionSignal, nil) }, time.Hour)
	env.ExecuteWorkflow(WorkflowName, in)
	completed(t, env)
	st := queryState(t, env)
	if kid := st.Subagents["kid"]; kid.Status != StatusFailed {
		t.Errorf("kid = %s, want failed (cancelled)", kid.Status)
	}
	if s := st.Plan.Steps[2]; s.Status != "failed" || !strings.Contains(s.Error, "subagent_grace_s") {
		t.Errorf("root's step on kid = %s %q, want failed naming subagent_grace_s", s.Status, s.Error)
	}
}

// A grandchild's events reach the root, which holds the tree's log: the
// root's step that waits on the grandchild's step, added before the
// grandchild exists, is bound when it joins and settled by its
// completion; nobody else gets its events.
func TestTreeRootDependsOnAGrandchild(t *testing.T) {
	env := newTreeEnv()
	scriptTree(env, map[string][]model.Response{
		"main": {
			calls(call("createPlan", `{"title":"Root","steps":["delegate"]}`)),
			calls(call("startPlan", `{}`)),
			calls(spawnCall("lead", "get a worker to build it", quiet)),
			calls(call("addDependentStep", `{"description":"ship the build","depends_on":[{"agent_id":"worker","step_id":"step_1"}]}`)),
			calls(call("setStepStatus", `{"step_id":"step_1","status":"completed","result":"delegated"}`)),
			say("waiting for the worker"),
			calls(call("setStepStatus", `{"step_id":"step_2","status":"completed","result":"shipped"}`)),
			calls(call("completePlan", `{"status":"completed","summary":"shipped"}`)),
			say("shipped"),
		},
		"lead": {
			calls(spawnCall("worker", "build it", quiet)),
			say("the worker builds it"),
		},
		"worker": {
			calls(call("createPlan", `{"title":"Build","steps":["build"]}`)),
			calls(call("startPlan", `{}`)),
			calls(call("completeStepWithOutput", `{"step_id":"step_1","output":{"artifact":"app.tar"},"result":"built"}`)),
			calls(call("completePlan", `{"status":"completed","summary":"built"}`)),
			say("built"),
		},
	},
		// The root's dependency is added before the worker exists; the
		// worker's plan comes after its spawn was announced.
		late{Agent: "worker", Call: 1, D: time.Minute},
	)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(EndSessionSignal, nil) }, time.Hour)
	env.ExecuteWorkflow(WorkflowName, rootInput("go"))
	completed(t, env)

	st := queryState(t, env)
	s := step(t, st.Plan, "step_2")
	if s.Status != todo.StepCompleted || string(s.ReceivedOutputs["worker:step_1"]) != `{"artifact":"app.tar"}` {
		t.Errorf("root's step on the grandchild = %s", dump(s))
	}
	if s.BoundPlans["worker"] != "" && s.BoundPlans["worker"] != "plan_1" {
		t.Errorf("bound to %q", s.BoundPlans["worker"])
	}
	if got := len(eventsOf(st.Events, "worker", todo.EventStepCompleted)); got != 1 {
		t.Errorf("root's log holds %d step_completed of the worker, want 1", got)
	}
	// The worker's events went to the root, which holds the tree's log,
	// and to no one else: its parent did not ask for them.
	lead := stateOf(t, env, childWF("lead"))
	if len(lead.Events) != 0 {
		t.Errorf("the lead received events without asking: %s", dump(lead.Events))
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
		{0, 0, DefaultModelRetryWindow},
		{600, 300, 10 * time.Minute},
		{600, 7200, 2 * time.Hour},
	}
	for _, tt := range tests {
		c, err := resolve(AgentInput{SubagentTimeoutS: tt.timeout, ModelRetryWindowS: tt.window})
		if err != nil || c.subagentTimeout != tt.want {
			t.Errorf("subagent_timeout_s %d, model_retry_window_s %d: limit %s, %v; want %s", tt.timeout, tt.window, c.subagentTimeout, err, tt.want)
		}
	}
}

// A subscription made after an unsubscribe is asked for like the first:
// a sibling once counted its subscriptions, and after an unsubscribe the
// new one took the count of the old and was never asked for, so it
// received nothing.
func TestTreeSubscribeAfterUnsubscribe(t *testing.T) {
	env := newTreeEnv()
	b := []model.Response{
		calls(call("subscribeToTasks", `{"agent_id":"a","event_types":["plan_created"]}`)),
		calls(call("unsubscribe", `{"subscription_id":"sub_1"}`)),
		calls(call("subscribeToTasks", `{"agent_id":"a","event_types":["step_completed"]}`)),
		say("listening"),
	}
	scriptTree(env, map[string][]model.Response{
		"main": {calls(spawnCall("a", "work a", quiet), spawnCall("b", "follow a", quiet)), say("spawned")},
		"a": {
			calls(call("createPlan", `{"title":"A","steps":["one"]}`)),
			calls(call("startPlan", `{}`)),
			calls(call("setStepStatus", `{"step_id":"step_1","status":"completed","result":"did one"}`)),
			say("A done"),
		},
		"b": b,
		// a works once b has subscribed again; b still runs then.
	}, late{"a", 1, 10 * time.Minute}, late{"b", len(b), 30 * time.Minute})
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(EndSessionSignal, nil) }, time.Hour)
	env.ExecuteWorkflow(WorkflowName, rootInput("go"))
	completed(t, env)
	st := stateOf(t, env, childWF("b"))
	if len(eventsOf(st.Events, "a", "step_completed")) != 1 {
		t.Errorf("b heard %s of a; want its step_completed through the second subscription", dump(st.Events))
	}
}

// No event is signalled to an agent that has ended: the keepers of the
// producers it subscribed to drop its interests once it ends, the root's
// own table at once and another keeper's when the root tells it. Before,
// each later event was signalled to it, and failed.
func TestTreeNothingReachesAnEndedSubscriber(t *testing.T) {
	env := newTreeEnv()
	sub := func(of string) []model.Response {
		return []model.Response{calls(call("subscribeToTasks", `{"agent_id":"`+of+`","event_types":["step_completed"]}`)), say("subscribed")}
	}
	work := func(title string) []model.Response {
		return []model.Response{
			calls(call("createPlan", `{"title":"`+title+`","steps":["one"]}`)),
			calls(call("startPlan", `{}`)),
			calls(call("setStepStatus", `{"step_id":"step_1","status":"completed","result":"did one"}`)),
			say(title + " done"),
		}
	}
	scriptTree(env, map[string][]model.Response{
		"main": {calls(spawnCall("p", "work", quiet), spawnCall("s", "follow p", quiet), spawnCall("c", "delegate", quiet)), say("spawned")},
		"p":    work("P"),
		"s":    sub("p"),
		// c keeps p2's events; s2 asks the root, which hands the want to c.
		"c":  {calls(spawnCall("p2", "work", quiet), spawnCall("s2", "follow p2", quiet)), say("delegated")},
		"p2": work("P2"),
		"s2": sub("p2"),
		// The producers work once their subscribers have ended.
	}, late{"p", 1, time.Hour}, late{"p2", 1, time.Hour})
	sc := countSignals(env)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(EndSessionSignal, nil) }, 3*time.Hour)
	env.ExecuteWorkflow(WorkflowName, rootInput("go"))
	completed(t, env)
	if st := stateOf(t, env, childWF("p")); st.Status != StatusCompleted || sc.events == 0 {
		t.Fatalf("p %s, %d events signalled in all: the test did not run its course", st.Status, sc.events)
	}
	if len(sc.toEnded) != 0 {
		t.Errorf("events signalled to agents that had ended: %v", sc.toEnded)
	}
}
