package activities

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/todoflow/todoflow/api"

	commonpb "go.temporal.io/api/common/v1"
	enums "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"google.golang.org/grpc"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/transcript"
)

// The test environment's workflow and run, which RunTool reads.
const testWorkflow, testRun = "default-test-workflow-id", "default-test-run-id"

// callHistory is the history of the test environment's run in which one
// model call sent msgs as its new messages, as a model call's input holds
// them. It serves its events in one page and counts the reads.
type callHistory struct {
	evs   []*historypb.HistoryEvent
	reads int
}

func newCallHistory(t *testing.T, nm *transcript.NewMessages) *callHistory {
	t.Helper()
	in, err := converter.GetDefaultDataConverter().ToPayloads(CallModelInput{New: nm})
	if err != nil {
		t.Fatal(err)
	}
	return &callHistory{evs: []*historypb.HistoryEvent{{EventId: 1, EventType: enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
		Attributes: &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{
			ActivityType: &commonpb.ActivityType{Name: api.ModelCallActivity}, Input: in}}}}}
}

// reader reads h with a cache of its own.
func (h *callHistory) reader() *transcript.Reader { return transcript.NewReader(h, nil, 0) }

func (h *callHistory) GetWorkflowExecutionHistory(_ context.Context, req *workflowservice.GetWorkflowExecutionHistoryRequest, _ ...grpc.CallOption) (*workflowservice.GetWorkflowExecutionHistoryResponse, error) {
	if req.GetExecution().GetWorkflowId() != testWorkflow || req.GetExecution().GetRunId() != testRun {
		return nil, serviceerror.NewNotFound("workflow not found")
	}
	h.reads++
	return &workflowservice.GetWorkflowExecutionHistoryResponse{History: &historypb.History{Events: h.evs}}, nil
}

func (h *callHistory) GetWorkflowExecutionHistoryReverse(context.Context, *workflowservice.GetWorkflowExecutionHistoryReverseRequest, ...grpc.CallOption) (*workflowservice.GetWorkflowExecutionHistoryReverseResponse, error) {
	return nil, errors.New("one page has every event")
}

func activityEnv(a *Activities) *testsuite.TestActivityEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	return env
}

func userMessage(text string) model.Message {
	return model.Message{Role: model.RoleUser, Content: text, ToolCalls: []model.ToolCall{}}
}

// CallModel reads its messages from the cache when it has them, and a tool
// call of its answer is read from there too; a worker whose cache lacks
// them reads the run's history.
func TestCallModelAndRunToolReadFromTheCache(t *testing.T) {
	msgs := []model.Message{userMessage("system"), userMessage("write a file")}
	answer := model.Response{ToolCalls: []model.ToolCall{{ID: "c1", Name: "write_file", Arguments: json.RawMessage(`{"path":"out.txt","content":"cached"}`)}}}
	all := append(msgs, model.Message{Role: model.RoleAssistant, ToolCalls: answer.ToolCalls},
		model.Message{Role: model.RoleTool, ToolCallID: "c1", Content: "written", ToolCalls: []model.ToolCall{}})
	h := newCallHistory(t, &transcript.NewMessages{From: 0, Messages: all})
	m := &answeringModel{resp: answer}
	a := &Activities{Transcripts: h.reader(), Models: func(string) (model.Client, string, error) { return m, "m", nil }}
	env := activityEnv(a)
	in := CallModelInput{WorkflowID: testWorkflow, RunID: testRun, Call: 1, Spans: []transcript.Span{{Start: 0, End: 2}}, WorkerTools: []string{},
		New: &transcript.NewMessages{From: 0, Messages: msgs}}
	if _, err := env.ExecuteActivity(a.CallModel, in); err != nil {
		t.Fatal(err)
	}
	if h.reads != 0 || len(m.reqs) != 1 || len(m.reqs[0].Messages) != 2 {
		t.Fatalf("%d reads of history, requests %+v; want none and the two messages sent", h.reads, m.reqs)
	}
	ws := t.TempDir()
	a.Roots = testRoots(t, filepath.Dir(ws))
	ref := &transcript.CallRef{Message: 2, Index: 0, Digest: transcript.CallDigest(answer.ToolCalls[0])}
	if _, err := env.ExecuteActivity(a.RunTool, RunToolInput{Workspace: ws, Call: model.ToolCall{ID: "c1", Name: "write_file"}, From: ref}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "out.txt")); err != nil || string(b) != "cached" || h.reads != 0 {
		t.Fatalf("out.txt = %q, %v after %d reads; want the cached call's file and no read", b, err, h.reads)
	}

	// Another worker, which has seen none of it, reads the run's history.
	other := &Activities{Transcripts: h.reader(), Models: a.Models, Roots: a.Roots}
	env = activityEnv(other)
	if _, err := env.ExecuteActivity(other.RunTool, RunToolInput{Workspace: ws, Call: model.ToolCall{ID: "c1", Name: "write_file"}, From: ref}); err != nil {
		t.Fatal(err)
	}
	if h.reads != 1 {
		t.Errorf("%d reads: a worker without the call in its cache ran it without reading the transcript", h.reads)
	}
	in = CallModelInput{WorkflowID: testWorkflow, RunID: testRun, Call: 2, Spans: []transcript.Span{{Start: 0, End: 4}}, WorkerTools: []string{},
		New: &transcript.NewMessages{From: 2, Messages: all[2:]}}
	if _, err := env.ExecuteActivity(other.CallModel, in); err != nil {
		t.Fatal(err)
	}
	if h.reads != 2 || len(m.reqs) != 2 {
		t.Fatalf("%d reads; want one more, for the two messages the worker had not seen", h.reads)
	}
}

// A call an older build scheduled, whose input left out a field of the
// workflow's own making (which that build read back by query), fails at
// once, not retried, and says why: the turn fails, the session goes on.
func TestCallModelOfAnOlderBuildWithAHole(t *testing.T) {
	made := userMessage(string(make([]byte, transcript.HeldOver+1)))
	msgs := []model.Message{userMessage("system"), made}
	h := newCallHistory(t, transcript.NewMessagesOf(msgs, 0, 0))
	a := &Activities{Transcripts: h.reader(), Models: func(string) (model.Client, string, error) { return &answeringModel{}, "m", nil }}
	in := CallModelInput{WorkflowID: testWorkflow, RunID: testRun, Call: 1, Spans: []transcript.Span{{Start: 0, End: 2}}, WorkerTools: []string{}}
	_, err := activityEnv(a).ExecuteActivity(a.CallModel, in)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != transcript.ErrTypeHole || !app.NonRetryable() {
		t.Fatalf("CallModel = %v; want a non-retryable %s error", err, transcript.ErrTypeHole)
	}
	t.Log(app.Error())
}
