package todo

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

// brokerLog is the root's log of a tree: main (the root), a with two plans,
// b with one.
func brokerLog() *PlanState {
	ps := NewPlanState("main")
	for _, ev := range []Event{
		{Type: EventPlanCreated, AgentID: "a", PlanID: "plan_1"},
		{Type: EventStepCompleted, AgentID: "a", PlanID: "plan_1", StepID: "step_1"},
		{Type: EventPlanCreated, AgentID: "b", PlanID: "plan_1"},
		{Type: EventPlanCreated, AgentID: "a", PlanID: "plan_2"},
		{Type: EventStepStarted, AgentID: "a", PlanID: "plan_2", StepID: "step_1"},
	} {
		ev.Data = json.RawMessage(`{}`)
		ps.Receive(ev)
	}
	return ps
}

func agents(ws []Want) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.Agent)
	}
	return out
}

func types(evs []Event) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.AgentID+":"+ev.Type+":"+ev.PlanID)
	}
	return out
}

func TestBrokerServe(t *testing.T) {
	steps := &Subscription{AgentID: "a", EventTypes: []string{EventStepCompleted, EventStepStarted}}
	tests := []struct {
		name      string
		had       []Want // the asker's earlier interests
		ended     string // how a ended
		w         Want
		bind      string // "-" for no binding
		backlog   []string
		interests int
	}{
		{name: "dependency binds to the current plan and sends its events",
			w: Want{Agent: "s", Of: "a"}, bind: "plan_2",
			backlog: []string{"a:plan_created:plan_2", "a:step_started:plan_2"}, interests: 1},
		{name: "never earlier than the asker knows",
			w: Want{Agent: "s", Of: "a", MinPlan: "plan_3"}, bind: "plan_3", interests: 1},
		{name: "subscription: every matching event, no binding",
			w: Want{Agent: "s", Of: "a", Filter: steps}, bind: "-",
			backlog: []string{"a:step_completed:plan_1", "a:step_started:plan_2"}, interests: 1},
		{name: "what an earlier interest sent is not sent again",
			had: []Want{{Agent: "s", Of: "a", Filter: steps}},
			w:   Want{Agent: "s", Of: "a"}, bind: "plan_2",
			backlog: []string{"a:plan_created:plan_2"}, interests: 2},
		{name: "every agent's, never the asker's own",
			w:    Want{Agent: "a", Of: "*", Filter: &Subscription{EventTypes: []string{EventPlanCreated}}},
			bind: "-", backlog: []string{"b:plan_created:plan_1"}, interests: 1},
		{name: "an ended producer says how",
			ended: "completed", w: Want{Agent: "s", Of: "a", Filter: steps}, bind: "-",
			backlog: []string{"a:step_completed:plan_1", "a:step_started:plan_2"}, interests: 1},
		{name: "the root's own want is answered, not recorded",
			w: Want{Agent: "main", Of: "a"}, bind: "plan_2",
			backlog: []string{"a:plan_created:plan_2", "a:step_started:plan_2"}, interests: 0},
	}
	for _, tt := range tests {
		b := Broker{Members: []Member{{AgentID: "a", Ended: tt.ended}, {AgentID: "b"}}, Interests: tt.had}
		ans := b.Serve(tt.w, brokerLog())
		bind := "-"
		if ans.Bind != nil {
			bind = *ans.Bind
		}
		if bind != tt.bind || !slices.Equal(types(ans.Backlog), tt.backlog) || ans.Gone != tt.ended || len(b.Interests) != tt.interests {
			t.Errorf("%s: bind %s, backlog %v, gone %q, %d interests; want %s, %v, %q, %d",
				tt.name, bind, types(ans.Backlog), ans.Gone, len(b.Interests), tt.bind, tt.backlog, tt.ended, tt.interests)
		}
	}
}

