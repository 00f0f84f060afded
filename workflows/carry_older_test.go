package workflows

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/todoflow/todoflow/api"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// A flat carry, as protocols 0 and 1 wrote it, reads into today's parts
// with nothing lost: every field of it is set here, and each must be found
// in its part.
func TestFlatCarryReadsIntoItsParts(t *testing.T) {
	f := flatCarry{
		Protocol:        1,
		Messages:        []model.Message{{Role: model.RoleSystem, Content: "system"}, {Role: model.RoleUser, Content: "hi"}},
		Todo:            todo.State{Todos: []todo.Item{{ID: "1", Content: "Read", Status: todo.InProgress}}},
		Turns:           3,
		ModelCalls:      7,
		SummaryCalls:    1,
		ContextLimit:    9000,
		Continuation:    true,
		Inbox:           []Inbound{{Text: "go on", ReplyTo: "u1", Blocked: &BlockedTurn{Calls: 2, Next: true}}},
		Ended:           true,
		Plans:           &todo.PlanState{AgentID: "main", PlanCount: 2},
		Subagents:       map[string]api.State{"done": {AgentID: "done", Status: api.StatusCompleted}},
		SubagentsPruned: 4,
		Running:         []RunningChild{{AgentID: "kid", WorkflowID: "root/kid"}},
		FailedTurn:      true,
		ModelError:      &api.ModelError{Message: "overloaded"},
		Usage:           api.Usage{PromptTokens: 10},
		EventsPruned:    5,
		Tree:            &TreeCarry{Asked: []string{"kid"}, Subs: 2},
		Remembered:      []string{"write_file"},
		Replies:         []KeptReply{{UpdateID: "u0", Reply: "earlier"}},
		Published:       &PublishedAttrs{Total: 1, Status: api.StatusRunning},
		Reports:         []CarriedReporter{{Status: api.ReporterStatus{Type: "webhook", Delivered: 3}}},
	}
	v := reflect.ValueOf(f)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("the test leaves flatCarry.%s unset: set it, and read it into its part", v.Type().Field(i).Name)
		}
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var c Carry
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("a flat carry does not read: %v", err)
	}
	checks := []struct {
		field     string
		got, want any
	}{
		{"protocol", c.Protocol, 1},
		{"messages", c.Window.Messages, f.Messages},
		{"todo", c.Todo, f.Todo},
		{"turns", c.Session.Turns, 3},
		{"model_calls", c.Session.ModelCalls, 7},
		{"summary_calls", c.Window.SummaryCalls, 1},
		{"context_limit", c.Window.ContextLimit, 9000},
		{"continuation", c.Session.Continuation, true},
		{"inbox", c.Inbox.Queue, f.Inbox},
		{"ended", c.Session.Ended, true},
		{"plans", c.Plans.PlanCount, 2},
		{"subagents", c.Tree.Subagents, f.Subagents},
		{"subagents_pruned", c.Tree.SubagentsPruned, 4},
		{"running", c.Tree.Running, f.Running},
		{"failed_turn", c.Session.FailedTurn, true},
		{"model_error", c.Session.ModelError, f.ModelError},
		{"usage", c.Session.Usage, f.Usage},
		{"events_pruned", c.Plans.Pruned, 5},
		{"tree", [2]any{c.Tree.Asked, c.Tree.Subs}, [2]any{f.Tree.Asked, f.Tree.Subs}},
		{"remembered", c.Approvals.Remembered, f.Remembered},
		{"replies", c.Inbox.Replies, f.Replies},
		{"published", c.Published, f.Published},
		{"reports", c.Reports, f.Reports},
	}
	if len(checks) != v.NumField() {
		t.Fatalf("%d fields checked of flatCarry's %d", len(checks), v.NumField())
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s: read as %+v; want %+v", ch.field, ch.got, ch.want)
		}
	}

	// Today's carry reads back as it was written.
	back, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var again Carry
	if err := json.Unmarshal(back, &again); err != nil || !reflect.DeepEqual(again, c) {
		t.Errorf("today's carry does not read back as written: %v\n%s", err, back)
	}
}
