package todo

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// relay hands events of one agent to another, as the workflow does.
func relay(to *PlanState, evs []Event) []Event {
	var emitted []Event
	for _, ev := range evs {
		emitted = append(emitted, to.Receive(ev)...)
	}
	return emitted
}

// implementer plays scenario 06's subagent and returns its events.
func implementer(t *testing.T) []Event {
	t.Helper()
	child := NewPlanState("implementer")
	planOKCall(t, child, ToolCreatePlan, `{"title":"Implement CSV export","steps":["Write export.go"]}`)
	planOKCall(t, child, ToolStartPlan, `{}`)
	planOKCall(t, child, ToolCompleteStepWithOutput, `{"step_id":"step_1","output":{"passed":true,"files":["export.go"]},"result":"export.go written"}`)
	planOKCall(t, child, ToolCompletePlan, `{"status":"completed"}`)
	return child.Events
}

// TestScenario06 plays scenarios/06_subagent_dependency.json at the domain
// level, with the child's step_completed received after and before the
// parent's addDependentStep.
func TestScenario06(t *testing.T) {
	for _, childFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("childFirst=%v", childFirst), func(t *testing.T) {
			ps := NewPlanState("main")
			call := func(name, args string) PlanOutcome {
				t.Helper()
				out := ps.ApplyPlan(planCall(name, args), true)
				if out.NeedsApproval {
					out = ps.Approve("")
				}
				if out.Result.IsError {
					t.Fatalf("%s refused: %s", name, out.Result.Content)
				}
				return out
			}
			call(ToolCreatePlan, `{"title":"Export feature","steps":["Delegate the implementation"]}`)
			call(ToolStartPlan, `{}`)
			call(ToolSubscribe, `{"event_types":["step_completed"]}`)
			child := implementer(t)
			if childFirst {
				if got := relay(ps, child); len(got) != 0 {
					t.Fatalf("receiving before any dependency emitted %v", planTypes(got))
				}
			}
			out := call(ToolAddDependentStep, `{"description":"Review implementation results","depends_on":[{"agent_id":"implementer","step_id":"step_1"}]}`)
			want := []string{EventStepAdded, EventStepBlocked}
			if childFirst {
				want = append(want, EventStepUnblocked)
			}
			if !reflect.DeepEqual(planTypes(out.Events), want) {
				t.Errorf("addDependentStep events = %v, want %v", planTypes(out.Events), want)
			}
			if !strings.Contains(string(out.Events[1].Data), `"blocked_by":[{"agent_id":"implementer","step_id":"step_1"}]`) {
				t.Errorf("step_blocked data = %s", out.Events[1].Data)
			}
			if !childFirst {
				if ps.Plan.Steps[1].Status != StepBlocked || !reflect.DeepEqual(ps.BlockedOn(), []string{"implementer"}) {
					t.Fatalf("step_2 = %+v", ps.Plan.Steps[1])
				}
			}
			call(ToolSetStepStatus, `{"step_id":"step_1","status":"completed","result":"Delegated to implementer"}`)
			if !childFirst {
				if got := planTypes(relay(ps, child)); !reflect.DeepEqual(got, []string{EventStepUnblocked}) {
					t.Errorf("receiving the child's events emitted %v", got)
				}
			}
			s := ps.Plan.Steps[1]
			if s.Status != StepPending || len(s.BlockedBy) != 0 || ps.BlockedOn() != nil {
				t.Fatalf("step_2 after the child completed: %+v", s)
			}
			var got struct {
				Passed bool     `json:"passed"`
				Files  []string `json:"files"`
			}
			if err := json.Unmarshal(s.ReceivedOutputs["implementer:step_1"], &got); err != nil || !got.Passed || got.Files[0] != "export.go" {
				t.Errorf("received_outputs = %s", s.ReceivedOutputs["implementer:step_1"])
			}
			notes := ps.TakeNotifications()
			// Own step_unblocked events are notified too (the model must hear
			// that a step it waited on unblocked), unless addDependentStep's
			// result already said so (childFirst). Not a plan-boundary fix:
			// this expectation changed with that notification rule.
			wantNotes := 2
			if childFirst {
				wantNotes = 1
			}
			if len(notes) != wantNotes || notes[0].Type != EventStepCompleted || notes[0].AgentID != "implementer" ||
				(!childFirst && (notes[1].Type != EventStepUnblocked || notes[1].AgentID != "main")) {
				t.Errorf("notifications = %+v", notes)
			}
			if txt := NotificationText(notes[0]); !strings.Contains(txt, "implementer") || !strings.Contains(txt, `"passed":true`) {
				t.Errorf("notification text = %q", txt)
			}
			call(ToolSetStepStatus, `{"step_id":"step_2","status":"completed","result":"Reviewed export.go; tests pass"}`)
			call(ToolCompletePlan, `{"status":"completed","summary":"Export built and reviewed"}`)
			p := ps.Current()
			if p.Status != PlanCompleted || p.Steps[0].Description != "Delegate the implementation" || p.Steps[1].Description != "Review implementation results" {
				t.Errorf("plan = %+v", p)
			}
			b, _ := json.Marshal(ps)
			if !strings.Contains(string(b), `"received_outputs":{"implementer:step_1":{"passed":true,"files":["export.go"]}}`) {
				t.Errorf("state JSON lacks the received output: %s", b)
			}
			for i, ev := range ps.Events {
				if ev.EventID != i+1 {
					t.Errorf("event %d has id %d", i, ev.EventID)
				}
			}
		})
	}
}

