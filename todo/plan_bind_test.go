package todo

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// peers is a Peers for tests: agents in kinds have that kind, any other
// agent is PeerUnknown.
type peers struct {
	kinds map[string]PeerKind
	known []string
}

func (p peers) Peer(id string) PeerKind {
	if k, ok := p.kinds[id]; ok {
		return k
	}
	return PeerUnknown
}

func (p peers) Known() []string { return p.known }

// feed relays to `to` the events of `from` it has not relayed yet (*n of
// them were) and returns what `to` emitted.
func feed(to, from *PlanState, n *int) []Event {
	got := relay(to, from.Events[*n:])
	*n = len(from.Events)
	return got
}

// impl returns a producer "impl" whose plan_1 completed step_1 with output
// {"plan":1} and ended completed.
func implPlan1(t *testing.T) *PlanState {
	t.Helper()
	p := planStarted(t, "impl", "Write it")
	planOKCall(t, p, ToolCompleteStepWithOutput, `{"step_id":"step_1","output":{"plan":1},"result":"v1 written"}`)
	planOKCall(t, p, ToolCompletePlan, `{"status":"completed"}`)
	return p
}

// newPlan makes the producer create and start its next plan.
func newPlan(t *testing.T, p *PlanState, steps string) {
	t.Helper()
	planOKCall(t, p, ToolCreatePlan, `{"title":"Next","steps":`+steps+`}`)
	planOKCall(t, p, ToolStartPlan, `{}`)
}

const depImpl = `{"description":"Review","depends_on":[{"agent_id":"impl","step_id":"step_1"}]}`

func TestPlanNumber(t *testing.T) {
	tests := []struct {
		id   string
		want int
	}{
		{"plan_1", 1}, {"plan_12", 12}, {"plan_907", 907},
		{"", 0}, {"plan_", 0}, {"plan_0", 0}, {"plan_01", 0}, {"plan_-1", 0}, {"plan_+1", 0},
		{"plan_x", 0}, {"plan_1 ", 0}, {"step_3", 0}, {"Plan_3", 0}, {"plan_99999999999999999999999", 0},
	}
	for _, tt := range tests {
		if got := planNumber(tt.id); got != tt.want {
			t.Errorf("planNumber(%q) = %d, want %d", tt.id, got, tt.want)
		}
	}
	admits := []struct {
		bound, plan string
		want        bool
	}{
		{"", "plan_1", true}, {"", "", true}, {"plan_2", "plan_2", true}, {"plan_2", "plan_3", true},
		{"plan_2", "plan_1", false}, {"plan_2", "", false}, {"plan_2", "bogus", false}, {"bogus", "plan_1", true},
		{"plan_10", "plan_9", false}, {"plan_9", "plan_10", true},
	}
	for _, tt := range admits {
		if got := admitsPlan(tt.bound, tt.plan); got != tt.want {
			t.Errorf("admitsPlan(%q, %q) = %v, want %v", tt.bound, tt.plan, got, tt.want)
		}
	}
}

