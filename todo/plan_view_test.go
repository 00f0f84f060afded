package todo

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestPlanChecklistGolden(t *testing.T) {
	if got := PlanChecklist(nil); got != "No plan yet." {
		t.Errorf("nil plan: %q", got)
	}
	ps := planStarted(t, "main", "Review current auth implementation", "Extract token validation to separate module", "Update imports in dependent files")
	ps.Plan.Title = "Refactor auth module"
	planOKCall(t, ps, ToolSetStepStatus, `{"step_id":"step_1","status":"completed","result":"found it"}`)
	planOKCall(t, ps, ToolSetStepStatus, `{"step_id":"step_2","status":"failed","error":"circular imports"}`)
	planOKCall(t, ps, ToolSetStepStatus, `{"step_id":"step_3","status":"skipped"}`)
	want := `Current Plan: Refactor auth module
Status: active

Steps:
  [x] step_1: Review current auth implementation
  [!] step_2: Extract token validation to separate module
  [-] step_3: Update imports in dependent files

Progress: 1/3 (33.3%)`
	if got := PlanChecklist(ps.Plan); got != want {
		t.Errorf("checklist:\n%s\nwant:\n%s", got, want)
	}

	// Every marker, a blocked step's wait, an inserted step, 50 -> "50".
	ps = planStarted(t, "main", "a", "b", "c", "d")
	ps.Plan.Title = "Every\nmarker"
	planOKCall(t, ps, ToolSetStepStatus, `{"step_id":"step_1","status":"completed"}`)
	planOKCall(t, ps, ToolSetStepStatus, `{"step_id":"step_2","status":"in_progress"}`)
	planOKCall(t, ps, ToolSetStepStatus, `{"step_id":"step_4","status":"completed"}`)
	planOKCall(t, ps, ToolAddDependentStep, `{"description":"review  the\nresults","after_step_id":"step_1","depends_on":[{"agent_id":"implementer","step_id":"step_1"},{"agent_id":"tester","step_id":"step_2"}]}`)
	planOKCall(t, ps, ToolSetStepStatus, `{"step_id":"step_3","status":"skipped"}`)
	planOKCall(t, ps, ToolAddStep, `{"description":"e"}`)
	planOKCall(t, ps, ToolAddStep, `{"description":"f"}`)
	planOKCall(t, ps, ToolSetStepStatus, `{"step_id":"step_7","status":"failed"}`)
	want = `Current Plan: Every marker
Status: active

Steps:
  [x] step_1: a
  [~] step_5: review the results (waiting on implementer:step_1, tester:step_2)
  [>] step_2: b
  [-] step_3: c
  [x] step_4: d
  [ ] step_6: e
  [!] step_7: f

Progress: 2/7 (28.6%)`
	if got := PlanChecklist(ps.Current()); got != want {
		t.Errorf("checklist:\n%s\nwant:\n%s", got, want)
	}

	// jaato's example layout, and a finished plan keeps the same header.
	ps = planStarted(t, "main", "a", "b", "c", "d")
	ps.Plan.Title = "Refactor auth module"
	planOKCall(t, ps, ToolSetStepStatus, `{"step_id":"step_1","status":"completed"}`)
	planOKCall(t, ps, ToolSetStepStatus, `{"step_id":"step_2","status":"completed"}`)
	planOKCall(t, ps, ToolCompletePlan, `{"status":"failed"}`)
	want = "Current Plan: Refactor auth module\nStatus: failed\n\nSteps:\n  [x] step_1: a\n  [x] step_2: b\n  [ ] step_3: c\n  [ ] step_4: d\n\nProgress: 2/4 (50%)"
	if got := PlanChecklist(ps.Plan); got != want {
		t.Errorf("checklist:\n%s\nwant:\n%s", got, want)
	}
}

func TestNotificationText(t *testing.T) {
	tests := []struct {
		ev   Event
		want []string
	}{
		{Event{EventID: 7, Type: EventStepCompleted, AgentID: "implementer", PlanID: "plan_1", StepID: "step_1",
			Data: json.RawMessage(`{"description":"Write export.go","result":"export.go written","output":{"passed":true}}`)},
			[]string{"#7", "agent implementer", "step_completed", "plan plan_1", `step step_1 ("Write export.go")`, "Result: export.go written", `Output: {"passed":true}`}},
		{Event{EventID: 8, Type: EventStepFailed, AgentID: "tester", PlanID: "plan_2", StepID: "step_3", Data: json.RawMessage(`{"error":"disk full"}`)},
			[]string{"agent tester", "step_failed", "step step_3", "Error: disk full"}},
		{Event{EventID: 9, Type: EventPlanCompleted, AgentID: "kid", PlanID: "plan_1", Data: json.RawMessage(`{"title":"Build","summary":"all good"}`)},
			[]string{"plan_completed", `plan plan_1 ("Build")`, "Summary: all good"}},
		{Event{EventID: 10, Type: EventStepBlocked, AgentID: "kid", PlanID: "plan_1", StepID: "step_2", Data: json.RawMessage(`{"blocked_by":[{"agent_id":"x","step_id":"step_1"}]}`)},
			[]string{"step_blocked", `Waiting on: [{"agent_id":"x","step_id":"step_1"}]`}},
		{Event{EventID: 11, Type: EventPlanCreated, AgentID: "kid", PlanID: "plan_1", Data: json.RawMessage(`{"title":"Build","steps":[{"step_id":"step_1","description":"a"}]}`)},
			[]string{"plan_created", `Steps: [{"step_id":"step_1","description":"a"}]`}},
	}
	for _, tt := range tests {
		got := NotificationText(tt.ev)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("NotificationText(%s) = %q, lacks %q", tt.ev.Type, got, w)
			}
		}
		if strings.Contains(got, "Output: null") {
			t.Errorf("null output shown: %q", got)
		}
	}
	big := strings.Repeat("é", 3000)
	got := NotificationText(Event{EventID: 1, Type: EventStepCompleted, AgentID: "kid", Data: json.RawMessage(`{"result":"` + big + `"}`)})
	if len([]rune(got)) > 1200 || !strings.Contains(got, "getTaskEvents") {
		t.Errorf("long result not cut: %d runes", len([]rune(got)))
	}
	if got := NotificationText(Event{EventID: 2, Type: EventStepAdded, AgentID: "kid", Data: json.RawMessage(`{"output":null}`)}); strings.Contains(got, "Output") {
		t.Errorf("null output shown: %q", got)
	}
}
