package workflows

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/activity"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
)

// A session's folders on a worker are named by the session's key, the
// hash of its root's workflow id and first run id (issue 36: a folder
// named by the workflow id alone went to the next session of that id):
// the root's tool calls and file reports, and its subagent's tool calls,
// which share the root's workspace, carry the root's key, and the state
// shows it.
func TestSessionKeyNamesTheFolders(t *testing.T) {
	env := newTreeEnv()
	scriptTree(env, map[string][]model.Response{
		"main": {calls(call("createPlan", `{"title":"Look","steps":["look"]}`), call("list_files", `{}`), spawnCall("kid", "look too", quiet)), say("looked")},
		"kid":  {calls(call("list_files", `{}`)), say("done")},
	})
	var mu sync.Mutex
	tools := map[string]string{}   // by agent: the Session of its tool call
	reports := map[string]string{} // by agent: the Session of its reports
	env.RegisterActivityWithOptions(func(_ context.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
		mu.Lock()
		defer mu.Unlock()
		tools[in.AgentID] = in.Session
		return activities.RunToolResult{Content: "nothing"}, nil
	}, activity.RegisterOptions{Name: api.ToolActivity, DisableAlreadyRegisteredCheck: true})
	env.RegisterActivityWithOptions(func(_ context.Context, in activities.ReportInput) error {
		mu.Lock()
		defer mu.Unlock()
		reports[in.AgentID] = in.Session
		return nil
	}, activity.RegisterOptions{Name: activities.ReportName})
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, time.Hour)
	in := rootInput("look")
	in.Reporters = []api.ReporterConfig{{Type: api.ReporterFile, Config: json.RawMessage(`{"path": "events.jsonl"}`)}}
	env.ExecuteWorkflow(api.WorkflowName, in)
	completed(t, env)

	// The test environment gives a run no first run id.
	want := activities.SessionKey(treeRoot, "")
	tests := []struct {
		what, got string
	}{
		{"the root's tool call", tools["main"]},
		{"the root's file report", reports["main"]},
		{"the subagent's tool call", tools["kid"]},
		{"the root's state", stateOf(t, env, treeRoot).Session},
		{"the subagent's state", stateOf(t, env, childWF("kid")).Session},
	}
	for _, tt := range tests {
		if tt.got != want {
			t.Errorf("%s names session %q, want %q (the root's id and first run)", tt.what, tt.got, want)
		}
	}
}