// TestDependencyBoundToCurrentPlan is the plan-boundary bug: impl's plan_1
// completed step_1; a dependency on impl:step_1 added once impl's plan_2
// exists must wait for plan_2's step_1, and receive its output.
func TestDependencyBoundToCurrentPlan(t *testing.T) {
	tests := []struct {
		name string
		// before the dependency is added, the consumer has seen impl's
		// plan_1 events, and plan_2's plan_created when plan2First.
		plan2First bool
		wantBound  string
		// the status right after addDependentStep, and its output then.
		wantNow    string
		wantOutNow string
	}{
		{name: "added during plan_2", plan2First: true, wantBound: "plan_2", wantNow: StepBlocked},
		{name: "added before plan_2 (plan_1's step_1 is the one meant)", wantBound: "plan_1", wantNow: StepPending, wantOutNow: `{"plan":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			impl := implPlan1(t)
			main := planStarted(t, "main", "a")
			n := 0
			feed(main, impl, &n)
			if tt.plan2First {
				newPlan(t, impl, `["Rewrite it"]`)
				feed(main, impl, &n)
			}
			out := planOKCall(t, main, ToolAddDependentStep, depImpl)
			s := main.Plan.Steps[1]
			if s.Status != tt.wantNow || s.BoundPlans["impl"] != tt.wantBound || string(s.ReceivedOutputs["impl:step_1"]) != tt.wantOutNow {
				t.Fatalf("after addDependentStep: %+v (result %s)", s, out.Result.Content)
			}
			if !strings.Contains(out.Result.Content, `"bound_plans":{"impl":"`+tt.wantBound+`"}`) {
				t.Errorf("result lacks the binding: %s", out.Result.Content)
			}
			if !tt.plan2First {
				return
			}
			// plan_1's completion relayed again (a late copy) settles nothing.
			if got := main.Receive(impl.Events[2]); impl.Events[2].Type != EventStepCompleted || len(got) != 0 {
				t.Fatalf("plan_1's step_completed %+v emitted %v", impl.Events[2], planTypes(got))
			}
			planOKCall(t, impl, ToolCompleteStepWithOutput, `{"step_id":"step_1","output":{"plan":2},"result":"v2 written"}`)
			if got := planTypes(feed(main, impl, &n)); !reflect.DeepEqual(got, []string{EventStepUnblocked}) {
				t.Fatalf("plan_2's completion emitted %v", got)
			}
			s = main.Plan.Steps[1]
			if s.Status != StepPending || string(s.ReceivedOutputs["impl:step_1"]) != `{"plan":2}` {
				t.Errorf("after plan_2's step_1: %+v", s)
			}
		})
	}
}

// An earlier plan's failure, cancellation or failed step never fails a step
// bound to a later plan; the bound plan's do.
func TestEarlierPlanFailureDoesNotFailLaterBinding(t *testing.T) {
	tests := []struct {
		name     string
		earlier  []Event // impl's events of plan_1, relayed after the binding to plan_2
		inLog    bool    // relay them before addDependentStep instead
		bound    []Event // then events of plan_2
		wantStat string
	}{
		{name: "plan_1 failed, relayed late", earlier: []Event{
			{Type: EventPlanFailed, AgentID: "impl", PlanID: "plan_1", Data: json.RawMessage(`{"unfinished":["step_1"]}`)}},
			wantStat: StepBlocked},
		{name: "plan_1 failed, already in the log", inLog: true, earlier: []Event{
			{Type: EventPlanFailed, AgentID: "impl", PlanID: "plan_1", Data: json.RawMessage(`{"unfinished":["step_1"]}`)}},
			wantStat: StepBlocked},
		{name: "plan_1 cancelled without a list", earlier: []Event{{Type: EventPlanCancelled, AgentID: "impl", PlanID: "plan_1"}},
			wantStat: StepBlocked},
		{name: "plan_1's step_1 failed", inLog: true, earlier: []Event{{Type: EventStepFailed, AgentID: "impl", PlanID: "plan_1", StepID: "step_1"}},
			wantStat: StepBlocked},
		{name: "plan_1's step_1 skipped", earlier: []Event{{Type: EventStepSkipped, AgentID: "impl", PlanID: "plan_1", StepID: "step_1"}},
			wantStat: StepBlocked},
		{name: "an event of no plan", earlier: []Event{{Type: EventPlanFailed, AgentID: "impl"}},
			wantStat: StepBlocked},
		{name: "plan_2 failed", bound: []Event{
			{Type: EventPlanFailed, AgentID: "impl", PlanID: "plan_2", Data: json.RawMessage(`{"unfinished":["step_1"]}`)}},
			wantStat: StepFailed},
		{name: "plan_3's step_1 failed", bound: []Event{{Type: EventStepFailed, AgentID: "impl", PlanID: "plan_3", StepID: "step_1"}},
			wantStat: StepFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := planStarted(t, "main", "a")
			ps.Receive(Event{Type: EventPlanCreated, AgentID: "impl", PlanID: "plan_1"})
			if tt.inLog {
				relay(ps, tt.earlier)
			}
			ps.Receive(Event{Type: EventPlanCreated, AgentID: "impl", PlanID: "plan_2"})
			planOKCall(t, ps, ToolAddDependentStep, depImpl)
			if !tt.inLog {
				relay(ps, tt.earlier)
			}
			if s := ps.Plan.Steps[1]; s.Status != StepBlocked {
				t.Fatalf("an earlier plan's event settled the step: %+v", s)
			}
			relay(ps, tt.bound)
			if s := ps.Plan.Steps[1]; s.Status != tt.wantStat {
				t.Errorf("step = %+v, want %s", s, tt.wantStat)
			}
		})
	}
}

func TestUnknownPeerRefused(t *testing.T) {
	dir := peers{kinds: map[string]PeerKind{"a": PeerLocal, "b": PeerRemote}, known: []string{"main", "b", "a"}}
	tests := []struct {
		name, args string
		want       []string
	}{
		{"one unknown", `{"description":"x","depends_on":[{"agent_id":"a","step_id":"step_1"},{"agent_id":"x","step_id":"step_1"}]}`,
			[]string{`agent "x" is not in this run tree (known: a, b, main). depends_on names agents spawned in this tree; spawn it first or check the id.`}},
		{"on an existing step", `{"step_id":"step_1","depends_on":[{"agent_id":"x","step_id":"step_2"}]}`,
			[]string{`agent "x" is not in this run tree`}},
		{"several unknown", `{"description":"x","depends_on":[{"agent_id":"y","step_id":"step_1"},{"agent_id":"x","step_id":"step_1"},{"agent_id":"y","step_id":"step_2"}]}`,
			[]string{`agents "y", "x" are not in this run tree (known: a, b, main)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := planStarted(t, "main", "a", "b")
			ps.Peers = dir
			before, _ := json.Marshal(ps)
			planRefused(t, ps, ToolAddDependentStep, tt.args, tt.want...)
			if after, _ := json.Marshal(ps); string(after) != string(before) {
				t.Errorf("a refused call changed the state:\n%s\n%s", before, after)
			}
		})
	}
	// No directory entries at all.
	ps := planStarted(t, "main", "a")
	ps.Peers = peers{}
	planRefused(t, ps, ToolAddDependentStep, `{"description":"x","depends_on":[{"agent_id":"x","step_id":"step_1"}]}`, "(known: none)")
}