func TestDependencyPartialResolution(t *testing.T) {
	ps := planStarted(t, "main", "a")
	planOKCall(t, ps, ToolAddDependentStep, `{"description":"merge","depends_on":[{"agent_id":"x","step_id":"step_1"},{"agent_id":"y","step_id":"step_2"},{"agent_id":"x","step_id":"step_1"}]}`)
	s := ps.Plan.Steps[1]
	if len(s.DependsOn) != 2 || len(s.BlockedBy) != 2 {
		t.Fatalf("duplicate refs kept: %+v", s)
	}
	// Unrelated events change nothing.
	for _, ev := range []Event{
		{Type: EventStepCompleted, AgentID: "x", StepID: "step_2"},
		{Type: EventStepCompleted, AgentID: "z", StepID: "step_1"},
		{Type: EventStepStarted, AgentID: "x", StepID: "step_1"},
	} {
		if got := ps.Receive(ev); len(got) != 0 {
			t.Errorf("%+v emitted %v", ev, planTypes(got))
		}
	}
	if got := ps.Receive(Event{Type: EventStepCompleted, AgentID: "x", PlanID: "plan_1", StepID: "step_1", Data: json.RawMessage(`{"result":"no structured output"}`)}); len(got) != 0 {
		t.Errorf("first of two dependencies emitted %v", planTypes(got))
	}
	s = ps.Plan.Steps[1]
	if s.Status != StepBlocked || !reflect.DeepEqual(s.BlockedBy, []Ref{{"y", "step_2"}}) || string(s.ReceivedOutputs["x:step_1"]) != `{"result":"no structured output"}` {
		t.Errorf("after one dependency: %+v", s)
	}
	got := ps.Receive(Event{Type: EventStepCompleted, AgentID: "y", StepID: "step_2", Data: json.RawMessage(`{"output":{"ok":1},"provides":"report"}`)})
	if !reflect.DeepEqual(planTypes(got), []string{EventStepUnblocked}) {
		t.Fatalf("second dependency emitted %v", planTypes(got))
	}
	s = ps.Plan.Steps[1]
	if s.Status != StepPending || string(s.ReceivedOutputs["y:step_2"]) != `{"ok":1}` || string(s.ReceivedOutputs["report"]) != `{"ok":1}` {
		t.Errorf("after both: %+v", s)
	}
	if !strings.Contains(string(got[0].Data), `"received":["report","x:step_1","y:step_2"]`) {
		t.Errorf("step_unblocked data = %s", got[0].Data)
	}
	// The evidence gate is now satisfied.
	planOKCall(t, ps, ToolSetStepStatus, `{"step_id":"step_2","status":"completed","result":"merged"}`)
}

func TestProvidesTravelsWithCompletion(t *testing.T) {
	mid := planStarted(t, "mid", "a")
	planOKCall(t, mid, ToolAddDependentStep, `{"step_id":"step_1","provides":"summary","depends_on":[{"agent_id":"leaf","step_id":"step_1"}]}`)
	mid.Receive(Event{Type: EventStepCompleted, AgentID: "leaf", StepID: "step_1", Data: json.RawMessage(`{"output":{"n":1}}`)})
	out := planOKCall(t, mid, ToolCompleteStepWithOutput, `{"step_id":"step_1","output":{"total":3}}`)
	if len(out.Events) != 1 || !strings.Contains(string(out.Events[0].Data), `"provides":"summary"`) || !strings.Contains(string(out.Events[0].Data), `"output":{"total":3}`) {
		t.Fatalf("step_completed = %+v %s", out.Events, out.Events[0].Data)
	}
	root := planStarted(t, "root", "a")
	planOKCall(t, root, ToolAddDependentStep, `{"step_id":"step_1","depends_on":[{"agent_id":"mid","step_id":"step_1"}]}`)
	relay(root, mid.Events)
	s := root.Plan.Steps[0]
	if s.Status != StepPending || string(s.ReceivedOutputs["summary"]) != `{"total":3}` || string(s.ReceivedOutputs["mid:step_1"]) != `{"total":3}` {
		t.Errorf("root step = %+v", s)
	}
}

