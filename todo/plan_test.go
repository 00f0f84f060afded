package todo

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// Helpers of the plan tests (prefixed so as not to clash with other tests).

func planCall(name, args string) Call { return Call{Name: name, Args: json.RawMessage(args)} }

func planApply(t *testing.T, ps *PlanState, name, args string) PlanOutcome {
	t.Helper()
	return ps.ApplyPlan(planCall(name, args), false)
}

func planOKCall(t *testing.T, ps *PlanState, name, args string) PlanOutcome {
	t.Helper()
	out := planApply(t, ps, name, args)
	if out.Result.IsError {
		t.Fatalf("%s %s: unexpected error: %s", name, args, out.Result.Content)
	}
	return out
}

func planRefused(t *testing.T, ps *PlanState, name, args string, want ...string) PlanOutcome {
	t.Helper()
	out := planApply(t, ps, name, args)
	if !out.Result.IsError {
		t.Fatalf("%s %s: want an error, got: %s", name, args, out.Result.Content)
	}
	for _, w := range want {
		if !strings.Contains(out.Result.Content, w) {
			t.Errorf("%s %s: error %q does not mention %q", name, args, out.Result.Content, w)
		}
	}
	if len(out.Events) != 0 {
		t.Errorf("%s %s: a refused call emitted %v", name, args, planTypes(out.Events))
	}
	return out
}

// planStarted returns an agent with a started plan (approval auto).
func planStarted(t *testing.T, agent string, steps ...string) *PlanState {
	t.Helper()
	ps := NewPlanState(agent)
	b, _ := json.Marshal(steps)
	planOKCall(t, ps, ToolCreatePlan, `{"title":"T","steps":`+string(b)+`}`)
	planOKCall(t, ps, ToolStartPlan, `{}`)
	return ps
}

func planTypes(evs []Event) []string {
	out := []string{}
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

func stepStatuses(p *Plan) []string {
	out := []string{}
	for _, s := range p.Steps {
		out = append(out, s.Status)
	}
	return out
}

func hasType(evs []Event, typ string) bool {
	for _, e := range evs {
		if e.Type == typ {
			return true
		}
	}
	return false
}

func TestPercentRounding(t *testing.T) {
	tests := []struct {
		part, total int
		want        float64
		text        string
	}{
		{0, 0, 0, "0"},
		{0, 3, 0, "0"},
		{1, 3, 33.3, "33.3"},
		{2, 3, 66.7, "66.7"},
		{1, 2, 50, "50"},
		{1, 6, 16.7, "16.7"},
		{5, 6, 83.3, "83.3"},
		{1, 7, 14.3, "14.3"},
		{1, 8, 12.5, "12.5"},
		{1, 16, 6.3, "6.3"}, // 6.25: half away from zero
		{3, 16, 18.8, "18.8"},
		{1, 40, 2.5, "2.5"},
		{1, 2000, 0.1, "0.1"}, // 0.05
		{1, 2001, 0, "0"},
		{3, 3, 100, "100"},
	}
	for _, tt := range tests {
		got := PercentOf(tt.part, tt.total)
		if got != tt.want {
			t.Errorf("PercentOf(%d, %d) = %v, want %v", tt.part, tt.total, got, tt.want)
		}
		if s := FormatPercent(got); s != tt.text {
			t.Errorf("FormatPercent(%v) = %q, want %q", got, s, tt.text)
		}
	}
}

func TestComputeProgressCountsEveryStatus(t *testing.T) {
	var steps []Step
	for _, st := range []string{StepCompleted, StepCompleted, StepFailed, StepSkipped, StepInProgress, StepPending, StepBlocked} {
		steps = append(steps, Step{Status: st})
	}
	got := ComputeProgress(steps)
	want := Progress{Total: 7, Completed: 2, Failed: 1, Skipped: 1, InProgress: 1, Pending: 1, Blocked: 1, Percent: 28.6}
	if got != want {
		t.Errorf("ComputeProgress = %+v, want %+v", got, want)
	}
	b, _ := json.Marshal(got)
	if string(b) != `{"total":7,"completed":2,"failed":1,"skipped":1,"in_progress":1,"pending":1,"blocked":1,"percent":28.6}` {
		t.Errorf("progress JSON = %s", b)
	}
}

func TestFreshStepJSONHasNoNulls(t *testing.T) {
	for name, s := range map[string]Step{"zero": {}, "new": newStep("step_1", "x")} {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`"depends_on":[]`, `"blocked_by":[]`, `"received_outputs":{}`, `"output":null`} {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s step JSON %s lacks %s", name, b, want)
			}
		}
		if strings.Contains(string(b), "provides") {
			t.Errorf("%s step JSON %s shows an empty provides", name, b)
		}
	}
	// The same through a plan and a decoded state.
	ps := planStarted(t, "main", "a")
	b, _ := json.Marshal(ps)
	var back PlanState
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(back.Current())
	if !strings.Contains(string(b2), `"depends_on":[],"blocked_by":[],"received_outputs":{},"output":null`) {
		t.Errorf("plan JSON after a round trip: %s", b2)
	}
}

