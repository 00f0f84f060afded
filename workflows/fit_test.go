package workflows

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// worstCarry is a carry at every bound at once: the longest system prompt
// and prompt, a long summary, a full tail, a full list, queue and plan, the
// events of a busy tree, the most finished subagents kept and a full tree
// of running agents, each paused with the longest reasons.
func worstCarry() AgentInput {
	text := func(c string, n int) string { return strings.Repeat(c, n) }
	msgs := []model.Message{
		{Role: model.RoleSystem, Content: text("s", todo.MaxSystemPromptBytes+8<<10)},
		{Role: model.RoleUser, Content: text("p", todo.MaxMessageBytes)},
		{Role: model.RoleUser, Name: NameContextSummary, Content: text("m", maxSummaryBytes+100)},
	}
	for i := range carryMessages - 1 {
		role := model.RoleAssistant
		if i%2 == 1 {
			role = model.RoleTool
		}
		msgs = append(msgs, model.Message{Role: role, Content: text("t", carryBytes/carryMessages-200)})
	}
	// The response whose calls wait for approval (the handed turn below).
	waiting := model.Message{Role: model.RoleAssistant}
	for i := range todo.MaxToolCallsPerResponse {
		waiting.ToolCalls = append(waiting.ToolCalls, model.ToolCall{ID: fmt.Sprintf("call_%060d", i), Name: "write_file", Arguments: []byte(`{"path":"a","content":"x"}`)})
	}
	msgs = append(msgs, waiting)
	list := make([]todo.Item, todo.MaxItems)
	for i := range list {
		list[i] = todo.Item{ID: fmt.Sprintf("%0*d", todo.MaxItemIDBytes, i), Content: text("c", todo.MaxItemBytes), Status: todo.Pending}
	}
	// The list, and its unfinished items when the guard gave up.
	st := todo.State{Todos: list, ContinuationDigest: todo.ListDigest(list), GuardBlocked: &todo.GuardBlocked{Reason: text("g", 500), Unfinished: list}}
	plans := todo.NewPlanState("root")
	plan := &todo.Plan{PlanID: "plan_1", Title: "T", Status: todo.PlanActive, Started: true}
	for i := range todo.MaxPlanSteps {
		plan.Steps = append(plan.Steps, todo.Step{StepID: "step_" + strconv.Itoa(i+1), Sequence: i + 1, Description: text("d", 1000),
			Status: todo.StepCompleted, Result: text("r", 1200)})
	}
	plans.Plan = plan
	for i := range 300 {
		data, _ := json.Marshal(map[string]string{"result": text("r", todo.MaxPlanTextBytes), "output": text("o", todo.MaxStepOutputBytes)})
		plans.Events = append(plans.Events, todo.Event{EventID: i + 1, Type: todo.EventStepCompleted, AgentID: fmt.Sprintf("a%d", i%50),
			PlanID: "plan_1", StepID: fmt.Sprintf("step_%d", i), Data: data})
	}
	ended := map[string]State{}
	for i := range maxChildren {
		ended[fmt.Sprintf("done%03d", i)] = State{AgentID: fmt.Sprintf("done%03d", i), Status: StatusCompleted, Todos: []todo.Item{}, Events: []todo.Event{},
			Subagents: map[string]State{}, Ended: &EndedChild{Result: text("h", resultHead)}}
	}
	tree := &TreeCarry{Briefs: map[string]*Brief{}}
	for i := range todo.MaxSubagents * (1 + todo.MaxSubagents) {
		id := fmt.Sprintf("agent-%0*d", 58, i) // 64 bytes, the longest id
		w := Wait{AgentID: id, Kind: WaitPaused, Reason: text("w", waitReasonBytes)}
		tree.Broker.Members = append(tree.Broker.Members, todo.Member{AgentID: id, WorkflowID: "root/" + id, Parent: "root"})
		tree.Briefs[id] = &Brief{Status: StatusPaused, Current: text("c", 200), Paused: true, PauseReason: text("p", waitReasonBytes),
			ModelError: &ModelError{Message: text("e", 500)}, Waiting: []Wait{w}}
		tree.Handed = append(tree.Handed, w)
	}
	// A turn handed over in its wait for the approval of the most calls,
	// each refused with long feedback, and a full queue behind it.
	var verdicts []CallVerdict
	for i := range todo.MaxToolCallsPerResponse {
		verdicts = append(verdicts, CallVerdict{ID: fmt.Sprintf("call_%060d", i), Refusal: text("f", verdictBytes)})
	}
	// It answers an update of the longest id the server takes, and the
	// most replies of turns like it wait for turn_reply.
	handed := Inbound{Blocked: &BlockedTurn{Calls: 10, Tools: true, Verdicts: verdicts}, ReplyTo: text("u", maxUpdateIDBytes)}
	kept := newInbox(nil, "")
	for range maxKeptReplies {
		kept.kept = append(kept.kept, KeptReply{UpdateID: text("u", maxUpdateIDBytes), Reply: text("r", 1<<20)})
	}
	tree.Subagents = ended
	return AgentInput{Model: "openai:gpt", Carry: &Carry{Window: WindowCarry{Messages: msgs}, Todo: st, Plans: plans, Tree: tree,
		Inbox: InboxCarry{Queue: []Inbound{handed, {Text: text("q", todo.MaxQueuedBytes/2)}, {Text: text("q", todo.MaxQueuedBytes/2)}},
			Replies: kept.carry().Replies}}}
}