func TestFailedDependency(t *testing.T) {
	failing := func(t *testing.T) []Event {
		child := planStarted(t, "implementer", "Write export.go", "Test it")
		planOKCall(t, child, ToolSetStepStatus, `{"step_id":"step_1","status":"failed","error":"disk full"}`)
		return child.Events
	}
	const dep = `{"description":"Review","depends_on":[{"agent_id":"implementer","step_id":"step_1"}]}`
	check := func(t *testing.T, ps *PlanState, evs []Event, want ...string) {
		t.Helper()
		s := ps.Plan.Steps[len(ps.Plan.Steps)-1]
		if s.Status != StepFailed {
			t.Fatalf("dependent step = %+v", s)
		}
		for _, w := range want {
			if !strings.Contains(s.Error, w) {
				t.Errorf("error %q lacks %q", s.Error, w)
			}
		}
		last := evs[len(evs)-1]
		if last.Type != EventStepFailed || last.AgentID != ps.AgentID || !strings.Contains(string(last.Data), `"dependency":{"agent_id":"implementer","step_id":"step_1"}`) {
			t.Errorf("last event = %+v %s", last, last.Data)
		}
		// Failed visibly: no longer counted as blocked, and it cannot be
		// completed without its dependency's output.
		if ps.BlockedOn() != nil {
			t.Errorf("BlockedOn = %v", ps.BlockedOn())
		}
		planRefused(t, ps, ToolSetStepStatus, `{"step_id":"`+s.StepID+`","status":"completed"}`, "implementer:step_1", "has not been received")
		planOKCall(t, ps, ToolSetStepStatus, `{"step_id":"`+s.StepID+`","status":"skipped","result":"no implementation to review"}`)
	}

	t.Run("live", func(t *testing.T) {
		ps := planStarted(t, "main", "a")
		planOKCall(t, ps, ToolAddDependentStep, dep)
		check(t, ps, relay(ps, failing(t)), "implementer:step_1", "failed", "disk full")
	})
	t.Run("already in the log", func(t *testing.T) {
		ps := planStarted(t, "main", "a")
		relay(ps, failing(t))
		out := planOKCall(t, ps, ToolAddDependentStep, dep)
		if !reflect.DeepEqual(planTypes(out.Events), []string{EventStepAdded, EventStepBlocked, EventStepFailed}) {
			t.Errorf("events = %v", planTypes(out.Events))
		}
		if !strings.Contains(out.Result.Content, "failed at once") {
			t.Errorf("result = %s", out.Result.Content)
		}
		check(t, ps, out.Events, "disk full")
	})
	t.Run("skipped", func(t *testing.T) {
		ps := planStarted(t, "main", "a")
		planOKCall(t, ps, ToolAddDependentStep, dep)
		check(t, ps, ps.Receive(Event{Type: EventStepSkipped, AgentID: "implementer", StepID: "step_1", Data: json.RawMessage(`{"result":"not needed"}`)}),
			"was skipped", "not needed")
	})
	t.Run("plan failed without a list of unfinished steps", func(t *testing.T) {
		ps := planStarted(t, "main", "a")
		planOKCall(t, ps, ToolAddDependentStep, dep)
		check(t, ps, ps.Receive(Event{Type: EventPlanFailed, AgentID: "implementer", PlanID: "plan_4"}),
			"plan plan_4", "no summary was given")
	})
	t.Run("failed without a reason", func(t *testing.T) {
		ps := planStarted(t, "main", "a")
		planOKCall(t, ps, ToolAddDependentStep, dep)
		check(t, ps, ps.Receive(Event{Type: EventStepFailed, AgentID: "implementer", StepID: "step_1"}), "no reason was given")
	})
	t.Run("plan failed", func(t *testing.T) {
		child := planStarted(t, "implementer", "Write export.go")
		planOKCall(t, child, ToolCompletePlan, `{"status":"failed","summary":"no access"}`)
		ps := planStarted(t, "main", "a")
		planOKCall(t, ps, ToolAddDependentStep, dep)
		check(t, ps, relay(ps, child.Events), "plan plan_1", "failed", "no access")
	})
	t.Run("plan cancelled", func(t *testing.T) {
		child := NewPlanState("implementer")
		planOKCall(t, child, ToolCreatePlan, `{"title":"X","steps":["a"]}`)
		planOKCall(t, child, ToolCompletePlan, `{"status":"cancelled","summary":"changed my mind"}`)
		ps := planStarted(t, "main", "a")
		relay(ps, child.Events)
		out := planOKCall(t, ps, ToolAddDependentStep, dep)
		check(t, ps, out.Events, "was cancelled", "changed my mind")
	})
	t.Run("a later completion wins over an earlier failure", func(t *testing.T) {
		ps := planStarted(t, "main", "a")
		relay(ps, failing(t))
		ps.Receive(Event{Type: EventStepCompleted, AgentID: "implementer", PlanID: "plan_2", StepID: "step_1", Data: json.RawMessage(`{"output":{"ok":true}}`)})
		out := planOKCall(t, ps, ToolAddDependentStep, dep)
		if !reflect.DeepEqual(planTypes(out.Events), []string{EventStepAdded, EventStepBlocked, EventStepUnblocked}) {
			t.Errorf("events = %v", planTypes(out.Events))
		}
	})
}