// A report repeated after continue-as-new changes nothing once the decoded
// state is Restored; without it (a v0.1.0 run, replayed) it emits again.
func TestRepeatedReportAfterHandover(t *testing.T) {
	for _, tc := range []struct {
		name     string
		restored bool
		events   int
	}{
		{"restored", true, 0},
		{"as v0.1.0 did", false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := planStarted(t, "main", "a")
			report := `{"step_id":"step_1","status":"completed","result":"done"}`
			planOKCall(t, ps, ToolSetStepStatus, report)
			b, _ := json.Marshal(ps)
			var back PlanState
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if tc.restored {
				back.Restored()
			}
			out := planOKCall(t, &back, ToolSetStepStatus, report)
			if len(out.Events) != tc.events {
				t.Errorf("the repeated report emitted %v; want %d events", planTypes(out.Events), tc.events)
			}
		})
	}
}

func TestNewPlanStateJSON(t *testing.T) {
	b, _ := json.Marshal(NewPlanState("main"))
	want := `{"agent_id":"main","plan":null,"plan_count":0,"events":[],"subscriptions":[],"awaiting_approval":false,"subscription_count":0,"delivered":[]}`
	if string(b) != want {
		t.Errorf("NewPlanState JSON = %s, want %s", b, want)
	}
}

func TestPlanToolsAndNames(t *testing.T) {
	core := PlanTools(false)
	all := PlanTools(true)
	n := len(planToolNames)
	if len(core) != n || len(all) != n+2 || all[n].Name != ToolSpawnSubagent || all[n+1].Name != ToolCancelSubagent {
		t.Fatalf("PlanTools: %d without agents, %d with (last %q)", len(core), len(all), all[len(all)-1].Name)
	}
	seen := map[string]bool{}
	for _, d := range all {
		if seen[d.Name] {
			t.Errorf("tool %s listed twice", d.Name)
		}
		seen[d.Name] = true
		var schema map[string]any
		if err := json.Unmarshal(d.Parameters, &schema); err != nil || schema["type"] != "object" {
			t.Errorf("%s: parameters are not an object schema: %v %s", d.Name, err, d.Parameters)
		}
		if strings.TrimSpace(d.Description) == "" {
			t.Errorf("%s has no description", d.Name)
		}
		if want := d.Name != ToolSpawnSubagent && d.Name != ToolCancelSubagent; IsPlanTool(d.Name) != want {
			t.Errorf("IsPlanTool(%s) = %v", d.Name, !want)
		}
	}
	for _, n := range []string{ToolWrite, "read_file", "", ToolSpawnSubagent} {
		if IsPlanTool(n) {
			t.Errorf("IsPlanTool(%q) = true", n)
		}
	}
	var spawn struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if err := json.Unmarshal(all[n].Parameters, &spawn); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(spawn.Required, []string{"agent_id", "task"}) || spawn.Properties["agent_id"]["pattern"] != "^[A-Za-z0-9_-]{1,64}$" ||
		spawn.Properties["tools"]["type"] != "array" || spawn.Properties["model"]["type"] != "string" || spawn.Properties["todo"]["type"] != "object" {
		t.Errorf("spawn_subagent schema: %s", all[n].Parameters)
	}
}

func TestApplyPlanRejectsOtherTools(t *testing.T) {
	ps := NewPlanState("main")
	for _, n := range []string{ToolSpawnSubagent, ToolWrite, "nope"} {
		out := ps.ApplyPlan(planCall(n, `{}`), false)
		if !out.Result.IsError {
			t.Errorf("ApplyPlan(%s) = %+v, want an error", n, out.Result)
		}
	}
}