func TestBrokerDeliveries(t *testing.T) {
	b := Broker{Interests: []Want{
		{Agent: "s", Of: "a", Filter: &Subscription{AgentID: "a", EventTypes: []string{EventStepCompleted}}},
		{Agent: "s", Of: "a"}, // a dependency of s too: still one delivery
		{Agent: "d", Of: "a"},
		{Agent: "all", Of: "*", Filter: &Subscription{EventTypes: []string{EventStepCompleted, EventPlanCreated}}},
		{Agent: "a", Of: "*", Filter: &Subscription{EventTypes: []string{EventStepCompleted}}}, // a's own: never
		{Agent: "c", Of: "b"},
	}}
	tests := []struct {
		ev   Event
		want []string
	}{
		{Event{AgentID: "a", Type: EventStepCompleted}, []string{"s", "d", "all"}},
		{Event{AgentID: "a", Type: EventStepStarted}, []string{"s", "d"}},
		{Event{AgentID: "b", Type: EventPlanCreated}, []string{"all", "c"}},
		{Event{AgentID: "b", Type: EventStepCompleted}, []string{"all", "a", "c"}},
		{Event{AgentID: "x", Type: EventStepStarted}, nil},
	}
	for _, tt := range tests {
		if got := agents(b.Deliveries(tt.ev)); !slices.Equal(got, tt.want) {
			t.Errorf("%s of %s goes to %v, want %v", tt.ev.Type, tt.ev.AgentID, got, tt.want)
		}
	}
}

func TestBrokerEnd(t *testing.T) {
	tree := func() Broker {
		return Broker{
			Members: []Member{
				{AgentID: "p", WorkflowID: "r/p", Parent: "r"},
				{AgentID: "k", WorkflowID: "r/p/k", Parent: "r/p"},
				{AgentID: "done", WorkflowID: "r/p/done", Parent: "r/p", Ended: "completed"},
				{AgentID: "s", WorkflowID: "r/s", Parent: "r"},
			},
			Interests: []Want{
				{Agent: "s", Of: "p"}, {Agent: "s", Of: "p", Filter: &Subscription{}},
				{Agent: "k", Of: "p"}, {Agent: "all", Of: "*"}, {Agent: "p", Of: "s"},
			},
			Pending: []Want{{Agent: "p", Of: "ghost"}, {Agent: "s", Of: "ghost"}},
		}
	}
	tests := []struct {
		name, id  string
		tell      []string
		orphans   []string
		interests []string // askers left, in order
		pending   []string
	}{
		{name: "the interested are told once each, and it leaves every table", id: "p",
			tell: []string{"s", "k"}, orphans: []string{"k"}, interests: []string{"all"}, pending: []string{"s"}},
		{name: "an asker that ends is sent nothing more", id: "s",
			tell: []string{"p"}, interests: []string{"k", "all"}, pending: []string{"p"}},
		{name: "an agent never seen joining", id: "ghost",
			interests: []string{"s", "s", "k", "all", "p"}, pending: []string{"p", "s"}},
	}
	for _, tt := range tests {
		b := tree()
		tell, orphans, first := b.End(tt.id, "failed")
		if !first || !slices.Equal(agents(tell), tt.tell) || !slices.Equal(orphans, tt.orphans) ||
			!slices.Equal(agents(b.Interests), tt.interests) || !slices.Equal(agents(b.Pending), tt.pending) {
			t.Errorf("%s: tell %v, orphans %v, interests %v, pending %v (first %v); want %v, %v, %v, %v",
				tt.name, agents(tell), orphans, agents(b.Interests), agents(b.Pending), first, tt.tell, tt.orphans, tt.interests, tt.pending)
		}
		if m := b.Member(tt.id); m == nil || m.Ended != "failed" {
			t.Errorf("%s: member %+v", tt.name, m)
		}
		if tell, _, first := b.End(tt.id, "completed"); first || tell != nil || b.Member(tt.id).Ended != "failed" {
			t.Errorf("%s: a second end was taken: %v, %v", tt.name, first, agents(tell))
		}
	}
}

