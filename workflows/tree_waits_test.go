package workflows

// The human waits of a run tree: a subagent's pause or plan approval is
// the root's wait, answered at the root and handed on.

import (
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

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
			var paused, after api.State
			env.RegisterDelayedCallback(func() {
				paused = queryState(t, env)
				env.SignalWorkflow(api.ResumeSignal, resume)
			}, 24*time.Hour) // far beyond any idle limit: a pause waits
			env.RegisterDelayedCallback(func() { after = queryState(t, env) }, 25*time.Hour)
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 26*time.Hour)
			env.ExecuteWorkflow(api.WorkflowName, rootInput("go"))
			completed(t, env)

			want := []api.Wait{{AgentID: "kid", Kind: api.WaitPaused, Reason: "The deploy key is missing."}}
			if paused.Status != api.StatusPaused || dump(paused.Waiting) != dump(want) {
				t.Errorf("root while the kid is paused: status %s, waiting %s", paused.Status, dump(paused.Waiting))
			}
			if sub := paused.Subagents["kid"]; sub.Status != api.StatusPaused || !sub.Paused || sub.PauseReason != "The deploy key is missing." {
				t.Errorf("root's entry for the paused kid = %s", dump(sub))
			}
			if after.Status != api.StatusWaitingUser || len(after.Waiting) != 0 {
				t.Errorf("root after the resume: status %s, waiting %s", after.Status, dump(after.Waiting))
			}
			kid := stateOf(t, env, childWF("kid"))
			if kid.Status != api.StatusCompleted || kid.Paused || len(kid.Todos) != 1 || kid.Todos[0].Status != "completed" {
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
		env.UpdateWorkflow(api.ApprovePlanUpdate, "", &updateCallback{
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
		}, api.ApprovalArgs{Approved: &yes, Feedback: "go ahead", AgentID: agentID})
	}
	for _, agentID := range []string{"", "kid"} {
		t.Run("one_waiting/agent_id="+agentID, func(t *testing.T) {
			env := newTreeEnv()
			scriptTree(env, map[string][]model.Response{
				"main": {calls(spawnCall("kid", "plan it", needs)), say("kid plans")},
				"kid":  kidScript("Kid"),
			})
			var waiting, answered, after api.State
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
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 50*time.Hour)
			env.ExecuteWorkflow(api.WorkflowName, rootInput("go"))
			completed(t, env)

			if waiting.Status != api.StatusAwaitingApproval || len(waiting.Waiting) != 1 ||
				waiting.Waiting[0].AgentID != "kid" || waiting.Waiting[0].Kind != api.WaitPlanApproval {
				t.Errorf("root while the kid's plan waits: status %s, waiting %s", waiting.Status, dump(waiting.Waiting))
			}
			if answered.Status == api.StatusAwaitingApproval || len(answered.Waiting) != 0 {
				t.Errorf("root as the approval is handed on: status %s, waiting %s", answered.Status, dump(answered.Waiting))
			}
			if again == nil || !strings.Contains(again.Error(), "no plan is waiting") {
				t.Errorf("a second approval right after the first: %v", again)
			}
			if after.Status != api.StatusWaitingUser || len(after.Waiting) != 0 {
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
		var waiting api.State
		env.RegisterDelayedCallback(func() {
			waiting = queryState(t, env)
			answer(env, t, "", &unnamed, nil)
		}, time.Hour)
		env.RegisterDelayedCallback(func() { answer(env, t, "kid2", nil, nil) }, 2*time.Hour)
		env.RegisterDelayedCallback(func() { answer(env, t, "kid1", nil, nil) }, 3*time.Hour)
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 4*time.Hour)
		env.ExecuteWorkflow(api.WorkflowName, rootInput("go"))
		completed(t, env)

		if waiting.Status != api.StatusAwaitingApproval || len(waiting.Waiting) != 2 {
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
			var after api.State
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.ResumeSignal, "here is the key") }, at)
			env.RegisterDelayedCallback(func() { after = queryState(t, env) }, 2*time.Hour)
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 3*time.Hour)
			env.ExecuteWorkflow(api.WorkflowName, rootInput("go"))
			completed(t, env)

			if after.Paused || after.Status != api.StatusWaitingUser || after.ModelCalls != 2 {
				t.Errorf("after the early resume: status %s, paused %v, %d model calls", after.Status, after.Paused, after.ModelCalls)
			}
			var res api.AgentResult
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
	var paused, after api.State
	env.RegisterDelayedCallback(func() {
		paused = queryState(t, env)
		env.SignalWorkflow(api.ResumeSignal, "the key is in place")
	}, 2*time.Hour)
	env.RegisterDelayedCallback(func() { after = queryState(t, env) }, 2*time.Hour+30*time.Second)
	env.ExecuteWorkflow(api.WorkflowName, in)
	completed(t, env)
	if paused.Status != api.StatusPaused || len(paused.Waiting) != 1 {
		t.Errorf("root two hours into the kid's pause: status %s, waiting %s", paused.Status, dump(paused.Waiting))
	}
	if after.Status != api.StatusWaitingUser {
		t.Errorf("root after the resume: status %s, want %s (its idle timeout starts again)", after.Status, api.StatusWaitingUser)
	}
}

// A step that a dependency fails (or unblocks) while the model writes what
// it meant as its final answer is heard before the turn ends, guards off
// too: the model is called again, with the news, instead of ending on a
// step it believes still blocked.
func TestStepSettledDuringTheFinalAnswerIsHeard(t *testing.T) {
	env := newTreeEnv()
	tm := scriptTree(env, reviewOfKid("work for an hour", say("kid is gone; the review is off.")), late{"kid", 1, time.Hour}, late{"main", 6, 2 * time.Hour})
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 3*time.Hour)
	env.ExecuteWorkflow(api.WorkflowName, rootInput("go"))
	var res api.AgentResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	in := tm.inputs("main")
	if len(in) != 7 || res.Reply != "kid is gone; the review is off." {
		t.Fatalf("main made %d model calls and replied %q; want a 7th call that hears of its failed step", len(in), res.Reply)
	}
	heard := false
	for _, m := range in[6].New.Messages {
		heard = heard || m.Name == api.NameTaskEvent && strings.Contains(m.Content, "step_failed")
	}
	if !heard {
		t.Errorf("the 7th call was not told of the failed step: %s", dump(in[6].New))
	}
}