func TestPlanEndSparesStepsItDidNotHold(t *testing.T) {
	ps := planStarted(t, "main", "a")
	planOKCall(t, ps, ToolAddDependentStep, `{"description":"Review","depends_on":[{"agent_id":"implementer","step_id":"step_3"}]}`)
	child := planStarted(t, "implementer", "a", "b")
	planOKCall(t, child, ToolCompletePlan, `{"status":"cancelled"}`)
	if got := relay(ps, child.Events); len(got) != 0 {
		t.Errorf("a cancelled plan without step_3 emitted %v", planTypes(got))
	}
	if ps.Plan.Steps[1].Status != StepBlocked {
		t.Errorf("step = %+v", ps.Plan.Steps[1])
	}
	// A completed step of a plan that later fails stays a resolved dependency.
	ps = planStarted(t, "main", "a")
	planOKCall(t, ps, ToolAddDependentStep, `{"description":"Review","depends_on":[{"agent_id":"implementer","step_id":"step_1"}]}`)
	child = planStarted(t, "implementer", "a", "b")
	planOKCall(t, child, ToolSetStepStatus, `{"step_id":"step_1","status":"completed","result":"done"}`)
	planOKCall(t, child, ToolCompletePlan, `{"status":"failed"}`)
	relay(ps, child.Events)
	if s := ps.Plan.Steps[1]; s.Status != StepPending || string(s.ReceivedOutputs["implementer:step_1"]) != `{"result":"done"}` {
		t.Errorf("step = %+v", s)
	}
}

func TestAgentEnded(t *testing.T) {
	ps := planStarted(t, "main", "a")
	planOKCall(t, ps, ToolAddDependentStep, `{"description":"on a","depends_on":[{"agent_id":"alpha","step_id":"step_1"}]}`)
	planOKCall(t, ps, ToolAddDependentStep, `{"description":"on b","depends_on":[{"agent_id":"beta","step_id":"step_1"}]}`)
	planOKCall(t, ps, ToolAddDependentStep, `{"description":"on both","depends_on":[{"agent_id":"beta","step_id":"step_2"},{"agent_id":"alpha","step_id":"step_2"}]}`)
	if got := ps.AgentEnded("gamma", "failed"); len(got) != 0 {
		t.Errorf("unrelated agent: %v", planTypes(got))
	}
	got := ps.AgentEnded("alpha", "completed")
	if !reflect.DeepEqual(planTypes(got), []string{EventStepFailed, EventStepFailed}) || got[0].StepID != "step_2" || got[1].StepID != "step_4" {
		t.Fatalf("AgentEnded events = %+v", got)
	}
	if !reflect.DeepEqual(stepStatuses(ps.Plan), []string{StepPending, StepFailed, StepBlocked, StepFailed}) {
		t.Errorf("statuses = %v", stepStatuses(ps.Plan))
	}
	if e := ps.Plan.Steps[1].Error; !strings.Contains(e, "agent alpha ended (completed)") || !strings.Contains(e, "alpha:step_1") {
		t.Errorf("error = %q", e)
	}
	if !reflect.DeepEqual(ps.BlockedOn(), []string{"beta"}) {
		t.Errorf("BlockedOn = %v", ps.BlockedOn())
	}
	if got := ps.AgentEnded("alpha", "completed"); len(got) != 0 {
		t.Errorf("second AgentEnded emitted %v", planTypes(got))
	}
	if got := NewPlanState("x").AgentEnded("alpha", "failed"); got != nil {
		t.Errorf("no plan: %v", got)
	}
}

