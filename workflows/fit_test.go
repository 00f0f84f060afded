package workflows

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/api"

	"github.com/todoflow/todoflow/activities/tools"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// worstCarry is a carry at every bound at once: the longest system prompt
// and prompt, a long summary, a full tail, a full list, queue and plan, the
// events of a busy tree, the most finished subagents kept and a full tree
// of running agents, each paused with the longest reasons.
func worstCarry() handover {
	text := func(c string, n int) string { return strings.Repeat(c, n) }
	msgs := []model.Message{
		{Role: model.RoleSystem, Content: text("s", todo.MaxSystemPromptBytes+8<<10)},
		{Role: model.RoleUser, Content: text("p", todo.MaxMessageBytes)},
		{Role: model.RoleUser, Name: api.NameContextSummary, Content: text("m", maxSummaryBytes+100)},
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
	ended := map[string]api.State{}
	for i := range maxChildren {
		ended[fmt.Sprintf("done%03d", i)] = api.State{AgentID: fmt.Sprintf("done%03d", i), Status: api.StatusCompleted, Todos: []todo.Item{}, Events: []todo.Event{},
			Subagents: map[string]api.State{}, Ended: &api.EndedChild{Result: text("h", resultHead)}}
	}
	tree := &TreeCarry{Briefs: map[string]*api.Brief{}}
	for i := range todo.MaxSubagents * (1 + todo.MaxSubagents) {
		id := fmt.Sprintf("agent-%0*d", 58, i) // 64 bytes, the longest id
		w := api.Wait{AgentID: id, Kind: api.WaitPaused, Reason: text("w", waitReasonBytes)}
		tree.Broker.Members = append(tree.Broker.Members, todo.Member{AgentID: id, WorkflowID: "root/" + id, Parent: "root"})
		tree.Briefs[id] = &api.Brief{Status: api.StatusPaused, Current: text("c", 200), Paused: true, PauseReason: text("p", waitReasonBytes),
			ModelError: &api.ModelError{Message: text("e", 500)}, Waiting: []api.Wait{w}}
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
	// The most diffs of the largest size.
	var diffs []CarriedDiff
	for i := range maxKeptDiffs {
		diffs = append(diffs, CarriedDiff{CallID: fmt.Sprintf("call_%060d", i), Diff: text("+", tools.MaxDiffBytes)})
	}
	return handover{AgentInput: api.AgentInput{Model: "openai:gpt"}, Carry: &Carry{Window: WindowCarry{Messages: msgs}, Todo: st, Plans: plans, Tree: tree,
		Inbox: InboxCarry{Queue: []Inbound{handed, {Text: text("q", todo.MaxQueuedBytes/2)}, {Text: text("q", todo.MaxQueuedBytes/2)}},
			Replies: kept.carry().Replies}, Diffs: diffs}}
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
	if len(c.Window.Messages) < todo.Head+1 || c.Window.Messages[todo.Head].Name != api.NameContextSummary {
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
	want := []string{"the tool calls' diffs", "older messages", "details of the briefs"}
	if !slices.Equal(shed[:min(3, len(shed))], want) {
		t.Errorf("shed %v, want %v first", shed, want)
	}

	small := handover{Carry: &Carry{Window: WindowCarry{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}}}
	if shed, _ := fitCarry(&small); shed != nil {
		t.Errorf("a small carry shed %v", shed)
	}
}

// A state at every bound at once answers within MaxQueryAnswerBytes. It is
// the state query's own answer, (*agent).state(), of a root run built as a
// continued run is (resolve, newAgent) from the carry at every bound, its
// tree's waits not yet handed on, its children running with their briefs,
// and what a run adds before it is asked: its pause with the longest
// reason, a call waiting for approval, a model error, and the most recent
// finished subagents of its own with lists and plans in full.
func TestStateWithinItsCap(t *testing.T) {
	in := worstCarry()
	c := in.Carry
	c.Todo.Paused, c.Todo.PauseReason = true, strings.Repeat("é", todo.MaxPauseReason)
	c.Session.ModelError = &api.ModelError{Message: strings.Repeat("e", 500)}
	c.Tree.Handed = nil // each wait of the tree shows until the root hands its answer on
	for i := range todo.MaxSubagents {
		id := fmt.Sprintf("agent-%0*d", 58, i)
		c.Tree.Running = append(c.Tree.Running, RunningChild{AgentID: id, WorkflowID: "root/" + id})
	}
	if n := todo.PlanBytes(c.Plans.Plan); n > todo.MaxPlanBytes {
		t.Fatalf("the plan takes %d bytes, over MaxPlanBytes: not one a run can have", n)
	}
	cfg, err := resolve(in.AgentInput)
	if err != nil {
		t.Fatal(err)
	}
	cfg.carry = in.Carry
	a := newAgent(cfg)
	a.status = api.StatusPaused
	a.approvals.toolWait = &api.PendingApproval{CallID: "call", Tool: strings.Repeat("t", 64),
		Arguments: json.RawMessage(strconv.Quote(strings.Repeat("a", previewBytes))),
		// The largest diff a preview answers, of lines that JSON escapes.
		Diff: &api.CallDiff{Hunks: strings.Repeat("+\"q\"\n", tools.MaxDiffBytes/5), Unavailable: strings.Repeat("u", api.MaxUnavailableBytes)}}
	// Finished in this run, the most recent: full summaries (lists of two
	// items, about 9 KB each), as many as fit in fullChildrenBytes.
	list := c.Todo.Todos
	for i := range fullChildren {
		id := fmt.Sprintf("finished-%02d", i)
		st := api.State{AgentID: id, Status: api.StatusCompleted, Todos: list[:2], Events: []todo.Event{},
			Extra: todo.Extra{Todos: list[:2]}, Subagents: map[string]api.State{}}
		a.tree.children[id] = &child{AgentID: id, State: &st, Done: true, reply: strings.Repeat("h", resultHead)}
		a.tree.childOrder = append(a.tree.childOrder, id)
	}

	st := a.state()
	full, fullBytes, ended, running := 0, 0, 0, 0
	for _, s := range st.Subagents {
		switch {
		case s.Live != nil:
			running++
		case s.Ended != nil:
			ended++
		default:
			full, fullBytes = full+1, fullBytes+payloadSize(t, s)
		}
	}
	// The answer must be the one at every bound, or the figure below
	// measures less than the cap is for.
	switch {
	case len(st.Todos) != todo.MaxItems || len(st.Extra.Todos) != todo.MaxItems:
		t.Errorf("the state shows %d items and %d in extra; want the full list twice (%d)", len(st.Todos), len(st.Extra.Todos), todo.MaxItems)
	case len(st.Events) == 0 || len(st.Events) < maxStateEvents && payloadSize(t, st.Events) < stateEventBytes*9/10:
		t.Errorf("the state shows %d events; want %d or about %d bytes of them", len(st.Events), maxStateEvents, stateEventBytes)
	case ended+full != maxChildren || running != todo.MaxSubagents:
		t.Errorf("the state shows %d finished subagents and %d running; want %d finished and %d running", ended+full, running, maxChildren, todo.MaxSubagents)
	case fullBytes < fullChildrenBytes*3/4:
		t.Errorf("the finished subagents shown in full take %d bytes; want about fullChildrenBytes (%d)", fullBytes, fullChildrenBytes)
	case len(st.Waiting) != 1+len(c.Tree.Briefs):
		t.Errorf("the state shows %d waits; want its own and one per brief (%d)", len(st.Waiting), 1+len(c.Tree.Briefs))
	case st.PendingApproval == nil || st.ModelError == nil || !st.Paused || st.Plan == nil:
		t.Errorf("the state lacks its pending approval, model error, pause or plan")
	}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the largest state: %d bytes (cap %d)", len(b), MaxQueryAnswerBytes)
	if len(b) > MaxQueryAnswerBytes {
		t.Errorf("the largest state takes %d bytes, over MaxQueryAnswerBytes (%d)", len(b), MaxQueryAnswerBytes)
	}
	// docs/protocol.md quotes this figure; it must be this measurement's.
	readme, err := os.ReadFile("../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("built by `TestStateWithinItsCap`, takes %.2f MB", float64(len(b))/1e6)
	if !strings.Contains(strings.Join(strings.Fields(string(readme)), " "), want) {
		t.Errorf("docs/protocol.md does not say %q", want)
	}
}

// The largest state with the longest answer still makes a result the
// server takes: the state gives way to its summary, then the answer to its
// head.
func TestResultFitsItsCap(t *testing.T) {
	in := worstCarry()
	st := api.State{AgentID: "root", Todos: in.Carry.Todo.Todos, Extra: todo.Extra{Todos: in.Carry.Todo.Todos}, Plan: in.Carry.Plans.Plan,
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
				s = api.State{AgentID: "root"}
			}
			res := api.AgentResult{AgentID: "root", Reply: tt.reply, Todos: s.Todos, State: &s}
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