// maxUpdateIDBytes is the longest id the server takes for an update (its
// limit.maxIDLength, 1,000 by default).
const maxUpdateIDBytes = 1000

// A carry at every bound at once fits MaxCarryBytes once it has shed, and
// sheds no more than it must: its head, summary, last message, list, queue,
// plan and waits stay.
func TestCarryFitsItsCap(t *testing.T) {
	in := worstCarry()
	before := carrySize(in)
	shed, over := fitCarry(&in)
	after := carrySize(in)
	t.Logf("the worst carry: %d bytes; after shedding %v: %d (cap %d)", before, shed, after, MaxCarryBytes)
	if before <= MaxCarryBytes {
		t.Fatalf("the worst carry takes %d bytes, within the cap: the test does not reach it", before)
	}
	if over != 0 || after > MaxCarryBytes {
		t.Errorf("after shedding %v the carry takes %d bytes, over MaxCarryBytes (%d)", shed, after, MaxCarryBytes)
	}
	c := in.Carry
	if len(c.Window.Messages) < todo.Head+1 || c.Window.Messages[todo.Head].Name != NameContextSummary {
		t.Errorf("the carried messages lost their head or summary")
	}
	if len(c.Window.Messages) > todo.Head+1 && c.Window.Messages[todo.Head+1].Role == model.RoleTool {
		t.Errorf("the tail starts on a tool result")
	}
	if last := c.Window.Messages[len(c.Window.Messages)-1]; len(last.ToolCalls) != todo.MaxToolCallsPerResponse {
		t.Errorf("the carry lost the response its handed turn answers first")
	}
	if len(c.Todo.List()) != todo.MaxItems || len(c.Inbox.Queue) != 3 || len(c.Inbox.Replies) != maxKeptReplies || len(c.Plans.Plan.Steps) != todo.MaxPlanSteps || len(c.Tree.Handed) != len(c.Tree.Briefs) {
		t.Errorf("the carry shed what it must keep: list, queue, plan or waits")
	}
	for _, b := range c.Tree.Briefs {
		if len(b.Waiting) != 1 {
			t.Fatalf("a brief lost its wait")
		}
	}
	want := []string{"older messages", "details of the briefs"}
	if !slices.Equal(shed[:min(2, len(shed))], want) {
		t.Errorf("shed %v, want %v first", shed, want)
	}

	small := AgentInput{Carry: &Carry{Window: WindowCarry{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}}}
	if shed, _ := fitCarry(&small); shed != nil {
		t.Errorf("a small carry shed %v", shed)
	}
}