// A remote producer's dependency waits for Bind, even when the log already
// holds the producer's events; Bind then settles it from the log.
func TestRemoteDependencyWaitsForBind(t *testing.T) {
	completed := func(plan string, out string) Event {
		return Event{Type: EventStepCompleted, AgentID: "sib", PlanID: plan, StepID: "step_1", Data: json.RawMessage(`{"output":` + out + `}`)}
	}
	tests := []struct {
		name     string
		log      []Event // sib's events in the log before Bind
		bindTo   string
		want     []string // Bind's events
		wantStat string
		wantOut  string
	}{
		{"completed in the bound plan", []Event{completed("plan_1", `{"v":1}`), completed("plan_2", `{"v":2}`)}, "plan_2",
			[]string{EventStepUnblocked}, StepPending, `{"v":2}`},
		{"only an earlier plan's completion", []Event{completed("plan_1", `{"v":1}`)}, "plan_2", []string{}, StepBlocked, ""},
		{"bound to any plan", []Event{completed("plan_1", `{"v":1}`)}, "", []string{EventStepUnblocked}, StepPending, `{"v":1}`},
		{"failed in the bound plan", []Event{{Type: EventStepFailed, AgentID: "sib", PlanID: "plan_2", StepID: "step_1", Data: json.RawMessage(`{"error":"boom"}`)}},
			"plan_2", []string{EventStepFailed}, StepFailed, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := planStarted(t, "main", "a")
			ps.Peers = peers{kinds: map[string]PeerKind{"sib": PeerRemote, "kid": PeerLocal}}
			relay(ps, tt.log[:len(tt.log)-1])
			out := planOKCall(t, ps, ToolAddDependentStep, `{"description":"x","depends_on":[{"agent_id":"sib","step_id":"step_1"},{"agent_id":"kid","step_id":"step_1"}]}`)
			if !strings.Contains(out.Result.Content, "sib has not answered yet") || strings.Contains(out.Result.Content, "kid has not") {
				t.Errorf("result = %s", out.Result.Content)
			}
			s := ps.Plan.Steps[1]
			if _, ok := s.BoundPlans["sib"]; ok || s.BoundPlans["kid"] != "" || len(s.BoundPlans) != 1 {
				t.Fatalf("bindings = %v", s.BoundPlans)
			}
			// Pending: sib's events are recorded, settle nothing.
			n := len(ps.Events)
			if got := relay(ps, tt.log[len(tt.log)-1:]); len(got) != 0 || len(ps.Events) != n+1 {
				t.Fatalf("a pending binding was settled: %v", planTypes(got))
			}
			ps.Receive(Event{Type: EventStepCompleted, AgentID: "kid", PlanID: "plan_1", StepID: "step_1"})
			if !reflect.DeepEqual(ps.PendingBindings(), []string{"sib"}) || ps.Plan.Steps[1].Status != StepBlocked {
				t.Fatalf("pending = %v, step %+v", ps.PendingBindings(), ps.Plan.Steps[1])
			}
			got := ps.Bind("sib", tt.bindTo)
			if !reflect.DeepEqual(planTypes(got), tt.want) {
				t.Errorf("Bind emitted %v, want %v", planTypes(got), tt.want)
			}
			s = ps.Plan.Steps[1]
			if s.Status != tt.wantStat || string(s.ReceivedOutputs["sib:step_1"]) != tt.wantOut || s.BoundPlans["sib"] != tt.bindTo {
				t.Errorf("after Bind: %+v", s)
			}
			if ps.PendingBindings() != nil {
				t.Errorf("still pending: %v", ps.PendingBindings())
			}
			if tt.wantStat == StepBlocked {
				// A later event of the bound plan settles it live.
				if got := ps.Receive(completed("plan_3", `{"v":3}`)); !reflect.DeepEqual(planTypes(got), []string{EventStepUnblocked}) {
					t.Errorf("live completion emitted %v", planTypes(got))
				}
			}
		})
	}
}

