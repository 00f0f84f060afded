package workflows

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
)

// A new run asks for one version, folded-versions, which stands for every
// one before it but summary-parts; a run without it (one started before,
// replayed) asks for those, each where it did: workspace-host at its first
// tool call.
func TestVersionsOfARun(t *testing.T) {
	tests := []struct {
		name   string
		folded workflow.Version
		want   []string
		// host is how the run asks for its workspace's host.
		host string
	}{
		{"a new run", foldedVersion, []string{foldedChange}, "local activity"},
		{"a run started before", workflow.DefaultVersion, []string{foldedChange, durableChange, treeChange, signalsChange, treeOrderChange, hostChange}, "activity"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			scripted(env, calls(call("read_file", `{"path":"a"}`)), model.Response{Content: "done"})
			var asked, host []string
			env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
				if info.ActivityType.Name == activities.WorkspaceHostName {
					host = append(host, "activity")
				}
			})
			env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []any) {
				if info.ActivityType.Name == activities.WorkspaceHostName {
					host = append(host, "local activity")
				}
			})
			env.OnGetVersion(foldedChange, workflow.DefaultVersion, foldedVersion).
				Run(func(mock.Arguments) { asked = append(asked, foldedChange) }).Return(tt.folded)
			for _, id := range []string{durableChange, treeChange, signalsChange, treeOrderChange, hostChange} {
				env.OnGetVersion(id, workflow.DefaultVersion, 1).Run(func(mock.Arguments) { asked = append(asked, id) }).Return(workflow.Version(1))
			}
			// Both are durable sessions: retry_turn is there, and says
			// there is nothing to retry.
			var refused error
			env.RegisterDelayedCallback(func() {
				env.UpdateWorkflow(RetryTurnUpdate, "r", &testsuite.TestUpdateCallback{
					OnReject: func(err error) { refused = err }, OnAccept: func() {}, OnComplete: func(any, error) {},
				})
			}, time.Second)
			env.ExecuteWorkflow(AgentWorkflow, AgentInput{Prompt: "hi", IdleTimeoutS: 60})
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(asked, tt.want) {
				t.Errorf("versions asked: %q, want %q", asked, tt.want)
			}
			if !slices.Equal(host, []string{tt.host}) {
				t.Errorf("the host was asked by %q, want once by %s", host, tt.host)
			}
			if refused == nil || !strings.Contains(refused.Error(), "nothing to retry") {
				t.Errorf("retry_turn: %v; want the refusal of a durable session with no failed turn", refused)
			}
		})
	}
}