func TestAddDependentStepRules(t *testing.T) {
	ps := NewPlanState("main")
	const deps = `"depends_on":[{"agent_id":"kid","step_id":"step_1"}]`
	planRefused(t, ps, ToolAddDependentStep, `{"description":"x",`+deps+`}`, "no plan yet")
	planOKCall(t, ps, ToolCreatePlan, `{"title":"T","steps":["a","b","c"]}`)
	tests := []struct {
		args string
		want []string
	}{
		{`{` + deps + `}`, []string{"exactly one of", "description", "step_id"}},
		{`{"description":"x","step_id":"step_1",` + deps + `}`, []string{"exactly one of"}},
		{`{"step_id":"step_1","after_step_id":"step_2",` + deps + `}`, []string{"after_step_id"}},
		{`{"description":"x"}`, []string{`"depends_on" is missing`}},
		{`{"description":"x","depends_on":[]}`, []string{`"depends_on" is empty`}},
		{`{"description":"x","depends_on":{"agent_id":"kid"}}`, []string{"must be an array"}},
		{`{"description":"x","depends_on":[{"agent_id":"kid"}]}`, []string{"depends_on[0]", "agent_id and step_id"}},
		{`{"description":"x","depends_on":["kid:step_1"]}`, []string{"depends_on[0] must be an object"}},
		{`{"description":"x","depends_on":[{"agent_id":"main","step_id":"step_1"}]}`, []string{"main:step_1", "your own plan"}},
		{`{"description":"x","provides":7,` + deps + `}`, []string{`"provides" must be a string`}},
		{`{"description":"x","after_step_id":"step_7",` + deps + `}`, []string{`unknown step_id "step_7"`}},
		{`{"step_id":"step_7",` + deps + `}`, []string{`unknown step_id "step_7"`, "step_1, step_2, step_3"}},
	}
	for _, tt := range tests {
		planRefused(t, ps, ToolAddDependentStep, tt.args, tt.want...)
	}
	if len(ps.Plan.Steps) != 3 {
		t.Fatalf("refused calls added steps: %+v", ps.Plan.Steps)
	}

	// Works before the plan starts; inserts after after_step_id.
	out := planOKCall(t, ps, ToolAddDependentStep, `{"description":"wait","after_step_id":"step_1","provides":"review",`+deps+`}`)
	s := ps.Plan.Steps[1]
	if s.StepID != "step_4" || s.Sequence != 2 || s.Status != StepBlocked || s.Provides != "review" {
		t.Errorf("new step = %+v", s)
	}
	for _, w := range []string{`"status":"blocked"`, `"blocked_by":[{"agent_id":"kid","step_id":"step_1"}]`, `"sequence":2`} {
		if !strings.Contains(out.Result.Content, w) {
			t.Errorf("result %s lacks %s", out.Result.Content, w)
		}
	}

	// jaato's form: an existing step.
	planOKCall(t, ps, ToolStartPlan, `{}`)
	planOKCall(t, ps, ToolSetStepStatus, `{"step_id":"step_2","status":"in_progress"}`)
	out = planOKCall(t, ps, ToolAddDependentStep, `{"step_id":"step_2",`+deps+`}`)
	if !reflect.DeepEqual(planTypes(out.Events), []string{EventStepBlocked}) || ps.Plan.Steps[2].Status != StepBlocked {
		t.Errorf("existing step: %v %+v", planTypes(out.Events), ps.Plan.Steps[2])
	}
	planOKCall(t, ps, ToolSetStepStatus, `{"step_id":"step_1","status":"completed"}`)
	planRefused(t, ps, ToolAddDependentStep, `{"step_id":"step_1",`+deps+`}`, "already completed")

	// Both steps waiting on kid:step_1 resolve from one event.
	got := ps.Receive(Event{Type: EventStepCompleted, AgentID: "kid", StepID: "step_1", Data: json.RawMessage(`{"output":{"v":2}}`)})
	if !reflect.DeepEqual(planTypes(got), []string{EventStepUnblocked, EventStepUnblocked}) {
		t.Errorf("events = %v", planTypes(got))
	}
	// Re-adding a resolved dependency: blocked, then unblocked at once.
	out = planOKCall(t, ps, ToolAddDependentStep, `{"step_id":"step_2",`+deps+`}`)
	if !reflect.DeepEqual(planTypes(out.Events), []string{EventStepBlocked, EventStepUnblocked}) || ps.Plan.Steps[2].Status != StepPending {
		t.Errorf("re-add: %v %+v", planTypes(out.Events), ps.Plan.Steps[2])
	}
	planOKCall(t, ps, ToolCompletePlan, `{"status":"failed"}`)
	planRefused(t, ps, ToolAddDependentStep, `{"description":"x",`+deps+`}`, "already failed")
}

func TestCompleteStepWithOutput(t *testing.T) {
	ps := NewPlanState("main")
	planOKCall(t, ps, ToolCreatePlan, `{"title":"T","steps":["a","b"]}`)
	planRefused(t, ps, ToolCompleteStepWithOutput, `{"step_id":"step_1","output":{}}`, "has not been started")
	planOKCall(t, ps, ToolStartPlan, `{}`)
	tests := []struct {
		args string
		want []string
	}{
		{`{"output":{}}`, []string{`"step_id" is missing`}},
		{`{"step_id":"step_1"}`, []string{`"output" is missing`}},
		{`{"step_id":"step_1","output":null}`, []string{`"output" is missing`}},
		{`{"step_id":"step_1","output":[1,2]}`, []string{`"output" must be a JSON object`}},
		{`{"step_id":"step_1","output":"done"}`, []string{`"output" must be a JSON object`}},
		{`{"step_id":"step_1","output":{},"result":5}`, []string{`"result" must be a string`}},
		{`{"step_id":"step_5","output":{}}`, []string{`unknown step_id "step_5"`}},
		{`{"step_id":"step_1","output":{"passed":false},"result":"Tests failed to compile"}`, []string{`"failed to"`, "failed"}},
	}
	for _, tt := range tests {
		planRefused(t, ps, ToolCompleteStepWithOutput, tt.args, tt.want...)
	}
	out := planOKCall(t, ps, ToolCompleteStepWithOutput, `{"step_id":"step_1","output":{ "passed" : true, "n": [1, 2] },"result":"ok"}`)
	s := ps.Plan.Steps[0]
	if s.Status != StepCompleted || string(s.Output) != `{"passed":true,"n":[1,2]}` || s.Result != "ok" {
		t.Errorf("step = %+v (output %s)", s, s.Output)
	}
	if !reflect.DeepEqual(planTypes(out.Events), []string{EventStepCompleted}) ||
		string(out.Events[0].Data) != `{"description":"a","output":{"passed":true,"n":[1,2]},"result":"ok"}` {
		t.Errorf("events = %+v %s", out.Events, out.Events[0].Data)
	}
	// A blocked step cannot be completed this way either.
	planOKCall(t, ps, ToolAddDependentStep, `{"step_id":"step_2","depends_on":[{"agent_id":"kid","step_id":"step_1"}]}`)
	planRefused(t, ps, ToolCompleteStepWithOutput, `{"step_id":"step_2","output":{}}`, "blocked", "kid:step_1")
	planRefused(t, ps, ToolSetStepStatus, `{"step_id":"step_2","status":"skipped"}`, "blocked", "kid:step_1")
}

