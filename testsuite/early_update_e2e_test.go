package testsuite

import (
	"context"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/todoflow/todoflow/api"
)

// A message that reaches a session with its start (update-with-start: the
// update is in the run's first workflow task) is taken, also when the run
// names a workspace, whose check is a local activity: the handlers are
// registered before that wait, in which the SDK would refuse an update
// that finds none.
func TestFirstMessageWithTheStart(t *testing.T) {
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	sc := writeScenario(t, `{"model": [{"content": "hello back"}]}`)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const id = "early-update"
	start := s.c.NewWithStartWorkflowOperation(client.StartWorkflowOptions{ID: id, TaskQueue: api.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL}, api.WorkflowName,
		api.AgentInput{Model: sc.RunInput().Model, Workspace: "early", IdleTimeoutS: 60})
	h, err := s.c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: start,
		UpdateOptions: client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: api.SendMessageUpdate,
			Args: []any{"hello"}, WaitForStage: client.WorkflowUpdateStageCompleted},
	})
	if err != nil {
		t.Fatalf("update with start: %v", err)
	}
	var reply string
	if err := h.Get(ctx, &reply); err != nil {
		t.Fatalf("the first message: %v", err)
	}
	if !strings.Contains(reply, "hello back") {
		t.Errorf("reply %q", reply)
	}
	_ = s.c.SignalWorkflow(ctx, id, "", api.EndSessionSignal, nil)
}