func TestBindNeverMovesABinding(t *testing.T) {
	tests := []struct {
		name   string
		first  string // the binding made first (by Bind)
		second string // a second Bind
	}{
		{"to an earlier plan", "plan_2", "plan_1"},
		{"to any plan", "plan_2", ""},
		{"to a later plan", "plan_2", "plan_3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := planStarted(t, "main", "a")
			ps.Peers = peers{kinds: map[string]PeerKind{"impl": PeerRemote}}
			ps.Receive(Event{Type: EventStepCompleted, AgentID: "impl", PlanID: "plan_1", StepID: "step_1"})
			planOKCall(t, ps, ToolAddDependentStep, depImpl)
			if got := ps.Bind("impl", tt.first); len(got) != 0 {
				t.Fatalf("first Bind emitted %v", planTypes(got))
			}
			if got := ps.Bind("impl", tt.second); len(got) != 0 {
				t.Errorf("second Bind emitted %v", planTypes(got))
			}
			if s := ps.Plan.Steps[1]; s.BoundPlans["impl"] != tt.first || s.Status != StepBlocked {
				t.Errorf("step = %+v", s)
			}
		})
	}
	// A local binding made by addDependentStep is kept the same way, and a
	// new ref to the same producer on that step follows it.
	ps := planStarted(t, "main", "a")
	ps.Receive(Event{Type: EventPlanCreated, AgentID: "impl", PlanID: "plan_2"})
	planOKCall(t, ps, ToolAddDependentStep, depImpl)
	ps.Receive(Event{Type: EventPlanCreated, AgentID: "impl", PlanID: "plan_3"})
	planOKCall(t, ps, ToolAddDependentStep, `{"step_id":"step_2","depends_on":[{"agent_id":"impl","step_id":"step_2"}]}`)
	ps.Bind("impl", "plan_1")
	if s := ps.Plan.Steps[1]; s.BoundPlans["impl"] != "plan_2" || len(s.BlockedBy) != 2 {
		t.Errorf("step = %+v", s)
	}
	// Nothing to bind: no active plan, own agent, no agent.
	for _, ps := range []*PlanState{NewPlanState("main"), planStarted(t, "main", "a")} {
		if got := ps.Bind("impl", "plan_1"); len(got) != 0 {
			t.Errorf("Bind without dependents emitted %v", planTypes(got))
		}
		if got := ps.Bind("main", ""); len(got) != 0 {
			t.Errorf("Bind on itself emitted %v", planTypes(got))
		}
	}
}

