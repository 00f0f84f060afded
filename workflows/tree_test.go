package workflows

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

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
	var waiting api.State
	env.RegisterDelayedCallback(func() {
		waiting = stateOf(t, env, childWF("kid"))
		env.SignalWorkflow(api.UserMessageSignal, "finish your steps")
	}, time.Hour)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 2*time.Hour)
	env.ExecuteWorkflow(api.WorkflowName, rootInput("go"))
	completed(t, env)

	if s := step(t, waiting.Plan, "step_1"); s.Status != todo.StepBlocked || waiting.Status != api.StatusBlocked {
		t.Errorf("before the parent's step: kid %s, step_1 %s; want blocked, blocked", waiting.Status, s.Status)
	}
	kid := stateOf(t, env, childWF("kid"))
	s := step(t, kid.Plan, "step_1")
	if s.Status != todo.StepCompleted || string(s.ReceivedOutputs["main:step_2"]) != `{"answer":42}` {
		t.Errorf("kid's step_1 = %s", dump(s))
	}
	if kid.Status != api.StatusCompleted || len(eventsOf(kid.Events, "kid", todo.EventStepUnblocked)) != 1 {
		t.Errorf("kid: %s, events %s", kid.Status, dump(kid.Events))
	}
	var told bool
	for _, m := range messagesOf(t, env, childWF("kid")) {
		told = told || (m.Role == model.RoleUser && m.Name == api.NameTaskEvent && strings.Contains(m.Content, todo.EventStepUnblocked))
	}
	if !told {
		t.Error("the kid's model was not told (task_event) that its step unblocked")
	}
	root := queryState(t, env)
	if sub := root.Subagents["kid"]; sub.Status != api.StatusCompleted || sub.Plan == nil || sub.Plan.Status != todo.PlanCompleted {
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
			var between, prodBetween api.State
			env.RegisterDelayedCallback(func() {
				between, prodBetween = stateOf(t, env, childWF("cons")), stateOf(t, env, childWF("prod"))
			}, 90*time.Minute)
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 3*time.Hour)
			env.ExecuteWorkflow(api.WorkflowName, rootInput("go"))
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
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, time.Hour)
	env.ExecuteWorkflow(api.WorkflowName, rootInput("go"))
	completed(t, env)

	hears := map[string][]string{"a": {"a"}, "b": {"a", "b"}, "c": {"c"}}
	for _, id := range []string{"a", "b", "c"} {
		st := stateOf(t, env, childWF(id))
		if st.Status != api.StatusCompleted || st.Plan == nil || st.Plan.Status != todo.PlanCompleted {
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
	var during api.State
	env.RegisterDelayedCallback(func() { during = queryState(t, env) }, time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, time.Hour)
	env.ExecuteWorkflow(api.WorkflowName, rootInput("go"))
	completed(t, env)

	s := step(t, during.Plan, "step_2")
	if s.Status != todo.StepFailed || !strings.Contains(s.Error, "not in this run tree") || !strings.Contains(s.Error, "ghost") {
		t.Errorf("after the root's turn ended, the step on ghost = %s", dump(s))
	}
	if evs := eventsOf(during.Events, "main", todo.EventStepFailed); len(evs) != 1 || !strings.Contains(string(evs[0].Data), "not in this run tree") {
		t.Errorf("step_failed events = %s", dump(evs))
	}
	if during.Status != api.StatusWaitingUser {
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
	var during, after api.State
	env.RegisterDelayedCallback(func() { during = stateOf(t, env, childWF("kid")) }, 30*time.Minute)
	env.RegisterDelayedCallback(func() { after = stateOf(t, env, childWF("kid")) }, 2*time.Hour)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 3*time.Hour)
	env.ExecuteWorkflow(api.WorkflowName, rootInput("go"))
	completed(t, env)

	if s := step(t, during.Plan, "step_1"); s.Status != todo.StepBlocked {
		t.Fatalf("while the root's turn runs the kid's step waits: %s", dump(s))
	}
	s := step(t, after.Plan, "step_1")
	if s.Status != todo.StepFailed || !strings.Contains(s.Error, "not in this run tree") {
		t.Errorf("an hour after the root's turn ended without spawning ghost, the kid's step = %s (kid %s)", dump(s), after.Status)
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
		env.UpdateWorkflow(api.SendMessageUpdate, "", &updateCallback{
			reject:   func(err error) { t.Errorf("send_message rejected: %v", err) },
			complete: func(r any, err error) { reply = r },
		}, "go")
	}, time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.UserMessageSignal, "and now?") }, time.Hour)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 2*time.Hour)
	env.ExecuteWorkflow(api.WorkflowName, in)
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
	if n := len(named(msgs[:next], api.NameBlocked)); n != 1 {
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
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, time.Hour)
	env.ExecuteWorkflow(api.WorkflowName, rootInput("go"))
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
	var during api.State
	env.RegisterDelayedCallback(func() { during = queryState(t, env) }, 30*time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 2*time.Hour)
	env.ExecuteWorkflow(api.WorkflowName, rootInput("go"))
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
		live.StepsTotal != 2 || live.StepsCompleted != 1 || live.ModelCalls < 4 || sub.Status != api.StatusRunning {
		t.Errorf("the live counters = %s, status %s", dump(live), sub.Status)
	}
	// The parent's log has the kid's events, one by one.
	if got := len(eventsOf(during.Events, "kid", "")); got != 3 {
		t.Errorf("the parent's log has %d of the kid's events, want 3", got)
	}
	end := queryState(t, env).Subagents["kid"]
	if end.Live != nil || end.Status != api.StatusCompleted || len(end.Todos) != 2 || end.Plan == nil || end.Plan.Status != todo.PlanCompleted {
		t.Errorf("the parent's entry for the ended kid = %s", dump(end))
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
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, time.Hour)
	env.ExecuteWorkflow(api.WorkflowName, rootInput("go"))
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
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, time.Hour)
	env.ExecuteWorkflow(api.WorkflowName, rootInput("go"))
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
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 3*time.Hour)
	env.ExecuteWorkflow(api.WorkflowName, rootInput("go"))
	completed(t, env)
	if st := stateOf(t, env, childWF("p")); st.Status != api.StatusCompleted || sc.events == 0 {
		t.Fatalf("p %s, %d events signalled in all: the test did not run its course", st.Status, sc.events)
	}
	sc.check(t)
}
