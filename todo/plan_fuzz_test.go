package todo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/internal/fuzzcheck"
)

// fuzzPlanSetups are the plan states a fuzzed plan tool call meets, from no
// plan at all to one whose steps wait on other agents, so that every tool
// gets past its argument checks to the rules of the plan.
var fuzzPlanSetups = []struct {
	name  string
	build func(t *testing.T) *PlanState
}{
	{"no plan", func(*testing.T) *PlanState { return NewPlanState("main") }},
	{"created", func(t *testing.T) *PlanState {
		ps := NewPlanState("main")
		planOKCall(t, ps, ToolCreatePlan, `{"title":"Fix the login bug","steps":["Reproduce it","Fix it","Add a test"]}`)
		return ps
	}},
	{"awaiting approval", func(t *testing.T) *PlanState {
		ps := NewPlanState("main")
		planOKCall(t, ps, ToolCreatePlan, `{"title":"Fix the login bug","steps":["Reproduce it","Fix it"]}`)
		if out := ps.ApplyPlan(planCall(ToolStartPlan, `{"message":"Shall I go ahead?"}`), true); !out.NeedsApproval {
			t.Fatalf("startPlan did not wait for approval: %+v", out)
		}
		return ps
	}},
	{"started", func(t *testing.T) *PlanState {
		ps := planStarted(t, "main", "Reproduce it", "Fix it", "Add a test")
		planOKCall(t, ps, ToolSetStepStatus, `{"step_id":"step_1","status":"in_progress"}`)
		return ps
	}},
	{"waiting on other agents", func(t *testing.T) *PlanState {
		ps := planStarted(t, "main", "Plan the export", "Review it", "Ship it")
		planOKCall(t, ps, ToolSubscribe, `{"event_types":["step_completed","step_failed"],"agent_id":"impl"}`)
		impl := planStarted(t, "impl", "Write export.go", "Test it")
		relay(ps, impl.Events)
		planOKCall(t, ps, ToolCompleteStepWithOutput, `{"step_id":"step_1","output":{"design":"csv"},"result":"Designed"}`)
		planOKCall(t, ps, ToolAddDependentStep, `{"step_id":"step_2","depends_on":[{"agent_id":"impl","step_id":"step_1"},{"agent_id":"impl","step_id":"step_2"}],"provides":"review"}`)
		planOKCall(t, ps, ToolAddDependentStep, `{"description":"Wait for QA","depends_on":[{"agent_id":"qa","step_id":"step_1"}]}`)
		n := len(impl.Events)
		planOKCall(t, impl, ToolCompleteStepWithOutput, `{"step_id":"step_1","output":{"files":["export.go"]},"result":"Written"}`)
		relay(ps, impl.Events[n:])
		ps.TakeNotifications()
		return ps
	}},
	{"remote and unknown peers", func(t *testing.T) *PlanState {
		ps := planStarted(t, "main", "Plan it", "Review it")
		ps.Peers = peers{kinds: map[string]PeerKind{"impl": PeerRemote, "qa": PeerLocal}, known: []string{"impl", "qa"}}
		planOKCall(t, ps, ToolAddDependentStep, `{"step_id":"step_2","depends_on":[{"agent_id":"impl","step_id":"step_1"}]}`)
		return ps
	}},
	{"completed", func(t *testing.T) *PlanState {
		ps := planStarted(t, "main", "Do it")
		planOKCall(t, ps, ToolSetStepStatus, `{"step_id":"step_1","status":"completed","result":"Done"}`)
		planOKCall(t, ps, ToolCompletePlan, `{"status":"completed","summary":"All done"}`)
		return ps
	}},
}