func TestMalformedArgumentsNeverPanic(t *testing.T) {
	bad := []string{`[]`, `"x"`, `{`, `123`, `true`, `{"step_id": 5}`, `{"title": ["x"], "steps": "a"}`,
		`{"status": 1}`, `{"depends_on": "x"}`, `{"event_types": "step_completed"}`, `{"limit": "5"}`, `{"output": [1]}`}
	for _, name := range planToolNames {
		for _, args := range bad {
			for _, ps := range []*PlanState{NewPlanState("main"), planStarted(t, "main", "a", "b")} {
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Errorf("%s %s panicked: %v", name, args, r)
						}
					}()
					out := ps.ApplyPlan(planCall(name, args), true)
					if args[0] != '{' && !out.Result.IsError {
						t.Errorf("%s %s: non-object arguments accepted: %s", name, args, out.Result.Content)
					}
				}()
			}
		}
	}
}

func TestCreatePlan(t *testing.T) {
	ps := NewPlanState("main")
	tests := []struct {
		args string
		want []string
	}{
		{`[1]`, []string{"JSON object"}},
		{`{}`, []string{`"title" is missing`}},
		{`{"title":"  ","steps":["a"]}`, []string{`"title" is empty`}},
		{`{"title":3,"steps":["a"]}`, []string{`"title" must be a string`}},
		{`{"title":"T"}`, []string{`"steps" is missing`}},
		{`{"title":"T","steps":[]}`, []string{`"steps" is empty`}},
		{`{"title":"T","steps":"a, b"}`, []string{`"steps" must be an array`}},
		{`{"title":"T","steps":["a"," "]}`, []string{"steps[1] is blank"}},
		{`{"title":"T","steps":["a",7]}`, []string{"steps[1] must be a string"}},
	}
	for _, tt := range tests {
		planRefused(t, ps, ToolCreatePlan, tt.args, tt.want...)
	}
	if ps.Plan != nil || ps.PlanCount != 0 {
		t.Fatalf("refused calls created a plan: %+v", ps.Plan)
	}

	out := planOKCall(t, ps, ToolCreatePlan, `{"title":" Refactor ","steps":["Review",{"description":"Extract"},"Update"]}`)
	p := ps.Plan
	if p.PlanID != "plan_1" || p.Title != "Refactor" || p.Status != PlanActive || p.Started || len(p.Steps) != 3 {
		t.Fatalf("plan = %+v", p)
	}
	for i, s := range p.Steps {
		if s.StepID != "step_"+string(rune('1'+i)) || s.Sequence != i+1 || s.Status != StepPending {
			t.Errorf("step %d = %+v", i, s)
		}
	}
	if !reflect.DeepEqual(planTypes(out.Events), []string{EventPlanCreated}) {
		t.Errorf("events = %v", planTypes(out.Events))
	}
	var data struct {
		Title string `json:"title"`
		Steps []struct {
			StepID string `json:"step_id"`
		} `json:"steps"`
	}
	if json.Unmarshal(out.Events[0].Data, &data) != nil || data.Title != "Refactor" || len(data.Steps) != 3 || data.Steps[2].StepID != "step_3" {
		t.Errorf("plan_created data = %s", out.Events[0].Data)
	}
	for _, w := range []string{`"plan_id":"plan_1"`, `"step_id":"step_2"`, "startPlan"} {
		if !strings.Contains(out.Result.Content, w) {
			t.Errorf("createPlan result %s lacks %s", out.Result.Content, w)
		}
	}

	// An unstarted plan can be replaced.
	out = planOKCall(t, ps, ToolCreatePlan, `{"title":"Other","steps":["x"]}`)
	if ps.Plan.PlanID != "plan_2" || !strings.Contains(out.Result.Content, "replaces plan plan_1") {
		t.Errorf("replacement: plan %s, result %s", ps.Plan.PlanID, out.Result.Content)
	}
	// A started active plan cannot.
	planOKCall(t, ps, ToolStartPlan, `{}`)
	planRefused(t, ps, ToolCreatePlan, `{"title":"Third","steps":["y"]}`, "plan_2", "completePlan")
	// A finished one can.
	planOKCall(t, ps, ToolCompletePlan, `{"status":"cancelled"}`)
	planOKCall(t, ps, ToolCreatePlan, `{"title":"Third","steps":["y"]}`)
	if ps.Plan.PlanID != "plan_3" || ps.Plan.Steps[0].StepID != "step_1" {
		t.Errorf("new plan after a finished one: %+v", ps.Plan)
	}
}