func TestGetBlockedSteps(t *testing.T) {
	ps := NewPlanState("main")
	out := planOKCall(t, ps, ToolGetBlockedSteps, `{}`)
	if !strings.Contains(out.Result.Content, `"count":0`) {
		t.Errorf("no plan: %s", out.Result.Content)
	}
	planRefused(t, ps, ToolGetBlockedSteps, `{"plan_id":"plan_1"}`, "no plan yet")
	ps = planStarted(t, "main", "a", "b")
	out = planOKCall(t, ps, ToolGetBlockedSteps, `{}`)
	if !strings.Contains(out.Result.Content, `"blocked_steps":[],"count":0`) || !strings.Contains(out.Result.Content, "No step is blocked") {
		t.Errorf("none blocked: %s", out.Result.Content)
	}
	planOKCall(t, ps, ToolAddDependentStep, `{"step_id":"step_2","depends_on":[{"agent_id":"x","step_id":"step_1"},{"agent_id":"y","step_id":"step_1"}]}`)
	ps.Receive(Event{Type: EventStepCompleted, AgentID: "x", StepID: "step_1", Data: json.RawMessage(`{"output":{"k":1}}`)})
	out = planOKCall(t, ps, ToolGetBlockedSteps, `{"plan_id":"plan_1"}`)
	want := `"blocked_steps":[{"step_id":"step_2","sequence":2,"description":"b","blocked_by":[{"agent_id":"y","step_id":"step_1"}],` +
		`"depends_on":[{"agent_id":"x","step_id":"step_1"},{"agent_id":"y","step_id":"step_1"}],"received_outputs":{"x:step_1":{"k":1}}}],"count":1`
	if !strings.Contains(out.Result.Content, want) {
		t.Errorf("getBlockedSteps = %s", out.Result.Content)
	}
	planRefused(t, ps, ToolGetBlockedSteps, `{"plan_id":"plan_9"}`, `"plan_9"`, "plan_1")
	planRefused(t, ps, ToolGetBlockedSteps, `{"plan_id":9}`, `"plan_id" must be a string`)
}

func TestReceive(t *testing.T) {
	ps := NewPlanState("main")
	if got := ps.Receive(Event{Type: EventPlanCreated, AgentID: "main"}); got != nil || len(ps.Events) != 0 {
		t.Errorf("own event recorded: %v", ps.Events)
	}
	if got := ps.Receive(Event{Type: EventPlanCreated}); got != nil || len(ps.Events) != 0 {
		t.Errorf("event without agent recorded: %v", ps.Events)
	}
	// No plan: recorded, nothing resolved.
	ps.Receive(Event{EventID: 40, Type: EventStepCompleted, AgentID: "kid", PlanID: "plan_3", StepID: "step_1"})
	if len(ps.Events) != 1 || ps.Events[0].EventID != 1 || ps.Events[0].AgentID != "kid" || ps.Events[0].PlanID != "plan_3" || string(ps.Events[0].Data) != `{}` {
		t.Errorf("recorded = %+v", ps.Events)
	}
	planOKCall(t, ps, ToolCreatePlan, `{"title":"T","steps":["a"]}`)
	ps.Receive(Event{EventID: 41, Type: EventStepAdded, AgentID: "kid", Data: json.RawMessage(`null`)})
	if n := len(ps.Events); ps.Events[n-1].EventID != 3 || string(ps.Events[n-1].Data) != `{}` {
		t.Errorf("ids = %+v", ps.Events)
	}
}

