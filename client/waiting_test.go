package client

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/api"

	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/todoflow/todoflow/model"
)

func TestWaitingCalls(t *testing.T) {
	short := json.RawMessage(`{"path":"a.txt","content":"hi"}`)
	cut, _ := json.Marshal(`{"path":"a.txt","content":"step 1… (5000 more bytes)`)
	own := func(args json.RawMessage) api.State {
		return api.State{AgentID: "main",
			PendingApproval: &api.PendingApproval{CallID: "c1", Tool: "write_file", Arguments: args},
			Waiting:         []api.Wait{{AgentID: "main", Kind: api.WaitToolApproval, CallID: "c1", Reason: "call c1 of write_file …"}}}
	}
	tree := own(short)
	tree.Waiting = append(tree.Waiting,
		api.Wait{AgentID: "coder", Kind: api.WaitPlanApproval},
		api.Wait{AgentID: "coder", Kind: api.WaitToolApproval, CallID: "c9", Reason: "call c9 of run {\"cmd\":\"make\"…"})
	older := own(short)
	older.Waiting = nil
	withDiff := own(short)
	withDiff.PendingApproval.Diff = &api.CallDiff{Hunks: "@@ -0,0 +1 @@\n+hi", Added: 1}
	for _, tt := range []struct {
		name string
		st   api.State
		want string
	}{
		{"nothing", api.State{AgentID: "main"}, ""},
		{"short", own(short), `main c1 write_file whole {"path":"a.txt","content":"hi"}`},
		{"cut", own(cut), `main c1 write_file cut {"path":"a.txt","content":"step 1… (5000 more bytes)`},
		{"tree", tree, `main c1 write_file whole {"path":"a.txt","content":"hi"}|coder c9  cut call c9 of run {"cmd":"make"…`},
		{"no waits listed", older, `main c1 write_file whole {"path":"a.txt","content":"hi"}`},
		{"with its diff", withDiff, `main c1 write_file whole {"path":"a.txt","content":"hi"} diff +1 -0`},
	} {
		var got []string
		for _, c := range WaitingCalls(tt.st) {
			got = append(got, callString(c))
		}
		if g := strings.Join(got, "|"); g != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, g, tt.want)
		}
	}
}

func callString(c WaitingCall) string {
	if c.Whole {
		s := fmt.Sprintf("%s %s %s whole %s", c.AgentID, c.CallID, c.Tool, c.Arguments)
		if c.Diff != nil {
			s += fmt.Sprintf(" diff +%d -%d", c.Diff.Added, c.Diff.Removed)
		}
		return s
	}
	return fmt.Sprintf("%s %s %s cut %s", c.AgentID, c.CallID, c.Tool, c.Cut)
}

// treeServer answers the state and messages queries of a run tree's
// workflows, from states and transcripts by workflow id.
type treeServer struct {
	sdkclient.Client
	states      map[string]api.State
	transcripts map[string][]model.Message
}

func (f *treeServer) QueryWorkflow(_ context.Context, id, _, name string, args ...any) (converter.EncodedValue, error) {
	switch name {
	case api.StateQuery:
		if st, ok := f.states[id]; ok {
			return jsonValue{st}, nil
		}
	case api.MessagesQuery:
		if msgs, ok := f.transcripts[id]; ok {
			from := args[0].(int)
			return jsonValue{msgs[min(from, len(msgs)):]}, nil
		}
	}
	return nil, fmt.Errorf("no %s query answer for %s", name, id)
}

// A call the state shows cut is read whole from its agent's transcript:
// the root's, a child's, a grandchild's (found through its parent's state).
func TestReadWhole(t *testing.T) {
	long := json.RawMessage(`{"path":"a.txt","content":"` + strings.Repeat("x", 3000) + `; curl x | sh"}`)
	answer := func(id string) []model.Message {
		return []model.Message{{Role: model.RoleUser, Content: "go"},
			{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "other"}, {ID: id, Name: "write_file", Arguments: long}}}}
	}
	root := api.State{AgentID: "main", Subagents: map[string]api.State{"coder": {}},
		PendingApproval: &api.PendingApproval{CallID: "c1", Tool: "write_file", Arguments: json.RawMessage(`"{\"path\"… (3000 more bytes)"`)},
		Waiting: []api.Wait{{AgentID: "main", Kind: api.WaitToolApproval, CallID: "c1"},
			{AgentID: "coder", Kind: api.WaitToolApproval, CallID: "c2"},
			{AgentID: "tester", Kind: api.WaitToolApproval, CallID: "c3"},
			{AgentID: "gone", Kind: api.WaitToolApproval, CallID: "c4", Reason: "call c4 of run …"}}}
	f := &treeServer{
		states: map[string]api.State{"s/coder": {AgentID: "coder", Subagents: map[string]api.State{"tester": {}},
			PendingApproval: &api.PendingApproval{CallID: "c2", Tool: "write_file", Diff: &api.CallDiff{Hunks: "@@ -0,0 +1 @@\n+x", Added: 1, New: true}}}},
		transcripts: map[string][]model.Message{"s": answer("c1"), "s/coder": answer("c2"), "s/coder/tester": answer("c3")},
	}
	calls, err := New(f, Options{}).Session("s").ReadWhole(context.Background(), root, WaitingCalls(root))
	if err == nil || !strings.Contains(err.Error(), "agent gone is not in the tree of s") {
		t.Errorf("err = %v, want one for the agent not found", err)
	}
	if len(calls) != 4 {
		t.Fatalf("%d calls, want 4", len(calls))
	}
	for _, c := range calls[:3] {
		if !c.Whole || c.Tool != "write_file" || string(c.Arguments) != string(long) {
			t.Errorf("%s of %s not read whole: %.200s", c.CallID, c.AgentID, callString(c))
		}
	}
	// A subagent's diff is in its own state.
	if d := calls[1].Diff; d == nil || d.Hunks != "@@ -0,0 +1 @@\n+x" || !d.New {
		t.Errorf("the subagent's call has diff %+v, want its state's", d)
	}
	if calls[0].Diff != nil || calls[2].Diff != nil {
		t.Errorf("calls without a diff got one: %+v, %+v", calls[0].Diff, calls[2].Diff)
	}
	if c := calls[3]; c.Whole || c.Cut != "call c4 of run …" {
		t.Errorf("the call not found: %s, want it as the state shows it", callString(c))
	}
}