// A producer with no plan in the log binds to "" (any plan): locally at
// once, remotely through Bind.
func TestBindToAnyPlan(t *testing.T) {
	for _, kind := range []PeerKind{PeerLocal, PeerRemote} {
		ps := planStarted(t, "main", "a")
		ps.Peers = peers{kinds: map[string]PeerKind{"kid": kind}}
		planOKCall(t, ps, ToolAddDependentStep, `{"description":"x","depends_on":[{"agent_id":"kid","step_id":"step_1"}]}`)
		if kind == PeerRemote {
			ps.Bind("kid", "")
		}
		if b, ok := ps.Plan.Steps[1].BoundPlans["kid"]; !ok || b != "" {
			t.Fatalf("kind %d: bindings %v", kind, ps.Plan.Steps[1].BoundPlans)
		}
		b, _ := json.Marshal(ps.Plan.Steps[1])
		if !strings.Contains(string(b), `"bound_plans":{"kid":""}`) {
			t.Errorf("step JSON = %s", b)
		}
		var back PlanState
		raw, _ := json.Marshal(ps)
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		if got := back.Receive(Event{Type: EventStepCompleted, AgentID: "kid", PlanID: "plan_4", StepID: "step_1"}); !reflect.DeepEqual(planTypes(got), []string{EventStepUnblocked}) {
			t.Errorf("kind %d: any plan's completion emitted %v", kind, planTypes(got))
		}
	}
}

func TestFailDependency(t *testing.T) {
	setup := func(t *testing.T) *PlanState {
		ps := planStarted(t, "main", "a")
		ps.Peers = peers{kinds: map[string]PeerKind{"x": PeerRemote, "y": PeerLocal}}
		planOKCall(t, ps, ToolAddDependentStep, `{"description":"on x","depends_on":[{"agent_id":"x","step_id":"step_1"}]}`)
		planOKCall(t, ps, ToolAddDependentStep, `{"description":"on y","depends_on":[{"agent_id":"y","step_id":"step_1"}]}`)
		planOKCall(t, ps, ToolAddDependentStep, `{"description":"on both","depends_on":[{"agent_id":"y","step_id":"step_2"},{"agent_id":"x","step_id":"step_3"}]}`)
		return ps
	}
	tests := []struct {
		agent, reason string
		wantSteps     []string
		wantErr       string
		wantDep       string
	}{
		{"x", `agent "x" is not in this run tree (its agents are main, y)`, []string{"step_2", "step_4"}, `agent "x" is not in this run tree`, `{"agent_id":"x","step_id":"step_1"}`},
		{"x", "  ", []string{"step_2", "step_4"}, "agent x is not in this run tree, so x:step_1", `{"agent_id":"x","step_id":"step_1"}`},
		{"y", "gone", []string{"step_3", "step_4"}, "gone", `{"agent_id":"y","step_id":"step_1"}`},
		{"z", "nobody waits", nil, "", ""},
	}
	for _, tt := range tests {
		ps := setup(t)
		got := ps.FailDependency(tt.agent, tt.reason)
		var steps []string
		for _, ev := range got {
			if ev.Type != EventStepFailed || ev.AgentID != "main" {
				t.Errorf("FailDependency(%s) emitted %+v", tt.agent, ev)
			}
			steps = append(steps, ev.StepID)
		}
		if !slices.Equal(steps, tt.wantSteps) {
			t.Errorf("FailDependency(%s) failed %v, want %v", tt.agent, steps, tt.wantSteps)
		}
		if len(got) == 0 {
			continue
		}
		if e := ps.Plan.Steps[ps.Plan.step(got[0].StepID)].Error; !strings.Contains(e, tt.wantErr) {
			t.Errorf("error %q lacks %q", e, tt.wantErr)
		}
		if !strings.Contains(string(got[0].Data), `"dependency":`+tt.wantDep) {
			t.Errorf("data = %s", got[0].Data)
		}
		if again := ps.FailDependency(tt.agent, tt.reason); len(again) != 0 {
			t.Errorf("second FailDependency emitted %v", planTypes(again))
		}
	}
	if got := NewPlanState("main").FailDependency("x", "r"); got != nil {
		t.Errorf("no plan: %v", got)
	}
}

