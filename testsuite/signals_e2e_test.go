package testsuite

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/todoflow/todoflow/workflows"
)

// Signals cannot be refused: a user_message of 1.9 MB (under the server's
// 2 MB blob limit) is recorded whole before the run cuts it to its cap.
// Sent faster than the session answers them, they once kept the inbox from
// ever being empty, the run never handed over, and the server terminated
// the session at 50 MB. Now the run hands over with the messages queued:
// every run stays under the server's limits, none is terminated, and every
// message gets its turn. (A burst that fills 50 MB before the worker gets
// one workflow task, 28 such signals sent back to back, is refused by the
// server whatever the workflow does: docs/architecture.md, "Large signals".)
func TestLargeSignalsHandOver(t *testing.T) {
	const (
		signals = 28
		size    = 1900 << 10
	)
	stub := newModelStub(t)
	stub.setFinalText("noted")
	// A model that takes a second to answer, and a user who sends faster
	// than that: the inbox is never empty.
	slow := newStubProxy(t, stub, func(map[string]any) { time.Sleep(time.Second) })
	t.Setenv("OPENAI_BASE_URL", slow.baseURL())
	t.Setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
	s := startServer(t)
	s.startWorker(t, t.TempDir())

	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	const id = "large-signals"
	if _, err := s.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: api.TaskQueue}, api.WorkflowName,
		api.AgentInput{Model: "openai:test-model", Todo: todoOff()}); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	for i := range signals {
		time.Sleep(400 * time.Millisecond)
		text := fmt.Sprintf("message %d: %s", i+1, strings.Repeat("a", size))
		if err := s.c.SignalWorkflow(ctx, id, "", api.UserMessageSignal, text); err != nil {
			logRuns(ctx, t, s.c, id)
			t.Fatalf("signal %d: %v", i+1, err)
		}
	}
	t.Logf("%d signals sent in %s", signals, time.Since(began).Round(time.Millisecond))
	for deadline := time.Now().Add(3 * time.Minute); len(stub.requests()) < signals && time.Now().Before(deadline); {
		time.Sleep(time.Second)
	}
	runs, err := listRuns(ctx, s.c, id)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(stub.requests()); n < signals {
		logRuns(ctx, t, s.c, id)
		t.Fatalf("%d turns for %d messages", n, signals)
	}
	var largest int64
	continued := 0
	for _, r := range runs {
		switch r.GetStatus() {
		case enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED, enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:
			t.Errorf("run %s ended %s after %d events, %d bytes", r.GetExecution().GetRunId(), r.GetStatus(), r.GetHistoryLength(), r.GetHistorySizeBytes())
		case enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
			continued++
		}
		largest = max(largest, r.GetHistorySizeBytes())
	}
	t.Logf("%d signals of %d bytes: %d runs, the largest history %d bytes", signals, size, len(runs), largest)
	if continued == 0 || largest >= workflows.MaxHistoryBytes+4*size {
		t.Errorf("%d runs continued as new, the largest history is %d bytes; want handovers that keep each run near its cap of %d", continued, largest, workflows.MaxHistoryBytes)
	}
	if err := s.c.SignalWorkflow(ctx, id, "", api.EndSessionSignal, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.c.GetWorkflow(ctx, id, "").Get(ctx, nil); err != nil {
		t.Fatalf("the session did not complete: %v", err)
	}
}

// logRuns logs each run of workflow id: its status and its history's size.
func logRuns(ctx context.Context, t *testing.T, c client.Client, id string) {
	t.Helper()
	runs, err := listRuns(ctx, c, id)
	if err != nil {
		t.Log(err)
	}
	for _, r := range runs {
		t.Logf("run %s: %s, %d events, %d bytes", r.GetExecution().GetRunId(), r.GetStatus(), r.GetHistoryLength(), r.GetHistorySizeBytes())
	}
}
