package workflows

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/activities/tools"
	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
)

// A tool's diff is for the user: the tool message is the content the model
// reads, unchanged; the tool_diffs query answers the latest maxKeptDiffs
// by call id.
func TestToolDiffsForTheUserOnly(t *testing.T) {
	writes := make([]model.ToolCall, maxKeptDiffs+2)
	for i := range writes {
		writes[i] = call("write_file", fmt.Sprintf(`{"path":"f%d","content":"x"}`, i))
	}
	env, _ := approvalEnv(calls(append(writes, call("read_file", `{"path":"f0"}`))...), say("done"))
	env.RegisterActivityWithOptions(func(_ context.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
		if in.Call.Name != "write_file" {
			return activities.RunToolResult{Content: "x"}, nil
		}
		return activities.RunToolResult{Content: "wrote 1 bytes", Diff: "@@ -0,0 +1 @@\n+x " + in.Call.ID}, nil
	}, activity.RegisterOptions{Name: api.ToolActivity, DisableAlreadyRegisteredCheck: true})
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, time.Hour)
	env.ExecuteWorkflow(AgentWorkflow, approvalInput(nil))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}

	msgs := queryMessages(t, env)
	var ids []string
	for _, m := range msgs {
		if m.Role == model.RoleTool {
			ids = append(ids, m.ToolCallID)
			if strings.Contains(m.Content, "@@") {
				t.Errorf("the tool message of %s holds the diff: %q", m.ToolCallID, m.Content)
			}
		}
	}
	v, err := env.QueryWorkflow(api.ToolDiffsQuery, ids)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	if err := v.Get(&got); err != nil {
		t.Fatal(err)
	}
	if len(got) != maxKeptDiffs {
		t.Errorf("%d diffs answered, want the latest %d: %v", len(got), maxKeptDiffs, got)
	}
	for i, id := range ids[:len(writes)] {
		d, ok := got[id]
		if kept := i >= len(writes)-maxKeptDiffs; ok != kept || (ok && d != "@@ -0,0 +1 @@\n+x "+id) {
			t.Errorf("diff of %s = %q, %v; want it kept: %v", id, d, ok, kept)
		}
	}
}

// The query's answer stays within its cap at worst: the most diffs kept,
// each of the most bytes, every byte one that JSON escapes to six.
func TestToolDiffsAnswerBounded(t *testing.T) {
	var d toolDiffs
	var ids []string
	for i := range maxKeptDiffs + 3 {
		id := fmt.Sprintf("call_%d", i)
		ids = append(ids, id)
		d.keep(id, strings.Repeat("<", tools.MaxDiffBytes))
	}
	d.keep("too_long", strings.Repeat("+", tools.MaxDiffBytes+1))
	ans, _ := d.answer(append(ids, "too_long"))
	if _, ok := ans["too_long"]; ok {
		t.Error("a diff over MaxDiffBytes was kept")
	}
	if n := payloadSize(t, ans); n > MaxQueryAnswerBytes {
		t.Errorf("the answer takes %d bytes, over MaxQueryAnswerBytes (%d)", n, MaxQueryAnswerBytes)
	}
}

// payloadSize is v's size as the SDK's default converter encodes it.
func payloadSize(t *testing.T, v any) int {
	t.Helper()
	p, err := converter.GetDefaultDataConverter().ToPayload(v)
	if err != nil {
		t.Fatal(err)
	}
	return len(p.GetData())
}