// planSeeds are valid and invalid arguments of the plan tools, from the
// examples the tools quote, the scenarios and the plan tests.
var planSeeds = []struct {
	tool, args string
}{
	{ToolCreatePlan, `{"title": "Fix the login bug", "steps": ["Reproduce it", "Fix it", "Add a test"]}`},
	{ToolCreatePlan, `{"title":"T","steps":[{"description":"a"},"b"]}`},
	{ToolCreatePlan, `{"title":"T","steps":[]}`},
	{ToolCreatePlan, `{"title":"  ","steps":["a"]}`},
	{ToolCreatePlan, `{"title":"T","steps":["a",""]}`},
	{ToolCreatePlan, `{"title":"T","steps":"a, b"}`},
	{ToolStartPlan, `{"message": "Shall I go ahead?"}`},
	{ToolStartPlan, ``},
	{ToolStartPlan, `{"message": 5}`},
	{ToolSetStepStatus, `{"step_id": "step_1", "status": "completed", "result": "What was done"}`},
	{ToolSetStepStatus, `{"step_id": "step_2", "status": "in_progress"}`},
	{ToolSetStepStatus, `{"step_id": "step_1", "status": "completed", "result": "I could not reproduce it"}`},
	{ToolSetStepStatus, `{"step_id": "step_3", "status": "failed", "error": "no test runner"}`},
	{ToolSetStepStatus, `{"step_id": "step_2", "status": "skipped", "result": "not needed"}`},
	{ToolSetStepStatus, `{"step_id": "step_2", "status": "blocked"}`},
	{ToolSetStepStatus, `{"step_id": "step_9", "status": "pending"}`},
	{ToolSetStepStatus, `{"step_id": 1, "status": "done"}`},
	{ToolAddStep, `{"description": "Update the docs", "after_step_id": "step_2"}`},
	{ToolAddStep, `{"description": "Update the docs", "after_step_id": "step_99"}`},
	{ToolAddStep, `{"description": ""}`},
	{ToolGetPlanStatus, `{}`},
	{ToolGetPlanStatus, `null`},
	{ToolCompletePlan, `{"status": "completed", "summary": "What was achieved"}`},
	{ToolCompletePlan, `{"status": "cancelled"}`},
	{ToolCompletePlan, `{"status": "failed", "summary": "The tests do not run"}`},
	{ToolCompletePlan, `{"status": "done"}`},
	{ToolSubscribe, `{"event_types": ["step_completed"], "agent_id": "researcher"}`},
	{ToolSubscribe, `{"event_types": ["step_completed", "step_completed", "plan_failed"], "agent_id": "*", "plan_id": "plan_1", "step_id": "step_1"}`},
	{ToolSubscribe, `{"event_types": ["everything"]}`},
	{ToolSubscribe, `{"event_types": [], "agent_id": "main"}`},
	{ToolUnsubscribe, `{"subscription_id": "sub_1"}`},
	{ToolUnsubscribe, `{"subscription_id": "sub_7"}`},
	{ToolListSubscriptions, ``},
	{ToolAddDependentStep, `{"description": "Review the results", "depends_on": [{"agent_id": "implementer", "step_id": "step_1"}]}`},
	{ToolAddDependentStep, `{"step_id": "step_3", "depends_on": [{"agent_id": "impl", "step_id": "step_1"}], "provides": "export"}`},
	{ToolAddDependentStep, `{"description": "Wait", "after_step_id": "step_1", "depends_on": [{"agent_id": "ghost", "step_id": "step_1"}]}`},
	{ToolAddDependentStep, `{"description": "Wait", "step_id": "step_1", "depends_on": [{"agent_id": "impl", "step_id": "step_1"}]}`},
	{ToolAddDependentStep, `{"description": "Mine", "depends_on": [{"agent_id": "main", "step_id": "step_1"}]}`},
	{ToolAddDependentStep, `{"description": "Wait", "depends_on": [{"agent_id": "impl"}]}`},
	{ToolAddDependentStep, `{"description": "Wait", "depends_on": []}`},
	{ToolCompleteStepWithOutput, `{"step_id": "step_1", "output": {"passed": true}, "result": "What was done"}`},
	{ToolCompleteStepWithOutput, `{"step_id": "step_2", "output": {}, "result": "Reviewed"}`},
	{ToolCompleteStepWithOutput, `{"step_id": "step_1", "output": "passed"}`},
	{ToolCompleteStepWithOutput, `{"step_id": "step_1", "output": {"a": [1, 2, {"b": null}]}, "result": "unable to finish"}`},
	{ToolGetBlockedSteps, `{"plan_id": "plan_1"}`},
	{ToolGetBlockedSteps, `{"plan_id": "plan_2"}`},
	{ToolGetTaskEvents, `{"event_types": ["step_completed"], "limit": 20}`},
	{ToolGetTaskEvents, `{"agent_id": "impl", "after_event": 2, "limit": 1}`},
	{ToolGetTaskEvents, `{"limit": 0}`},
	{ToolGetTaskEvents, `{"limit": 2.5, "after_event": -1}`},
	{ToolGetTaskEvents, `{"limit": 1e300}`},
	{ToolSpawnSubagent, `{"agent_id": "impl", "task": "Write it"}`},
	{ToolCancelSubagent, `{"agent_id": "impl"}`},
	{"getPlan", `{}`},
	{ToolCreatePlan, `[1]`},
	{ToolSetStepStatus, `"step_1 completed"`},
}

