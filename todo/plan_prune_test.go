package todo

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestPrune(t *testing.T) {
	ev := func(id int, agent, typ, step string) Event {
		return Event{EventID: id, AgentID: agent, Type: typ, StepID: step}
	}
	log := []Event{
		ev(1, "main", EventPlanCreated, ""),
		ev(2, "impl", EventStepCompleted, "step_1"), // superseded by 5
		ev(3, "impl", EventStepStarted, "step_2"),
		ev(4, "impl", EventPlanFailed, ""),
		ev(5, "impl", EventStepCompleted, "step_1"),
		ev(6, "main", EventStepCompleted, "step_1"), // own: never needed
		ev(7, "impl", EventStepSkipped, "step_3"),
		ev(8, "main", EventStepStarted, "step_2"),
		ev(9, "impl", EventStepStarted, "step_4"),
	}
	tests := []struct {
		keep      int
		wantIDs   []int
		wantGone  int
		delivered []int
		wantDeliv []int
	}{
		{keep: 20, wantIDs: []int{1, 2, 3, 4, 5, 6, 7, 8, 9}, wantGone: 0, delivered: []int{2, 3}, wantDeliv: []int{2, 3}},
		{keep: 2, wantIDs: []int{4, 5, 7, 8, 9}, wantGone: 4, delivered: []int{2, 3, 5, 9}, wantDeliv: []int{5, 9}},
		{keep: 0, wantIDs: []int{4, 5, 7}, wantGone: 6, delivered: []int{9}, wantDeliv: []int{9}},
		{keep: -1, wantIDs: []int{4, 5, 7}, wantGone: 6},
	}
	for _, tt := range tests {
		ps := NewPlanState("main")
		ps.Events = slices.Clone(log)
		ps.Delivered = slices.Clone(tt.delivered)
		gone := ps.Prune(tt.keep, 1<<30)
		var ids []int
		for _, e := range ps.Events {
			ids = append(ids, e.EventID)
		}
		if !slices.Equal(ids, tt.wantIDs) || gone != tt.wantGone {
			t.Errorf("Prune(%d): ids %v removed %d, want %v removed %d", tt.keep, ids, gone, tt.wantIDs, tt.wantGone)
		}
		if tt.wantDeliv != nil && !slices.Equal(ps.Delivered, tt.wantDeliv) {
			t.Errorf("Prune(%d): delivered %v, want %v", tt.keep, ps.Delivered, tt.wantDeliv)
		}
		if next := ps.nextEventID(); next != 10 && len(ps.Events) > 0 && ps.Events[len(ps.Events)-1].EventID == 9 {
			t.Errorf("Prune(%d): next id %d, want 10", tt.keep, next)
		}
	}
}

// A dependency settled by an event older than the kept tail still resolves
// after a prune.
func TestPruneKeepsWhatDependenciesRead(t *testing.T) {
	ps := NewPlanState("main")
	ps.Events = []Event{{EventID: 1, AgentID: "impl", Type: EventStepCompleted, StepID: "step_1"}}
	for i := 2; i <= 50; i++ {
		ps.Events = append(ps.Events, Event{EventID: i, AgentID: "main", Type: EventStepStarted, StepID: "step_1"})
	}
	ps.Prune(10, 1<<30)
	bound := &Step{BoundPlans: map[string]string{"impl": ""}}
	if oc, _, _ := ps.outcomeInLog(bound, Ref{AgentID: "impl", StepID: "step_1"}); oc != outcomeCompleted {
		t.Fatalf("outcome after prune = %v, want completed", oc)
	}
	if len(ps.Events) != 11 {
		t.Fatalf("%d events kept, want 11", len(ps.Events))
	}
}

// The recent part kept is bounded by bytes too: a log of large events is
// carried in keepBytes, besides what dependencies read.
func TestPruneKeepsRecentEventsWithinBytes(t *testing.T) {
	ps := NewPlanState("main")
	data := json.RawMessage(strconv.Quote(strings.Repeat("d", 1000)))
	ps.Events = []Event{{EventID: 1, AgentID: "impl", Type: EventStepCompleted, StepID: "step_1", Data: data}}
	for i := 2; i <= 50; i++ {
		ps.Events = append(ps.Events, Event{EventID: i, AgentID: "main", Type: EventStepStarted, StepID: "step_1", Data: data})
	}
	gone := ps.Prune(100, 2500)
	var ids []int
	for _, e := range ps.Events {
		ids = append(ids, e.EventID)
	}
	if !slices.Equal(ids, []int{1, 49, 50}) || gone != 47 {
		t.Errorf("kept %v, removed %d; want the needed event 1 and the two latest that fit 2,500 bytes", ids, gone)
	}
}

// Thin bounds the log's bytes from its oldest events on; a dependency that
// resolves on a thinned event gets a note that says where the output is.
func TestThin(t *testing.T) {
	big := strings.Repeat("o", MaxStepOutputBytes-16)
	out := func(id int, agent string) Event {
		data, _ := json.Marshal(map[string]any{"description": strings.Repeat("d", 1000), "result": "done", "output": map[string]string{"o": big}, "provides": "report"})
		return Event{EventID: id, AgentID: agent, Type: EventStepCompleted, PlanID: "plan_1", StepID: "step_1", Data: data}
	}
	ps := NewPlanState("main")
	for i := range 10 {
		ps.Events = append(ps.Events, out(i+1, fmt.Sprintf("a%d", i)))
	}
	size := func() int { b, _ := json.Marshal(ps.Events); return len(b) }
	if n := ps.Thin(1 << 30); n != 0 {
		t.Errorf("Thin within the budget thinned %d events", n)
	}
	budget := size() / 2
	n := ps.Thin(budget)
	if size() > budget || n == 0 || n == 10 {
		t.Fatalf("Thin(%d) thinned %d events and left %d bytes", budget, n, size())
	}
	if d := eventData(ps.Events[9]); dataString(d, "result") != "done" {
		t.Errorf("the newest event was thinned: %s", ps.Events[9].Data)
	}
	d := eventData(ps.Events[0])
	if r := dataString(d, "result"); !strings.Contains(r, "a0's plan plan_1 has it") || dataString(d, "provides") != "report" || len(dataString(d, "description")) > 4*eventDescriptionRunes+3 {
		t.Errorf("a thinned event: %s", ps.Events[0].Data)
	}

	// A step that waits on a0's thinned step resolves, with the note.
	dep := planStarted(t, "main", "use the report")
	dep.Events = append(dep.Events, ps.Events[0])
	planOKCall(t, dep, ToolAddDependentStep, `{"step_id":"step_1","depends_on":[{"agent_id":"a0","step_id":"step_1"}]}`)
	got := string(dep.Plan.Steps[0].ReceivedOutputs["a0:step_1"])
	if dep.Plan.Steps[0].Status != StepPending || !strings.Contains(got, "ask that agent") {
		t.Errorf("the dependency on a thinned event: status %s, received %s", dep.Plan.Steps[0].Status, got)
	}
}