func TestAddStepNumbering(t *testing.T) {
	ps := NewPlanState("main")
	planRefused(t, ps, ToolAddStep, `{"description":"x"}`, "no plan yet", "createPlan")
	planOKCall(t, ps, ToolCreatePlan, `{"title":"T","steps":["a","b","c"]}`)
	// Allowed before the plan starts.
	out := planOKCall(t, ps, ToolAddStep, `{"description":"after a","after_step_id":"step_1"}`)
	if !reflect.DeepEqual(planTypes(out.Events), []string{EventStepAdded}) || out.Events[0].StepID != "step_4" {
		t.Errorf("events = %+v", out.Events)
	}
	planOKCall(t, ps, ToolAddStep, `{"description":"at the end"}`)
	planOKCall(t, ps, ToolAddStep, `{"description":"after c","after_step_id":"step_3"}`)
	var got []string
	for _, s := range ps.Plan.Steps {
		got = append(got, s.StepID+"="+s.Description)
		if s.Sequence != len(got) {
			t.Errorf("%s has sequence %d at position %d", s.StepID, s.Sequence, len(got))
		}
	}
	want := []string{"step_1=a", "step_4=after a", "step_2=b", "step_3=c", "step_6=after c", "step_5=at the end"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("steps = %v, want %v", got, want)
	}
	if !strings.Contains(out.Result.Content, `"sequence":2`) || !strings.Contains(out.Result.Content, `"total_steps":4`) {
		t.Errorf("addStep result = %s", out.Result.Content)
	}
	planRefused(t, ps, ToolAddStep, `{"description":"x","after_step_id":"step_9"}`, `unknown step_id "step_9"`, "step_1, step_4, step_2, step_3, step_6, step_5")
	planRefused(t, ps, ToolAddStep, `{"after_step_id":"step_1"}`, `"description" is missing`)
	planRefused(t, ps, ToolAddStep, `{"description":""}`, `"description" is empty`)
	planRefused(t, ps, ToolAddStep, `{"description":"x","after_step_id":1}`, `"after_step_id" must be a string`)
	planOKCall(t, ps, ToolCompletePlan, `{"status":"cancelled"}`)
	planRefused(t, ps, ToolAddStep, `{"description":"x"}`, "already cancelled")
}

func TestStartPlan(t *testing.T) {
	ps := NewPlanState("main")
	planRefused(t, ps, ToolStartPlan, `{}`, "no plan yet")
	planOKCall(t, ps, ToolCreatePlan, `{"title":"T","steps":["a","b"]}`)
	if r := ps.ApplyPlan(planCall(ToolStartPlan, `{"message":5}`), true); !r.Result.IsError || r.NeedsApproval {
		t.Errorf("bad message accepted: %+v", r)
	}

	// Approval required: the workflow waits.
	out := ps.ApplyPlan(planCall(ToolStartPlan, `{"message":"Ready?"}`), true)
	if !out.NeedsApproval || !ps.AwaitingApproval || ps.ApprovalMessage != "Ready?" || len(out.Events) != 0 || ps.Plan.Started {
		t.Fatalf("startPlan with approval: %+v, state awaiting=%v", out, ps.AwaitingApproval)
	}

	// Auto: starts at once.
	auto := NewPlanState("sub")
	planOKCall(t, auto, ToolCreatePlan, `{"title":"T","steps":["a","b"]}`)
	out = planOKCall(t, auto, ToolStartPlan, ``)
	if out.NeedsApproval || !auto.Plan.Started || !reflect.DeepEqual(planTypes(out.Events), []string{EventPlanStarted}) ||
		!strings.Contains(out.Result.Content, "step_1") {
		t.Errorf("auto start: %+v", out)
	}
	planRefused(t, auto, ToolStartPlan, `{}`, "already started")
	planOKCall(t, auto, ToolCompletePlan, `{"status":"cancelled"}`)
	planRefused(t, auto, ToolStartPlan, `{}`, "already cancelled", "createPlan")
}