// fuzzToolNames are the names a fuzzed call picks from: the 13 plan tools,
// the two the workflow runs, and one that is no tool.
var fuzzToolNames = append(slices.Clone(planToolNames), ToolSpawnSubagent, ToolCancelSubagent, "getPlan")

// FuzzPlanTools applies one plan tool call, the tool picked by a fuzzed index,
// with fuzzed arguments, to each kind of plan state. A refusal says why and
// changes nothing; an accepted call answers in JSON, records its events in
// the log it returns them from, and leaves a state that keeps the plan's
// invariants and, decoded from the JSON continue-as-new carries, answers
// every later call as before it; a status report repeated changes nothing.
func FuzzPlanTools(f *testing.F) {
	for i, seed := range planSeeds {
		tool := uint8(slices.Index(fuzzToolNames, seed.tool))
		for setup := range fuzzPlanSetups {
			f.Add(uint8(setup), tool, []byte(seed.args), (i+setup)%2 == 0)
		}
	}
	f.Fuzz(func(t *testing.T, setup, tool uint8, args []byte, approval bool) {
		ps := fuzzPlanSetups[int(setup)%len(fuzzPlanSetups)].build(t)
		name := fuzzToolNames[int(tool)%len(fuzzToolNames)]
		call := Call{ID: "call_1", Name: name, Args: args}
		before := mustJSON(t, ps)
		nEvents := len(ps.Events)

		out := ps.ApplyPlan(call, approval)
		switch {
		case out.NeedsApproval:
			if name != ToolStartPlan || !approval || !ps.AwaitingApproval || out.Result != (Result{}) || len(out.Events) != 0 {
				t.Fatalf("%s asked for approval: %+v, awaiting %v", name, out, ps.AwaitingApproval)
			}
			if ap := ps.Approve("go ahead"); ap.Result.IsError || !ps.Plan.Started || ps.AwaitingApproval {
				t.Fatalf("approving %s: %+v, started %v", name, ap, ps.Plan.Started)
			}
		case out.Result.IsError:
			checkRefusal(t, name, out.Result.Content)
			if len(out.Events) != 0 {
				t.Fatalf("a refused %s emitted %v", name, planTypes(out.Events))
			}
			if after := mustJSON(t, ps); !bytes.Equal(after, before) {
				t.Fatalf("a refused %s (%s) changed the state\nfrom %s\nto   %s", name, out.Result.Content, before, after)
			}
		default:
			fuzzcheck.Message(t, name, out.Result.Content)
			if !json.Valid([]byte(out.Result.Content)) || !strings.HasPrefix(out.Result.Content, "{") {
				t.Fatalf("%s answered with something other than a JSON object: %q", name, out.Result.Content)
			}
			if !slices.EqualFunc(out.Events, ps.Events[nEvents:], eventEqual) {
				t.Fatalf("%s returned events %v, but logged %v", name, planTypes(out.Events), planTypes(ps.Events[nEvents:]))
			}
		}
		checkPlanState(t, ps)

		// What continue-as-new carries must come back the same.
		carried := mustJSON(t, ps)
		var back PlanState
		if err := json.Unmarshal(carried, &back); err != nil {
			t.Fatalf("the state does not decode: %v\n%s", err, carried)
		}
		if again := mustJSON(t, &back); !bytes.Equal(again, carried) {
			t.Fatalf("the state changed in a JSON round trip\nfrom %s\nto   %s", carried, again)
		}

		if !out.Result.IsError && (name == ToolSetStepStatus || name == ToolCompleteStepWithOutput) {
			rep := ps.ApplyPlan(call, approval)
			if rep.Result.IsError || len(rep.Events) != 0 || !bytes.Equal(mustJSON(t, ps), carried) {
				t.Fatalf("%s repeated: %q, events %v; want it accepted with no change", name, rep.Result.Content, planTypes(rep.Events))
			}
		}
		checkSameBehaviour(t, ps, &back, call, approval)
	})
}