// A state at every bound at once (the root of a full tree of paused
// agents, with a full list, plan and event log, the guard's copy of the
// list, the most finished subagents) answers within MaxQueryAnswerBytes.
func TestStateWithinItsCap(t *testing.T) {
	in := worstCarry()
	c := in.Carry
	list := c.Todo.Todos
	st := State{AgentID: "root", Status: StatusPaused, Todos: list, Plan: c.Plans.Plan,
		Extra:       todo.Extra{Todos: list, GuardBlocked: c.Todo.GuardBlocked},
		Paused:      true,
		PauseReason: strings.Repeat("é", todo.MaxPauseReason),
		Events:      todo.Latest(c.Plans.Events, maxStateEvents, stateEventBytes),
		Subagents:   map[string]State{},
		ModelError:  &ModelError{Message: strings.Repeat("e", 500)},
		PendingApproval: &PendingApproval{CallID: "call", Tool: strings.Repeat("t", 64),
			Arguments: json.RawMessage(strconv.Quote(strings.Repeat("a", previewBytes)))},
	}
	if n := todo.PlanBytes(st.Plan); n > todo.MaxPlanBytes {
		t.Fatalf("the plan takes %d bytes, over MaxPlanBytes: not one a run can have", n)
	}
	// The finished subagents: full summaries in fullChildrenBytes, the
	// rest ended; and the running children's briefs.
	room := fullChildrenBytes
	for id, s := range c.Tree.Subagents {
		full := s
		full.Todos = list[:10]
		if b, _ := json.Marshal(full.summary()); len(b) <= room {
			st.Subagents[id], room = full.summary(), room-len(b)
		} else {
			st.Subagents[id] = s
		}
	}
	for i := range todo.MaxSubagents {
		id := fmt.Sprintf("agent-%0*d", 58, i)
		st.Subagents["running-"+id] = c.Tree.Briefs[id].state("running-" + id)
	}
	for _, b := range c.Tree.Briefs {
		st.Waiting = append(st.Waiting, b.Waiting...)
	}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the largest state: %d bytes (cap %d)", len(b), MaxQueryAnswerBytes)
	if len(b) > MaxQueryAnswerBytes {
		t.Errorf("the largest state takes %d bytes, over MaxQueryAnswerBytes (%d)", len(b), MaxQueryAnswerBytes)
	}
}

// The largest state with the longest answer still makes a result the
// server takes: the state gives way to its summary, then the answer to its
// head.
func TestResultFitsItsCap(t *testing.T) {
	in := worstCarry()
	st := State{AgentID: "root", Todos: in.Carry.Todo.Todos, Extra: todo.Extra{Todos: in.Carry.Todo.Todos}, Plan: in.Carry.Plans.Plan,
		Events: in.Carry.Plans.Events, Subagents: in.Carry.Tree.Subagents}
	reply := strings.Repeat("r", 1<<20)
	for _, tt := range []struct {
		name        string
		reply       string
		wantSummary bool
		wantCut     bool
	}{
		{"small", "done", false, false},
		{"the largest state", "done", true, false},
		{"and the longest answer", reply, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := st
			if tt.name == "small" {
				s = State{AgentID: "root"}
			}
			res := AgentResult{AgentID: "root", Reply: tt.reply, Todos: s.Todos, State: &s}
			fitResult(&res)
			b, _ := json.Marshal(res)
			if len(b) > MaxResultBytes {
				t.Errorf("the result takes %d bytes, over MaxResultBytes (%d)", len(b), MaxResultBytes)
			}
			if summarised := len(res.State.Subagents) == 0 && len(st.Subagents) > 0 && tt.name != "small"; summarised != tt.wantSummary {
				t.Errorf("state summarised: %v, want %v", summarised, tt.wantSummary)
			}
			if cut := res.Reply != tt.reply; cut != tt.wantCut || cut && !strings.Contains(res.Reply, "the whole of it is in the transcript") {
				t.Errorf("reply cut: %v (%d bytes), want %v", cut, len(res.Reply), tt.wantCut)
			}
		})
	}
}