func TestPendingBindings(t *testing.T) {
	ps := NewPlanState("main")
	if got := ps.PendingBindings(); got != nil {
		t.Errorf("no plan: %v", got)
	}
	ps = planStarted(t, "main", "a", "b")
	ps.Peers = peers{kinds: map[string]PeerKind{"zed": PeerRemote, "amy": PeerRemote, "loc": PeerLocal, "bob": PeerRemote}}
	planOKCall(t, ps, ToolAddDependentStep, `{"description":"c","depends_on":[{"agent_id":"zed","step_id":"step_1"},{"agent_id":"loc","step_id":"step_1"},{"agent_id":"amy","step_id":"step_1"}]}`)
	planOKCall(t, ps, ToolAddDependentStep, `{"step_id":"step_1","depends_on":[{"agent_id":"amy","step_id":"step_2"},{"agent_id":"bob","step_id":"step_1"}]}`)
	steps := []struct {
		do   func()
		want []string
	}{
		{func() {}, []string{"amy", "bob", "zed"}},
		{func() { ps.Bind("amy", "plan_1") }, []string{"bob", "zed"}},
		{func() { ps.FailDependency("bob", "not in the tree") }, []string{"zed"}}, // step_1 failed: no longer blocked
		{func() { ps.Bind("zed", "") }, nil},
	}
	for i, st := range steps {
		st.do()
		if got := ps.PendingBindings(); !slices.Equal(got, st.want) {
			t.Errorf("step %d: PendingBindings = %v, want %v", i, got, st.want)
		}
	}
	ps.Peers = peers{kinds: map[string]PeerKind{"new": PeerRemote}}
	planOKCall(t, ps, ToolAddDependentStep, `{"description":"d","depends_on":[{"agent_id":"new","step_id":"step_1"}]}`)
	planOKCall(t, ps, ToolCompletePlan, `{"status":"cancelled"}`)
	if got := ps.PendingBindings(); got != nil {
		t.Errorf("finished plan: %v", got)
	}
}

func TestCurrentPlanOfAndAdmitsPlan(t *testing.T) {
	ps := NewPlanState("main")
	if got := ps.CurrentPlanOf("main"); got != "" {
		t.Errorf("own plan before any: %q", got)
	}
	evs := []Event{
		{Type: EventPlanCreated, AgentID: "impl", PlanID: "plan_1"},          // 1
		{Type: EventStepCompleted, AgentID: "impl", PlanID: "plan_1"},        // 2
		{Type: EventPlanCreated, AgentID: "kid", PlanID: "plan_5"},           // 3
		{Type: EventPlanCreated, AgentID: "impl", PlanID: "plan_2"},          // 4
		{Type: EventStepStarted, AgentID: "impl", PlanID: "plan_2"},          // 5
		{Type: EventStepCompleted, AgentID: "impl", PlanID: "plan_3"},        // 6
		{Type: EventStepCompleted, AgentID: "impl", PlanID: "", StepID: "s"}, // 7: no plan
	}
	relay(ps, evs)
	planOKCall(t, ps, ToolCreatePlan, `{"title":"T","steps":["a"]}`) // 8
	planOKCall(t, ps, ToolCreatePlan, `{"title":"U","steps":["a"]}`) // 9
	plans := []struct{ agent, want string }{
		{"impl", "plan_2"}, {"kid", "plan_5"}, {"main", "plan_2"}, {"nobody", ""}, {"", ""},
	}
	for _, tt := range plans {
		if got := ps.CurrentPlanOf(tt.agent); got != tt.want {
			t.Errorf("CurrentPlanOf(%q) = %q, want %q", tt.agent, got, tt.want)
		}
	}
	tests := []struct {
		agent, from string
		want        []int
	}{
		{"impl", "", []int{1, 2, 4, 5, 6, 7}},
		{"impl", "plan_1", []int{1, 2, 4, 5, 6}},
		{"impl", "plan_2", []int{4, 5, 6}},
		{"impl", "plan_3", []int{6}},
		{"impl", "plan_4", nil},
		{"impl", "junk", []int{1, 2, 4, 5, 6, 7}},
		{"main", "plan_2", []int{9}},
		{"main", "", []int{8, 9}},
		{"nobody", "", nil},
	}
	for _, tt := range tests {
		var ids []int
		for _, ev := range ps.Events {
			if ev.AgentID == tt.agent && admitsPlan(tt.from, ev.PlanID) {
				ids = append(ids, ev.EventID)
			}
		}
		if !slices.Equal(ids, tt.want) {
			t.Errorf("events of %q admitted from %q = %v, want %v", tt.agent, tt.from, ids, tt.want)
		}
	}
}