func TestSubscriptions(t *testing.T) {
	ps := planStarted(t, "main", "a", "b")
	tests := []struct {
		args string
		want []string
	}{
		{`{}`, []string{`"event_types" is missing or empty`, "step_completed"}},
		{`{"event_types":[]}`, []string{`"event_types" is missing or empty`}},
		{`{"event_types":"step_completed"}`, []string{`"event_types" must be an array of strings`}},
		{`{"event_types":["step_done"]}`, []string{`unknown event type "step_done"`, "step_completed"}},
		{`{"event_types":["step_completed"],"agent_id":"main"}`, []string{"your own agent id"}},
		{`{"event_types":["step_completed"],"agent_id":3}`, []string{`"agent_id" must be a string`}},
	}
	for _, tt := range tests {
		planRefused(t, ps, ToolSubscribe, tt.args, tt.want...)
	}

	// Events of others before any subscription; own events all along.
	ps.Receive(Event{Type: EventPlanCreated, AgentID: "kid", PlanID: "plan_1", Data: json.RawMessage(`{"title":"K"}`)})
	ps.Receive(Event{Type: EventStepCompleted, AgentID: "kid", PlanID: "plan_1", StepID: "step_1"})
	ps.Receive(Event{Type: EventStepCompleted, AgentID: "other", PlanID: "plan_1", StepID: "step_2"})
	if got := ps.TakeNotifications(); got != nil {
		t.Errorf("no subscription yet, got %v", got)
	}

	out := planOKCall(t, ps, ToolSubscribe, `{"event_types":["step_completed","step_completed","plan_created","step_started"]}`)
	if !strings.Contains(out.Result.Content, `"subscription_id":"sub_1"`) || !strings.Contains(out.Result.Content, "3 earlier event(s)") {
		t.Errorf("subscribe = %s", out.Result.Content)
	}
	if !reflect.DeepEqual(ps.Subscriptions[0].EventTypes, []string{"step_completed", "plan_created", "step_started"}) {
		t.Errorf("event types = %v", ps.Subscriptions[0].EventTypes)
	}
	// Same filter again: the same subscription.
	out = planOKCall(t, ps, ToolSubscribe, `{"event_types":["plan_created","step_started","step_completed"],"agent_id":"*"}`)
	if !strings.Contains(out.Result.Content, `"subscription_id":"sub_1"`) || len(ps.Subscriptions) != 1 {
		t.Errorf("duplicate = %s", out.Result.Content)
	}
	planOKCall(t, ps, ToolSetStepStatus, `{"step_id":"step_1","status":"in_progress"}`) // own step_started: never delivered
	got := ps.TakeNotifications()
	if len(got) != 3 || got[0].Type != EventPlanCreated || got[1].AgentID != "kid" || got[2].AgentID != "other" {
		t.Fatalf("notifications = %+v", got)
	}
	for i := 1; i < len(got); i++ {
		if got[i].EventID <= got[i-1].EventID {
			t.Errorf("not in event_id order: %+v", got)
		}
	}
	if again := ps.TakeNotifications(); len(again) != 0 {
		t.Errorf("delivered twice: %+v", again)
	}

	// A narrower second subscription: matching events are delivered once.
	planOKCall(t, ps, ToolSubscribe, `{"event_types":["step_completed","step_failed"],"agent_id":"kid","step_id":"step_3"}`)
	planOKCall(t, ps, ToolSubscribe, `{"event_types":["step_failed"],"plan_id":"plan_7"}`)
	ps.Receive(Event{Type: EventStepCompleted, AgentID: "kid", PlanID: "plan_1", StepID: "step_3"})      // sub_1 and sub_2
	ps.Receive(Event{Type: EventStepFailed, AgentID: "kid", PlanID: "plan_1", StepID: "step_3"})         // sub_2
	ps.Receive(Event{Type: EventStepFailed, AgentID: "kid", PlanID: "plan_1", StepID: "step_4"})         // none
	ps.Receive(Event{Type: EventStepFailed, AgentID: "other", PlanID: "plan_7", StepID: "step_4"})       // sub_3
	ps.Receive(Event{Type: EventStepBlocked, AgentID: "other", PlanID: "plan_1", StepID: "step_4"})      // none
	ps.Receive(Event{Type: EventPlanCreated, AgentID: "other", PlanID: "plan_2", StepID: "", Data: nil}) // sub_1
	got = ps.TakeNotifications()
	var desc []string
	for _, ev := range got {
		desc = append(desc, ev.AgentID+"/"+ev.Type+"/"+ev.StepID)
	}
	want := []string{"kid/step_completed/step_3", "kid/step_failed/step_3", "other/step_failed/step_4", "other/plan_created/"}
	if !reflect.DeepEqual(desc, want) {
		t.Errorf("notifications = %v, want %v", desc, want)
	}

	// A new subscription picks up past events nobody delivered.
	planOKCall(t, ps, ToolSubscribe, `{"event_types":["step_blocked"]}`)
	if got := ps.TakeNotifications(); len(got) != 1 || got[0].Type != EventStepBlocked {
		t.Errorf("past event for a new subscription: %+v", got)
	}

	out = planOKCall(t, ps, ToolListSubscriptions, `{}`)
	if !strings.Contains(out.Result.Content, `"count":4`) || !strings.Contains(out.Result.Content, `{"id":"sub_2","agent_id":"kid","event_types":["step_completed","step_failed"],"step_id":"step_3"}`) {
		t.Errorf("list = %s", out.Result.Content)
	}
	planRefused(t, ps, ToolUnsubscribe, `{}`, `"subscription_id" is missing`)
	planRefused(t, ps, ToolUnsubscribe, `{"subscription_id":"sub_9"}`, `"sub_9"`, "sub_1, sub_2, sub_3, sub_4")
	planOKCall(t, ps, ToolUnsubscribe, `{"subscription_id":"sub_1"}`)
	planOKCall(t, ps, ToolUnsubscribe, `{"subscription_id":"sub_3"}`)
	ps.Receive(Event{Type: EventStepCompleted, AgentID: "zed", StepID: "step_1"})
	if got := ps.TakeNotifications(); len(got) != 0 {
		t.Errorf("delivered after unsubscribe: %+v", got)
	}
	out = planOKCall(t, ps, ToolSubscribe, `{"event_types":["step_completed"]}`)
	if !strings.Contains(out.Result.Content, `"sub_5"`) {
		t.Errorf("ids must keep counting: %s", out.Result.Content)
	}
	if got := ps.TakeNotifications(); len(got) != 1 || got[0].AgentID != "zed" {
		t.Errorf("after resubscribing: %+v", got)
	}
	for _, s := range ps.Subscriptions {
		planOKCall(t, ps, ToolUnsubscribe, `{"subscription_id":"`+s.ID+`"}`)
	}
	planRefused(t, ps, ToolUnsubscribe, `{"subscription_id":"sub_1"}`, "no subscriptions")
	if out := planOKCall(t, ps, ToolListSubscriptions, ``); out.Result.Content != `{"subscriptions":[],"count":0}` {
		t.Errorf("empty list = %s", out.Result.Content)
	}
}