// checkSameBehaviour fails t unless the state continue-as-new carried (back,
// decoded from ps's JSON) answers what ps answers: equal bytes can still hide
// a field the JSON drops, which only a later call would show. Both get the
// fuzzed call again, then every seed call in order, each answered (approved
// where it waits) alike, with the same events.
func checkSameBehaviour(t *testing.T, ps, back *PlanState, fuzzed Call, approval bool) {
	t.Helper()
	back.Peers = ps.Peers // not carried: the workflow attaches its tree's view to each run
	back.Restored()       // as the workflow does, under patchPlanRestored
	calls := []Call{fuzzed}
	for i, seed := range planSeeds {
		calls = append(calls, Call{ID: fmt.Sprintf("call_%d", i+2), Name: seed.tool, Args: []byte(seed.args)})
	}
	for _, c := range calls {
		want, got := ps.ApplyPlan(c, approval), back.ApplyPlan(c, approval)
		if want.NeedsApproval && got.NeedsApproval {
			want, got = ps.Approve("go ahead"), back.Approve("go ahead")
		}
		if want.NeedsApproval != got.NeedsApproval || want.Result != got.Result || !slices.EqualFunc(want.Events, got.Events, eventEqual) {
			t.Fatalf("after continue-as-new's JSON, %s(%s) answers %+v with events %v; before it, %+v with events %v",
				c.Name, c.Args, got, planTypes(got.Events), want, planTypes(want.Events))
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return b
}

func eventEqual(a, b Event) bool {
	return a.EventID == b.EventID && a.Type == b.Type && a.AgentID == b.AgentID &&
		a.PlanID == b.PlanID && a.StepID == b.StepID && bytes.Equal(a.Data, b.Data)
}

// checkPlanState fails t unless ps keeps the invariants every plan tool
// relies on.
func checkPlanState(t *testing.T, ps *PlanState) {
	t.Helper()
	for i, ev := range ps.Events {
		if ev.EventID != i+1 {
			t.Fatalf("event %d of the log has id %d: %+v", i+1, ev.EventID, ev)
		}
		var data map[string]json.RawMessage
		if json.Unmarshal(ev.Data, &data) != nil || data == nil {
			t.Fatalf("event %d has data that is not an object: %s", ev.EventID, ev.Data)
		}
	}
	if !slices.IsSorted(ps.Delivered) || len(slices.Compact(slices.Clone(ps.Delivered))) != len(ps.Delivered) {
		t.Fatalf("delivered ids not ascending and unique: %v", ps.Delivered)
	}
	subs := map[string]bool{}
	for _, s := range ps.Subscriptions {
		if subs[s.ID] || len(s.EventTypes) == 0 {
			t.Fatalf("subscription %+v repeated or without event types", s)
		}
		subs[s.ID] = true
	}
	p := ps.Plan
	if p == nil {
		if ps.AwaitingApproval {
			t.Fatal("awaiting approval without a plan")
		}
		return
	}
	if ps.AwaitingApproval && (p.Status != PlanActive || p.Started) {
		t.Fatalf("awaiting approval of plan %s, which is %s (started %v)", p.PlanID, p.Status, p.Started)
	}
	if !slices.Contains([]string{PlanActive, PlanCompleted, PlanFailed, PlanCancelled}, p.Status) || strings.TrimSpace(p.Title) == "" {
		t.Fatalf("plan %s has status %q, title %q", p.PlanID, p.Status, p.Title)
	}
	if p.Progress != ComputeProgress(p.Steps) {
		t.Fatalf("plan %s progress %+v, want %+v", p.PlanID, p.Progress, ComputeProgress(p.Steps))
	}
	ids := map[string]bool{}
	for i, s := range p.Steps {
		if s.StepID == "" || ids[s.StepID] || s.Sequence != i+1 || strings.TrimSpace(s.Description) == "" {
			t.Fatalf("step %d: id %q (repeated: %v), sequence %d, description %q", i, s.StepID, ids[s.StepID], s.Sequence, s.Description)
		}
		ids[s.StepID] = true
		if !slices.Contains([]string{StepPending, StepInProgress, StepCompleted, StepFailed, StepSkipped, StepBlocked}, s.Status) {
			t.Fatalf("step %s has status %q", s.StepID, s.Status)
		}
		if s.Status == StepBlocked && len(s.BlockedBy) == 0 {
			t.Fatalf("step %s is blocked on nothing", s.StepID)
		}
		for _, r := range s.BlockedBy {
			if !slices.Contains(s.DependsOn, r) {
				t.Fatalf("step %s is blocked by %s, which it does not depend on", s.StepID, r.Key())
			}
		}
		if len(s.Output) > 0 && !json.Valid(s.Output) {
			t.Fatalf("step %s output is not JSON: %s", s.StepID, s.Output)
		}
	}
}