// The model hears of its own steps that a dependency unblocked or failed,
// once, subscribed or not; not of what it did itself, nor of what
// addDependentStep's result already told.
func TestOwnDependencyNotifications(t *testing.T) {
	ps := planStarted(t, "main", "a", "b")
	ps.Receive(Event{Type: EventStepCompleted, AgentID: "done", PlanID: "plan_1", StepID: "step_1"})
	planOKCall(t, ps, ToolAddDependentStep, `{"description":"told at once","depends_on":[{"agent_id":"done","step_id":"step_1"}]}`) // unblocked in the result
	planOKCall(t, ps, ToolAddDependentStep, `{"description":"Review","depends_on":[{"agent_id":"kid","step_id":"step_1"}]}`)
	planOKCall(t, ps, ToolAddDependentStep, `{"description":"Merge","depends_on":[{"agent_id":"pal","step_id":"step_2"}]}`)
	planOKCall(t, ps, ToolSetStepStatus, `{"step_id":"step_1","status":"failed","error":"own failure"}`) // the model's own report
	if got := ps.TakeNotifications(); got != nil || ps.UnheardOwn() {
		t.Fatalf("nothing happened yet, got %+v (unheard: %v)", got, ps.UnheardOwn())
	}
	ps.Receive(Event{Type: EventStepCompleted, AgentID: "kid", PlanID: "plan_1", StepID: "step_1", Data: json.RawMessage(`{"output":{"ok":true},"provides":"review"}`)})
	ps.Receive(Event{Type: EventStepFailed, AgentID: "pal", PlanID: "plan_1", StepID: "step_2", Data: json.RawMessage(`{"error":"disk full"}`)})
	if !ps.UnheardOwn() {
		t.Fatalf("an own step unblocked and one failed, unheard; UnheardOwn says no")
	}
	got := ps.TakeNotifications()
	if ps.UnheardOwn() {
		t.Errorf("UnheardOwn after the model was told")
	}
	var desc []string
	for _, ev := range got {
		desc = append(desc, ev.AgentID+"/"+ev.Type+"/"+ev.StepID)
	}
	if want := []string{"main/step_unblocked/step_4", "main/step_failed/step_5"}; !slices.Equal(desc, want) {
		t.Fatalf("notifications = %v, want %v", desc, want)
	}
	if again := ps.TakeNotifications(); len(again) != 0 {
		t.Errorf("delivered twice: %+v", again)
	}
	texts := []struct {
		ev   Event
		want []string
	}{
		{got[0], []string{"step_unblocked", "step step_4", `"Review"`}},
		{got[1], []string{"step_failed", "step step_5", `"Merge"`, "Error: dependency pal:step_2 failed: disk full"}},
	}
	for _, tt := range texts {
		txt := NotificationText(tt.ev)
		for _, w := range tt.want {
			if !strings.Contains(txt, w) {
				t.Errorf("NotificationText = %q lacks %q", txt, w)
			}
		}
	}
	if !strings.Contains(string(got[0].Data), `"received":["kid:step_1","review"]`) {
		t.Errorf("step_unblocked data = %s", got[0].Data)
	}
	// A subscription to others does not change that, and Bind's and
	// AgentEnded's results are notified too.
	planOKCall(t, ps, ToolSubscribe, `{"event_types":["step_completed"]}`)
	ps.Peers = peers{kinds: map[string]PeerKind{"far": PeerRemote, "gone": PeerLocal}}
	planOKCall(t, ps, ToolAddDependentStep, `{"description":"Far","depends_on":[{"agent_id":"far","step_id":"step_1"}]}`)
	planOKCall(t, ps, ToolAddDependentStep, `{"description":"Gone","depends_on":[{"agent_id":"gone","step_id":"step_1"}]}`)
	ps.Receive(Event{Type: EventStepCompleted, AgentID: "far", PlanID: "plan_1", StepID: "step_1"})
	ps.Bind("far", "plan_1")
	ps.AgentEnded("gone", "failed")
	desc = nil
	for _, ev := range ps.TakeNotifications() {
		desc = append(desc, ev.AgentID+"/"+ev.Type+"/"+ev.StepID)
	}
	want := []string{"done/step_completed/step_1", "kid/step_completed/step_1", "far/step_completed/step_1", "main/step_unblocked/step_6", "main/step_failed/step_7"}
	if !slices.Equal(desc, want) {
		t.Errorf("notifications = %v, want %v", desc, want)
	}
}