func TestApproveAndReject(t *testing.T) {
	ps := NewPlanState("main")
	planOKCall(t, ps, ToolCreatePlan, `{"title":"T","steps":["Look around","b"]}`)
	ps.ApplyPlan(planCall(ToolStartPlan, `{"message":"Go?"}`), true)

	rej := ps.Reject("Add a test step first")
	if !rej.Result.IsError || ps.AwaitingApproval || ps.Plan.Started || len(rej.Events) != 0 {
		t.Fatalf("Reject: %+v awaiting=%v", rej, ps.AwaitingApproval)
	}
	for _, w := range []string{"did not approve", "Add a test step first", "createPlan", "cancelled"} {
		if !strings.Contains(rej.Result.Content, w) {
			t.Errorf("Reject result %q lacks %q", rej.Result.Content, w)
		}
	}
	if r := ps.Reject(""); !strings.Contains(r.Result.Content, "no reason") {
		t.Errorf("Reject without feedback: %q", r.Result.Content)
	}
	// Revise and ask again.
	planOKCall(t, ps, ToolCreatePlan, `{"title":"T2","steps":["Look around","Add a test"]}`)
	if out := ps.ApplyPlan(planCall(ToolStartPlan, `{}`), true); !out.NeedsApproval {
		t.Fatal("second startPlan did not wait")
	}
	app := ps.Approve("looks good")
	if app.Result.IsError || ps.AwaitingApproval || !ps.Plan.Started || !reflect.DeepEqual(planTypes(app.Events), []string{EventPlanStarted}) {
		t.Fatalf("Approve: %+v", app)
	}
	if app.Events[0].PlanID != "plan_2" || !strings.Contains(string(app.Events[0].Data), `"feedback":"looks good"`) {
		t.Errorf("plan_started event: %+v %s", app.Events[0], app.Events[0].Data)
	}
	for _, w := range []string{"approved", "step_1", "Look around", "in_progress"} {
		if !strings.Contains(app.Result.Content, w) {
			t.Errorf("Approve result %q lacks %q", app.Result.Content, w)
		}
	}
	// Approving again starts nothing twice.
	if again := ps.Approve(""); len(again.Events) != 0 {
		t.Errorf("second Approve emitted %v", planTypes(again.Events))
	}
	if none := NewPlanState("x").Approve(""); !none.Result.IsError {
		t.Errorf("Approve without a plan: %+v", none)
	}
}