func TestGetTaskEvents(t *testing.T) {
	ps := planStarted(t, "main", "a", "b") // events 1, 2 (own)
	for i := 0; i < 30; i++ {
		agent := "kid"
		if i%3 == 0 {
			agent = "pal"
		}
		ps.Receive(Event{Type: EventStepCompleted, AgentID: agent, StepID: fmt.Sprintf("step_%d", i)}) // events 3..32
	}
	planOKCall(t, ps, ToolSetStepStatus, `{"step_id":"step_1","status":"in_progress"}`) // event 33 (own)

	read := func(args string) (ids []int) {
		t.Helper()
		out := planOKCall(t, ps, ToolGetTaskEvents, args)
		var r struct {
			Events []Event `json:"events"`
			Count  int     `json:"count"`
			Last   int     `json:"last_event_id"`
		}
		if err := json.Unmarshal([]byte(out.Result.Content), &r); err != nil {
			t.Fatalf("%s: %v", out.Result.Content, err)
		}
		for _, e := range r.Events {
			ids = append(ids, e.EventID)
		}
		if r.Count != len(ids) || (len(ids) > 0 && r.Last != ids[len(ids)-1]) {
			t.Errorf("%s: count %d last %d for %v", args, r.Count, r.Last, ids)
		}
		return ids
	}
	seq := func(from, to int) []int {
		var out []int
		for i := from; i <= to; i++ {
			out = append(out, i)
		}
		return out
	}
	tests := []struct {
		args string
		want []int
	}{
		{`{}`, seq(14, 33)},
		{``, seq(14, 33)},
		{`{"limit":2}`, []int{32, 33}},
		{`{"limit":2.0}`, []int{32, 33}},
		{`{"limit":500}`, seq(1, 33)},
		{`{"after_event":30}`, []int{31, 32, 33}},
		{`{"after_event":33}`, nil},
		{`{"agent_id":"main"}`, []int{1, 2, 33}},
		{`{"agent_id":"pal","limit":3}`, []int{24, 27, 30}},
		{`{"agent_id":"*","limit":1}`, []int{33}},
		{`{"event_types":["plan_created","step_started"]}`, []int{1, 33}},
		{`{"event_types":["step_completed"],"agent_id":"pal","after_event":20,"limit":1}`, []int{30}},
	}
	for _, tt := range tests {
		if got := read(tt.args); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("getTaskEvents %s = %v, want %v", tt.args, got, tt.want)
		}
	}
	errs := []struct {
		args string
		want []string
	}{
		{`{"limit":0}`, []string{"at least 1"}},
		{`{"limit":"5"}`, []string{`"limit" must be a whole number`}},
		{`{"limit":2.5}`, []string{`"limit" must be a whole number`}},
		{`{"after_event":-1}`, []string{"after_event must be 0 or more"}},
		{`{"after_event":"7"}`, []string{`"after_event" must be a whole number`}},
		{`{"event_types":["nope"]}`, []string{`unknown event type "nope"`}},
		{`{"agent_id":["kid"]}`, []string{`"agent_id" must be a string`}},
	}
	for _, e := range errs {
		planRefused(t, ps, ToolGetTaskEvents, e.args, e.want...)
	}
}