func TestPruneKeepsBindingsNeeds(t *testing.T) {
	ev := func(id int, agent, typ, plan, step string) Event {
		return Event{EventID: id, AgentID: agent, Type: typ, PlanID: plan, StepID: step, Data: json.RawMessage(`{}`)}
	}
	log := []Event{
		ev(1, "impl", EventPlanCreated, "plan_1", ""),
		ev(2, "impl", EventStepCompleted, "plan_1", "step_1"),
		ev(3, "impl", EventPlanFailed, "plan_1", ""),
		ev(4, "pal", EventPlanCreated, "plan_1", ""),
		ev(5, "impl", EventPlanCreated, "plan_2", ""),
		ev(6, "impl", EventStepCompleted, "plan_2", "step_2"),
		ev(7, "impl", EventStepStarted, "plan_2", "step_3"),
		ev(8, "pal", EventStepCompleted, "plan_1", "step_1"),
		ev(9, "main", EventPlanCreated, "plan_1", ""),
		ev(10, "main", EventStepCompleted, "plan_1", "step_1"),
		ev(11, "main", EventStepStarted, "plan_1", "step_2"),
		ev(12, "main", EventStepStarted, "plan_1", "step_2"),
	}
	tests := []struct {
		name    string
		binding map[string]string // a blocked step on impl:step_9 with these bindings (nil: none)
		ownPlan bool              // main's plan_1 is its current plan
		want    []int
	}{
		{name: "no dependents", want: []int{4, 5, 6, 8, 12}},
		{name: "own current plan", ownPlan: true, want: []int{4, 5, 6, 8, 9, 10, 12}},
		{name: "bound to impl's plan_1", binding: map[string]string{"impl": "plan_1"}, want: []int{2, 3, 4, 5, 6, 8, 12}},
		{name: "bound to impl's plan_2", binding: map[string]string{"impl": "plan_2"}, want: []int{4, 5, 6, 8, 12}},
		{name: "binding pending", binding: map[string]string{}, want: []int{2, 3, 4, 5, 6, 8, 12}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := NewPlanState("main")
			ps.Events = slices.Clone(log)
			if tt.ownPlan || tt.binding != nil {
				s := newStep("step_1", "wait")
				if tt.binding != nil {
					s.Status = StepBlocked
					s.DependsOn = []Ref{{"impl", "step_9"}}
					s.BlockedBy = []Ref{{"impl", "step_9"}}
					s.BoundPlans = tt.binding
				}
				ps.Plan = &Plan{PlanID: "plan_1", Status: PlanActive, Started: true, Steps: []Step{s}}
				if !tt.ownPlan {
					ps.Plan.PlanID = "plan_7"
				}
			}
			ps.Prune(1, 1<<30)
			var ids []int
			for _, e := range ps.Events {
				ids = append(ids, e.EventID)
			}
			if !slices.Equal(ids, tt.want) {
				t.Errorf("kept %v, want %v", ids, tt.want)
			}
			// CurrentPlanOf reads the same after the prune.
			if ps.CurrentPlanOf("impl") != "plan_2" || ps.CurrentPlanOf("pal") != "plan_1" {
				t.Errorf("CurrentPlanOf after prune: impl %q, pal %q", ps.CurrentPlanOf("impl"), ps.CurrentPlanOf("pal"))
			}
		})
	}
	// A step bound to plan_1 still fails from plan_1's failure after a prune.
	ps := planStarted(t, "main", "a")
	ps.Peers = peers{kinds: map[string]PeerKind{"impl": PeerRemote}}
	planOKCall(t, ps, ToolAddDependentStep, depImpl)
	relay(ps, []Event{
		{Type: EventPlanCreated, AgentID: "impl", PlanID: "plan_1"},
		{Type: EventPlanFailed, AgentID: "impl", PlanID: "plan_1", Data: json.RawMessage(`{"unfinished":["step_1"],"summary":"no"}`)},
		{Type: EventPlanCreated, AgentID: "impl", PlanID: "plan_2"},
	})
	for i := 0; i < 20; i++ {
		ps.Receive(Event{Type: EventStepStarted, AgentID: "impl", PlanID: "plan_2", StepID: "step_2"})
	}
	ps.Prune(3, 1<<30)
	if got := planTypes(ps.Bind("impl", "plan_1")); !slices.Equal(got, []string{EventStepFailed}) {
		t.Errorf("Bind after prune emitted %v", got)
	}
}