func TestBrokerJoinAndSettle(t *testing.T) {
	b := Broker{Members: []Member{{AgentID: "lead"}}, Pending: []Want{{Agent: "main", Of: "worker"}, {Agent: "lead", Of: "worker"}, {Agent: "main", Of: "ghost"}}}
	if got := agents(b.Join(Member{AgentID: "worker", Parent: "lead"})); !slices.Equal(got, []string{"main", "lead"}) {
		t.Errorf("the join of worker served %v", got)
	}
	if b.Join(Member{AgentID: "worker"}) != nil || len(b.Members) != 2 {
		t.Errorf("a second join: %+v", b.Members)
	}
	inTree := func(id string) bool { return b.Member(id) != nil }
	running := func(string) bool { return true }
	if serve, refuse := b.Settle(inTree, running); serve != nil || refuse != nil || len(b.Pending) != 1 {
		t.Errorf("while agents run: serve %v, refuse %v", serve, refuse)
	}
	if serve, refuse := b.Settle(inTree, b.MaySpawn); serve != nil || len(refuse) != 0 {
		t.Errorf("with lead and worker running: serve %v, refuse %v", serve, refuse)
	}
	b.End("lead", "completed")
	b.End("worker", "completed")
	if serve, refuse := b.Settle(inTree, b.MaySpawn); serve != nil || !slices.Equal(agents(refuse), []string{"main"}) || len(b.Pending) != 0 {
		t.Errorf("once no one runs: serve %v, refuse %v", serve, agents(refuse))
	}
}

// The roster keeps every running agent and the latest MaxEndedMembers ended
// ones: a session that spawned thousands carries a bounded tree.
func TestBrokerPruneEnded(t *testing.T) {
	var b Broker
	for i := range MaxEndedMembers + 40 {
		id := fmt.Sprintf("a%d", i)
		b.Join(Member{AgentID: id, WorkflowID: "root/" + id, Parent: "root"})
		if i%10 != 0 {
			b.End(id, "completed")
		}
	}
	running := (MaxEndedMembers + 40 + 9) / 10
	ended := MaxEndedMembers + 40 - running
	if got := b.PruneEnded(); got != ended-MaxEndedMembers {
		t.Fatalf("pruned %d, want %d", got, ended-MaxEndedMembers)
	}
	live, gone := 0, 0
	for _, m := range b.Members {
		if m.Ended == "" {
			live++
		} else {
			gone++
		}
	}
	if live != running || gone != MaxEndedMembers || b.Member("a1") != nil || b.Member(fmt.Sprintf("a%d", MaxEndedMembers+39)) == nil {
		t.Errorf("after pruning: %d running (want %d), %d ended (want %d); the oldest ended kept: %v", live, running, gone, MaxEndedMembers, b.Member("a1") != nil)
	}
	if b.PruneEnded() != 0 {
		t.Errorf("a second prune dropped more")
	}
}

// An unsubscribe withdraws the asker's interest of that subscription only,
// kept or still pending; others' and its dependencies stay.
func TestBrokerDrop(t *testing.T) {
	sub := func(id string) *Subscription { return &Subscription{ID: id} }
	b := Broker{
		Interests: []Want{{Agent: "k", Of: "p", Filter: sub("sub_1")}, {Agent: "k", Of: "p"}, {Agent: "k", Of: "*", Filter: sub("sub_2")}, {Agent: "s", Of: "p", Filter: sub("sub_1")}},
		Pending:   []Want{{Agent: "k", Of: "ghost", Filter: sub("sub_3")}},
	}
	tests := []struct {
		agent, sub string
		dropped    bool
		interests  []string // asker/of left, in order
		pending    int
	}{
		{"k", "sub_1", true, []string{"k/p", "k/*", "s/p"}, 1},
		{"k", "sub_1", false, []string{"k/p", "k/*", "s/p"}, 1},
		{"k", "sub_3", false, []string{"k/p", "k/*", "s/p"}, 0},
		{"k", "sub_2", true, []string{"k/p", "s/p"}, 0},
	}
	for _, tt := range tests {
		dropped := b.Drop(tt.agent, tt.sub)
		var left []string
		for _, in := range b.Interests {
			left = append(left, in.Agent+"/"+in.Of)
		}
		if dropped != tt.dropped || !slices.Equal(left, tt.interests) || len(b.Pending) != tt.pending {
			t.Errorf("Drop(%s, %s) = %v, interests %v, %d pending; want %v, %v, %d", tt.agent, tt.sub, dropped, left, len(b.Pending), tt.dropped, tt.interests, tt.pending)
		}
	}
}