func TestFailurePhrase(t *testing.T) {
	tests := []struct {
		text, want string
	}{
		{"Unable to extract: circular imports", "unable to"},
		{"I COULD NOT find it", "could not"},
		{"could   not find it", "could not"},
		{"couldn't open the file", "couldn't"},
		{"couldn\u2019t open the file", "couldn't"},
		{"Cannot connect", "cannot"},
		{"we can't reach it", "can't"},
		{"the build failed to link", "failed to"},
		{"was not able to run", "not able to"},
		{"Found auth.py, tokens.py, session.py", ""},
		{"Cannotation is a word we made up", ""},
		{"the canned answer", ""},
		{"unable toggle", ""},
		{"failed tests were fixed", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := FailurePhrase(tt.text); got != tt.want {
			t.Errorf("FailurePhrase(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestSetStepStatus(t *testing.T) {
	ps := NewPlanState("main")
	planRefused(t, ps, ToolSetStepStatus, `{"step_id":"step_1","status":"completed"}`, "no plan yet")
	planOKCall(t, ps, ToolCreatePlan, `{"title":"T","steps":["a","b","c"]}`)
	planRefused(t, ps, ToolSetStepStatus, `{"step_id":"step_1","status":"completed"}`, "has not been started", "startPlan")
	planOKCall(t, ps, ToolStartPlan, `{}`)

	tests := []struct {
		args string
		want []string
	}{
		{`{"status":"completed"}`, []string{`"step_id" is missing`}},
		{`{"step_id":"step_1"}`, []string{`"status" is missing`}},
		{`{"step_id":"step_9","status":"completed"}`, []string{`unknown step_id "step_9"`, "step_1, step_2, step_3"}},
		{`{"step_id":"step_1","status":"done"}`, []string{`"done"`, "in_progress, completed, failed, skipped"}},
		{`{"step_id":"step_1","status":"blocked"}`, []string{"addDependentStep"}},
		{`{"step_id":"step_1","status":"pending"}`, []string{"pending"}},
		{`{"step_id":"step_1","status":"completed","result":3}`, []string{`"result" must be a string`}},
		{`{"step_id":"step_1","status":"failed","error":{}}`, []string{`"error" must be a string`}},
		{`{"step_id":"step_1","status":"completed","result":"Unable to extract: circular imports"}`, []string{`"unable to"`, "failed", "error"}},
		{`{"step_id":"step_1","status":"completed","result":"done","error":"but I couldn't run the tests"}`, []string{`"couldn't"`}},
	}
	for _, tt := range tests {
		planRefused(t, ps, ToolSetStepStatus, tt.args, tt.want...)
	}

	steps := []struct {
		args, event, status string
	}{
		{`{"step_id":"step_1","status":"in_progress"}`, EventStepStarted, StepInProgress},
		{`{"step_id":"step_1","status":"completed","result":"ok"}`, EventStepCompleted, StepCompleted},
		{`{"step_id":"step_2","status":"failed","error":"Could not find it"}`, EventStepFailed, StepFailed},
		{`{"step_id":"step_3","status":"skipped","result":"not needed"}`, EventStepSkipped, StepSkipped},
	}
	for _, s := range steps {
		out := planOKCall(t, ps, ToolSetStepStatus, s.args)
		if !reflect.DeepEqual(planTypes(out.Events), []string{s.event}) {
			t.Errorf("%s: events %v, want %s", s.args, planTypes(out.Events), s.event)
		}
	}
	p := ps.Plan
	if got := stepStatuses(p); !reflect.DeepEqual(got, []string{StepCompleted, StepFailed, StepSkipped}) {
		t.Errorf("statuses = %v", got)
	}
	if p.Steps[0].Result != "ok" || p.Steps[1].Error != "Could not find it" || p.Steps[2].Result != "not needed" {
		t.Errorf("steps = %+v", p.Steps)
	}
	if p.Progress.Completed != 1 || p.Progress.Percent != 33.3 {
		t.Errorf("progress = %+v", p.Progress)
	}
	var data map[string]any
	_ = json.Unmarshal(ps.Events[len(ps.Events)-3].Data, &data)
	if data["result"] != "ok" || data["output"] != nil || data["description"] != "a" {
		t.Errorf("step_completed data = %v", data)
	}
	if _, ok := data["output"]; !ok {
		t.Error("step_completed data has no output key")
	}

	// The same report again changes nothing and emits nothing.
	out := planOKCall(t, ps, ToolSetStepStatus, `{"step_id":"step_1","status":"completed","result":"ok"}`)
	if len(out.Events) != 0 || !strings.Contains(out.Result.Content, "Unchanged") {
		t.Errorf("repeat: %v %s", planTypes(out.Events), out.Result.Content)
	}
	// A model may correct a report.
	out = planOKCall(t, ps, ToolSetStepStatus, `{"step_id":"step_1","status":"failed","error":"the tests broke"}`)
	if ps.Plan.Steps[0].Status != StepFailed || ps.Plan.Steps[0].Result != "" || !hasType(out.Events, EventStepFailed) {
		t.Errorf("correction: %+v", ps.Plan.Steps[0])
	}

	planOKCall(t, ps, ToolCompletePlan, `{"status":"failed"}`)
	planRefused(t, ps, ToolSetStepStatus, `{"step_id":"step_1","status":"completed"}`, "already failed")
}

func TestCompletePlan(t *testing.T) {
	ps := NewPlanState("main")
	planRefused(t, ps, ToolCompletePlan, `{"status":"completed"}`, "no plan yet")
	planOKCall(t, ps, ToolCreatePlan, `{"title":"T","steps":["a","b"]}`)
	planRefused(t, ps, ToolCompletePlan, `{}`, `"status" is missing`)
	planRefused(t, ps, ToolCompletePlan, `{"status":"done"}`, `"done"`, "completed, failed, cancelled")
	planRefused(t, ps, ToolCompletePlan, `{"status":"completed","summary":1}`, `"summary" must be a string`)
	planRefused(t, ps, ToolCompletePlan, `{"status":"completed"}`, "never started", "cancelled")
	planRefused(t, ps, ToolCompletePlan, `{"status":"failed"}`, "never started")

	// An unstarted plan can be cancelled.
	ps.ApplyPlan(planCall(ToolStartPlan, `{}`), true)
	out := planOKCall(t, ps, ToolCompletePlan, `{"status":"cancelled","summary":"not needed"}`)
	if ps.Plan.Status != PlanCancelled || ps.AwaitingApproval || !reflect.DeepEqual(planTypes(out.Events), []string{EventPlanCancelled}) {
		t.Fatalf("cancel: %+v awaiting=%v", out, ps.AwaitingApproval)
	}
	planRefused(t, ps, ToolCompletePlan, `{"status":"cancelled"}`, "already cancelled")

	ps = planStarted(t, "main", "a", "b", "c")
	planOKCall(t, ps, ToolSetStepStatus, `{"step_id":"step_1","status":"completed"}`)
	planOKCall(t, ps, ToolSetStepStatus, `{"step_id":"step_2","status":"in_progress"}`)
	planRefused(t, ps, ToolCompletePlan, `{"status":"completed"}`, "step_2 (in_progress)", "step_3 (pending)")
	planOKCall(t, ps, ToolSetStepStatus, `{"step_id":"step_2","status":"skipped"}`)
	planOKCall(t, ps, ToolSetStepStatus, `{"step_id":"step_3","status":"completed"}`)
	out = planOKCall(t, ps, ToolCompletePlan, `{"status":"completed","summary":"All done"}`)
	if ps.Plan.Status != PlanCompleted || ps.Plan.Summary != "All done" || !reflect.DeepEqual(planTypes(out.Events), []string{EventPlanCompleted}) {
		t.Errorf("complete: %+v", ps.Plan)
	}
	if !strings.Contains(string(out.Events[0].Data), `"summary":"All done"`) || !strings.Contains(string(out.Events[0].Data), `"unfinished":["step_2"]`) {
		t.Errorf("plan_completed data = %s", out.Events[0].Data)
	}

	// failed is allowed with unfinished steps.
	ps = planStarted(t, "main", "a", "b")
	planOKCall(t, ps, ToolCompletePlan, `{"status":"failed","summary":"gave up"}`)
	if ps.Plan.Status != PlanFailed {
		t.Errorf("status = %s", ps.Plan.Status)
	}
}

func TestGetPlanStatus(t *testing.T) {
	ps := NewPlanState("main")
	out := planOKCall(t, ps, ToolGetPlanStatus, `{}`)
	if !strings.Contains(out.Result.Content, `"plan":null`) || !strings.Contains(out.Result.Content, "createPlan") {
		t.Errorf("no plan: %s", out.Result.Content)
	}
	ps = planStarted(t, "main", "a", "b")
	planOKCall(t, ps, ToolSetStepStatus, `{"step_id":"step_1","status":"completed","result":"did a"}`)
	out = planOKCall(t, ps, ToolGetPlanStatus, ``)
	var p Plan
	if err := json.Unmarshal([]byte(out.Result.Content), &p); err != nil {
		t.Fatalf("getPlanStatus is not a plan: %v\n%s", err, out.Result.Content)
	}
	if p.PlanID != "plan_1" || p.Steps[0].Result != "did a" || p.Progress.Completed != 1 || p.Progress.Percent != 50 {
		t.Errorf("plan = %+v", p)
	}
	if !strings.Contains(out.Result.Content, `"received_outputs":{}`) {
		t.Errorf("status lacks received_outputs: %s", out.Result.Content)
	}
	if len(out.Events) != 0 {
		t.Errorf("getPlanStatus emitted %v", planTypes(out.Events))
	}
}

func TestCurrentRecomputesWithoutMutating(t *testing.T) {
	ps := NewPlanState("main")
	if ps.Current() != nil {
		t.Fatal("Current before a plan is not nil")
	}
	ps = planStarted(t, "main", "a", "b")
	ps.Plan.Steps[0].Status = StepCompleted // changed behind the tools' back
	ps.Plan.Progress = Progress{}
	cur := ps.Current()
	if cur.Progress.Completed != 1 || cur.Progress.Total != 2 || ps.Plan.Progress.Total != 0 {
		t.Errorf("Current progress %+v, stored %+v", cur.Progress, ps.Plan.Progress)
	}
	b, _ := json.Marshal(ps.Plan)
	if !strings.Contains(string(b), `"progress":{"total":2,"completed":1`) {
		t.Errorf("plan JSON has stale progress: %s", b)
	}
}

func TestUnfinishedStepsAndBlockedOn(t *testing.T) {
	ps := NewPlanState("main")
	planOKCall(t, ps, ToolCreatePlan, `{"title":"T","steps":["a","b","c","d"]}`)
	if got := ps.UnfinishedSteps(); got != nil {
		t.Errorf("unstarted plan: %v", got)
	}
	planOKCall(t, ps, ToolStartPlan, `{}`)
	planOKCall(t, ps, ToolSetStepStatus, `{"step_id":"step_1","status":"completed"}`)
	planOKCall(t, ps, ToolSetStepStatus, `{"step_id":"step_2","status":"in_progress"}`)
	planOKCall(t, ps, ToolAddDependentStep, `{"step_id":"step_3","depends_on":[{"agent_id":"zed","step_id":"step_1"},{"agent_id":"amy","step_id":"step_2"}]}`)
	planOKCall(t, ps, ToolAddDependentStep, `{"description":"e","depends_on":[{"agent_id":"amy","step_id":"step_1"}]}`)
	if got := ps.UnfinishedSteps(); !reflect.DeepEqual(got, []string{"b", "d"}) {
		t.Errorf("UnfinishedSteps = %v", got)
	}
	if got := ps.BlockedOn(); !reflect.DeepEqual(got, []string{"amy", "zed"}) {
		t.Errorf("BlockedOn = %v", got)
	}
	planOKCall(t, ps, ToolCompletePlan, `{"status":"failed"}`)
	if ps.UnfinishedSteps() != nil || ps.BlockedOn() != nil {
		t.Errorf("finished plan still counts: %v %v", ps.UnfinishedSteps(), ps.BlockedOn())
	}
}

// TestScenario05 plays scenarios/05_plan_with_approval.json at the domain level.
func TestScenario05(t *testing.T) {
	ps := NewPlanState("main")
	call := func(name, args string) PlanOutcome { return ps.ApplyPlan(planCall(name, args), true) }
	errors := 0
	for i, c := range []struct{ name, args string }{
		{ToolCreatePlan, `{"title":"Refactor auth module","steps":["Review current auth implementation","Extract token validation to separate module","Update imports in dependent files"]}`},
		{ToolStartPlan, `{"message":"Ready to proceed?"}`},
		{ToolSetStepStatus, `{"step_id":"step_1","status":"completed","result":"Found auth.py, tokens.py, session.py"}`},
		{ToolSetStepStatus, `{"step_id":"step_2","status":"completed","result":"Unable to extract: circular imports"}`},
		{ToolSetStepStatus, `{"step_id":"step_2","status":"failed","error":"Circular imports between tokens.py and session.py"}`},
		{ToolSetStepStatus, `{"step_id":"step_3","status":"skipped","result":"Nothing was moved"}`},
		{ToolCompletePlan, `{"status":"failed","summary":"Blocked by circular imports"}`},
	} {
		out := call(c.name, c.args)
		if c.name == ToolStartPlan {
			if !out.NeedsApproval || !ps.AwaitingApproval {
				t.Fatalf("startPlan did not wait for approval: %+v", out)
			}
			out = ps.Approve("")
		}
		if out.Result.IsError {
			errors++
			if i != 3 {
				t.Errorf("call %d (%s) refused: %s", i, c.name, out.Result.Content)
			}
		}
	}
	if errors != 1 {
		t.Errorf("%d refused calls, want 1", errors)
	}
	p := ps.Current()
	if p.Status != PlanFailed || !reflect.DeepEqual(stepStatuses(p), []string{StepCompleted, StepFailed, StepSkipped}) {
		t.Errorf("plan %s, steps %v", p.Status, stepStatuses(p))
	}
	if pr := p.Progress; pr.Completed != 1 || pr.Failed != 1 || pr.Skipped != 1 || pr.Percent != 33.3 {
		t.Errorf("progress = %+v", pr)
	}
	want := []string{EventPlanCreated, EventPlanStarted, EventStepCompleted, EventStepFailed, EventStepSkipped, EventPlanFailed}
	if got := planTypes(ps.Events); !reflect.DeepEqual(got, want) {
		t.Errorf("events = %v, want %v", got, want)
	}
	for i, ev := range ps.Events {
		if ev.EventID != i+1 || ev.AgentID != "main" || ev.PlanID != "plan_1" {
			t.Errorf("event %d = %+v", i, ev)
		}
	}
	golden := "Current Plan: Refactor auth module\nStatus: failed\n\nSteps:\n" +
		"  [x] step_1: Review current auth implementation\n" +
		"  [!] step_2: Extract token validation to separate module\n" +
		"  [-] step_3: Update imports in dependent files\n\nProgress: 1/3 (33.3%)"
	if got := PlanChecklist(p); got != golden {
		t.Errorf("checklist:\n%s\nwant:\n%s", got, golden)
	}
}

// TestStateSurvivesJSONRoundTrip: continue-as-new carries PlanState as JSON;
// the decoded state must go on exactly as the original.
func TestStateSurvivesJSONRoundTrip(t *testing.T) {
	run := func(roundTrip bool) string {
		ps := planStarted(t, "main", "a", "b")
		planOKCall(t, ps, ToolSubscribe, `{"event_types":["step_completed"]}`)
		planOKCall(t, ps, ToolAddDependentStep, `{"description":"c","depends_on":[{"agent_id":"kid","step_id":"step_1"}]}`)
		if roundTrip {
			b, err := json.Marshal(ps)
			if err != nil {
				t.Fatal(err)
			}
			ps = &PlanState{}
			if err := json.Unmarshal(b, ps); err != nil {
				t.Fatal(err)
			}
		}
		ps.Receive(Event{EventID: 9, Type: EventStepCompleted, AgentID: "kid", PlanID: "plan_1", StepID: "step_1", Data: json.RawMessage(`{"output":{"n":1},"result":"r"}`)})
		ps.TakeNotifications()
		planOKCall(t, ps, ToolSubscribe, `{"event_types":["plan_created"]}`)
		planOKCall(t, ps, ToolSetStepStatus, `{"step_id":"step_3","status":"completed"}`)
		b, _ := json.Marshal(ps)
		return string(b)
	}
	if a, b := run(false), run(true); a != b {
		t.Errorf("state after a JSON round trip differs:\n%s\n%s", a, b)
	}
}
