package testsuite

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	commonpb "go.temporal.io/api/common/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/todoflow/todoflow/scenario"
)

// A run the player starts, and the subagent it starts, begin with their
// search attributes (workflows.StartSearchAttributes) and do not upsert
// them again; a run started without them, as `temporal workflow start`
// starts one, upserts them in its first workflow task. Both end with the
// status they ended in, which the real server's visibility store takes.
func TestStartSearchAttributes(t *testing.T) {
	s := startServer(t)
	s.startWorker(t, t.TempDir())

	sc, err := scenario.Load("testdata/scenarios/06a_subagent_finishes_first.json")
	if err != nil {
		t.Fatal(err)
	}
	out, st := play(t, s.c, sc, 2*time.Minute)
	ids := []string{out.WorkflowID}
	for agent := range st.Subagents {
		ids = append(ids, out.WorkflowID+"/"+agent)
	}
	if len(ids) < 2 {
		t.Fatalf("the scenario started no subagent: %+v", st)
	}
	for _, id := range ids {
		evs := historyOf(t, s.c, id)
		if got := startedStatus(evs); got != api.StatusRunning {
			t.Errorf("%s started with AgentStatus %q, want %q", id, got, api.StatusRunning)
		}
		if up := upsertsOf(evs); len(up) == 0 || up[0] == api.StatusRunning+" 0/0" {
			t.Errorf("%s upserted %q: the start's attributes again, or nothing", id, up)
		}
		checkShown(t, s.c, id, api.StatusCompleted)
	}

	// Without them.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	plain, err := scenario.Load("testdata/scenarios/01_write_todos_lifecycle.json")
	if err != nil {
		t.Fatal(err)
	}
	in := plain.RunInput()
	in.IdleTimeoutS = 1
	run, err := s.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "plain-start", TaskQueue: api.TaskQueue}, api.WorkflowName, in)
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	evs := historyOf(t, s.c, run.GetID())
	if got := startedStatus(evs); got != "" {
		t.Errorf("started with AgentStatus %q, want none", got)
	}
	if up := upsertsOf(evs); len(up) == 0 || up[0] != api.StatusRunning+" 0/0" {
		t.Errorf("upserts %q, want running 0/0 first", up)
	}
	checkShown(t, s.c, run.GetID(), api.StatusCompleted)
}

// startedStatus is the AgentStatus a run was started with.
func startedStatus(evs []*historypb.HistoryEvent) string {
	var status string
	f := evs[0].GetWorkflowExecutionStartedEventAttributes().GetSearchAttributes().GetIndexedFields()
	_ = decodeAttr(f, api.AgentStatusKey.GetName(), &status)
	return status
}

// upsertsOf lists a history's upserts of AgentStatus as "status done/total".
func upsertsOf(evs []*historypb.HistoryEvent) []string {
	var out []string
	for _, ev := range evs {
		f := ev.GetUpsertWorkflowSearchAttributesEventAttributes().GetSearchAttributes().GetIndexedFields()
		var status string
		var total, done int64
		if decodeAttr(f, api.AgentStatusKey.GetName(), &status) {
			_ = decodeAttr(f, api.TodoTotalKey.GetName(), &total)
			_ = decodeAttr(f, api.TodoCompletedKey.GetName(), &done)
			out = append(out, status+" "+strconv.FormatInt(done, 10)+"/"+strconv.FormatInt(total, 10))
		}
	}
	return out
}

// decodeAttr decodes the search attribute name of f into v.
func decodeAttr(f map[string]*commonpb.Payload, name string, v any) bool {
	p, ok := f[name]
	return ok && converter.GetDefaultDataConverter().FromPayload(p, v) == nil
}

// checkShown waits until the run's AgentStatus, as the server describes it,
// is want.
func checkShown(t *testing.T, c client.Client, id, want string) {
	t.Helper()
	var got string
	waitFor(t, 10*time.Second, id+" showing AgentStatus "+want, func() bool {
		d, err := c.DescribeWorkflowExecution(context.Background(), id, "")
		if err != nil {
			return false
		}
		f := d.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields()
		return decodeAttr(f, api.AgentStatusKey.GetName(), &got) && got == want
	})
}
