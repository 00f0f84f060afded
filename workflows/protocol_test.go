package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
)

func TestRefusal(t *testing.T) {
	older := &Carry{}
	current := &Carry{Protocol: api.Protocol}
	newer := &Carry{Protocol: api.Protocol + 1}
	own := Options{BuildID: "v7"}
	for _, c := range []struct {
		name    string
		s       started
		opts    Options
		refused bool
		p       int
	}{
		{"a user's new run", started{in: handover{AgentInput: api.AgentInput{}}}, Options{}, false, 0},
		{"a new run of this build's client", started{in: handover{AgentInput: api.AgentInput{Protocol: api.Protocol}}}, Options{}, false, 0},
		{"a new run of a newer client", started{in: handover{AgentInput: api.AgentInput{Protocol: api.Protocol + 1}}}, Options{}, true, api.Protocol + 1},
		{"an older build's carry", started{in: handover{AgentInput: api.AgentInput{}, Carry: older}}, Options{}, false, 0},
		{"a newer build's carry", started{in: handover{AgentInput: api.AgentInput{Protocol: api.Protocol + 1}, Carry: newer}}, Options{}, true, api.Protocol + 1},
		{"a newer carry in an input that says nothing", started{in: handover{AgentInput: api.AgentInput{}, Carry: newer}}, Options{}, true, api.Protocol + 1},
		{"a subagent of this build", started{in: handover{AgentInput: api.AgentInput{Protocol: api.Protocol}}, child: true}, Options{}, false, 0},
		{"a subagent of an older parent", started{in: handover{AgentInput: api.AgentInput{}}, child: true}, Options{}, true, 0},
		{"a subagent's older carry", started{in: handover{AgentInput: api.AgentInput{}, Carry: older}, child: true}, Options{}, false, 0},
		// Replays: the first task's build decides, else the input.
		{"an older build's history", started{in: handover{AgentInput: api.AgentInput{}}, replaying: true, firstBuild: "0f3e7da0"}, Options{}, true, 0},
		{"this build's client, another main's worker", started{in: handover{AgentInput: api.AgentInput{Protocol: api.Protocol}}, replaying: true, firstBuild: "0f3e7da0"}, Options{}, false, 0},
		{"a user's run this protocol served", started{in: handover{AgentInput: api.AgentInput{}}, replaying: true, firstBuild: MarkBuild("a1")}, Options{}, false, 0},
		{"an older carry this protocol served", started{in: handover{AgentInput: api.AgentInput{}, Carry: older}, replaying: true, firstBuild: MarkBuild("a1")}, Options{}, false, 0},
		{"this protocol's carry", started{in: handover{AgentInput: api.AgentInput{Protocol: api.Protocol}, Carry: current}, replaying: true, firstBuild: "0f3e7da0"}, Options{}, false, 0},
		{"a newer build's history", started{in: handover{AgentInput: api.AgentInput{Protocol: api.Protocol}}, replaying: true, firstBuild: "todoflow-p9-a1"}, Options{}, true, 9},
		{"a version's own history", started{in: handover{AgentInput: api.AgentInput{}}, replaying: true, firstBuild: "v7"}, own, false, 0},
		{"another version's history", started{in: handover{AgentInput: api.AgentInput{}}, replaying: true, firstBuild: "v6"}, own, true, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, refused := refusal(c.s, c.opts)
			if refused != c.refused || refused && p != c.p {
				t.Errorf("refusal = %d, %v; want %d, %v", p, refused, c.p, c.refused)
			}
		})
	}
}

// firstTask is a history whose input is the JSON in and whose first workflow
// task the build firstBuild completed with an upsert, as the root of an
// older build did (its subagent's input with the parent that started it):
// the replay of its next task meets the check before any command.
func firstTask(t *testing.T, in string, firstBuild string, parent bool) *historypb.History {
	t.Helper()
	input, err := converter.GetDefaultDataConverter().ToPayloads(json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	started := &historypb.WorkflowExecutionStartedEventAttributes{
		WorkflowType:        &commonpb.WorkflowType{Name: api.WorkflowName},
		TaskQueue:           &taskqueuepb.TaskQueue{Name: api.TaskQueue, Kind: enumspb.TASK_QUEUE_KIND_NORMAL},
		Input:               input,
		WorkflowTaskTimeout: durationpb.New(10 * time.Second),
		Attempt:             1,
	}
	if parent {
		started.ParentWorkflowNamespace = "default"
		started.ParentWorkflowExecution = &commonpb.WorkflowExecution{WorkflowId: "older-tree", RunId: "run"}
		started.RootWorkflowExecution = started.ParentWorkflowExecution
	}
	events := []*historypb.HistoryEvent{
		{EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, Attributes: &historypb.HistoryEvent_WorkflowExecutionStartedEventAttributes{WorkflowExecutionStartedEventAttributes: started}},
		{EventType: enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, Attributes: &historypb.HistoryEvent_WorkflowTaskScheduledEventAttributes{WorkflowTaskScheduledEventAttributes: &historypb.WorkflowTaskScheduledEventAttributes{TaskQueue: started.TaskQueue, Attempt: 1}}},
		{EventType: enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED, Attributes: &historypb.HistoryEvent_WorkflowTaskStartedEventAttributes{WorkflowTaskStartedEventAttributes: &historypb.WorkflowTaskStartedEventAttributes{ScheduledEventId: 2}}},
		{EventType: enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, Attributes: &historypb.HistoryEvent_WorkflowTaskCompletedEventAttributes{WorkflowTaskCompletedEventAttributes: &historypb.WorkflowTaskCompletedEventAttributes{
			ScheduledEventId: 2, StartedEventId: 3, WorkerVersion: &commonpb.WorkerVersionStamp{BuildId: firstBuild}}}},
		{EventType: enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES, Attributes: &historypb.HistoryEvent_UpsertWorkflowSearchAttributesEventAttributes{UpsertWorkflowSearchAttributesEventAttributes: &historypb.UpsertWorkflowSearchAttributesEventAttributes{
			WorkflowTaskCompletedEventId: 4, SearchAttributes: &commonpb.SearchAttributes{}}}},
		{EventType: enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, Attributes: &historypb.HistoryEvent_WorkflowTaskScheduledEventAttributes{WorkflowTaskScheduledEventAttributes: &historypb.WorkflowTaskScheduledEventAttributes{TaskQueue: started.TaskQueue, Attempt: 1}}},
		{EventType: enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED, Attributes: &historypb.HistoryEvent_WorkflowTaskStartedEventAttributes{WorkflowTaskStartedEventAttributes: &historypb.WorkflowTaskStartedEventAttributes{ScheduledEventId: 6}}},
	}
	for i, e := range events {
		e.EventId = int64(i + 1)
	}
	return &historypb.History{Events: events}
}

// Sessions of a build before protocols, served by this one (issue 35): its
// subagent's history, whose input has a field this build does not know, and
// its root's, whose commands this build does not make. Neither fails its
// run: the replay is refused, before any command, by a panic, which blocks
// the workflow task under the worker's default panic policy, with the
// message that says what to run.
func TestOlderHistoryBlocksWithItsMessage(t *testing.T) {
	const olderBuild = "8a1c6b2f0e7da0f1"
	for _, c := range []struct {
		name   string
		in     string
		parent bool
	}{
		{"subagent", `{"prompt":"check the tests","agent_id":"tester","todo":{},"context":{},"tools":null,"tree_bus":true}`, true},
		{"root", `{"prompt":"plan the release","todo":{},"context":{},"tools":null}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(AgentWorkflow, workflow.RegisterOptions{Name: api.WorkflowName})
			err := r.ReplayWorkflowHistory(nil, firstTask(t, c.in, olderBuild, c.parent))
			if err == nil || !strings.Contains(err.Error(), RefusalMessage(0)) {
				t.Fatalf("replay: %v; want the task refused with %q", err, RefusalMessage(0))
			}
			// The replayer's panic error, which a worker turns into a
			// failed workflow task, has the panic's stack.
			if !errors.As(err, new(interface{ StackTrace() string })) {
				t.Errorf("replay: %v (%T); want a panic, which blocks the task, not a failed run", err, err)
			}
			for _, not := range []string{"unknown field", "InvalidInput"} {
				if strings.Contains(err.Error(), not) {
					t.Errorf("replay: %v; the run failed on its input", err)
				}
			}
		})
	}
}

// The same history, its first task completed by a worker of this protocol,
// is not refused (whatever its fake commands then do).
func TestOwnProtocolsHistoryIsNotRefused(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(AgentWorkflow, workflow.RegisterOptions{Name: api.WorkflowName})
	err := r.ReplayWorkflowHistory(nil, firstTask(t, `{"prompt":"plan the release","todo":{},"context":{},"tools":null}`, MarkBuild("8a1c6b2f"), false))
	if err != nil && strings.Contains(err.Error(), "speaks protocol") {
		t.Fatalf("replay: %v; this protocol's history was refused", err)
	}
}

// olderCarry is a continuation's input as a build before protocols wrote
// it: no protocol, a field of its input and one of its carry that this
// build does not know, a todo list and a message waiting for its turn.
const olderCarry = `{"model":"openai:gpt","todo":{},"context":{},"tools":null,"tree_bus":true,
 "carry":{"messages":[{"role":"system","content":"system"},{"role":"user","content":"first"},{"role":"assistant","content":"answered"}],
  "todo":{"todos":[{"id":"1","content":"Read the code","status":"completed"},{"id":"2","content":"Write the fix","status":"in_progress"}]},
  "turns":1,"model_calls":1,"continuation":false,"inbox":[{"text":"go on","urgent":true}],"usage":{},"old_cursor":{"at":3}}}`

// A new run from an older build's carry has no older history to replay:
// its carry decodes, leniently, and it is served, its list kept.
func TestOlderCarryIsServed(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	calls := 0
	env.RegisterActivityWithOptions(func(context.Context, activities.CallModelInput) (model.Response, error) {
		calls++
		return model.Response{Content: "fixed"}, nil
	}, activity.RegisterOptions{Name: api.ModelCallActivity})
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, time.Minute)
	// The worker decodes the input as here (the test environment takes a
	// value, not its JSON).
	var in api.AgentInput
	if err := json.Unmarshal([]byte(olderCarry), &in); err != nil {
		t.Fatalf("the older carry does not decode: %v", err)
	}
	if _, err := in.Settings(); !strings.Contains(in.Ignored(), "tree_bus") || err != nil {
		t.Errorf("ignored %q, settings: %v; want tree_bus ignored, nothing refused", in.Ignored(), err)
	}
	env.SetContinuedExecutionRunID("the-run-before")
	env.ExecuteWorkflow(AgentWorkflow, in)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("the older carry was not served: %v", err)
	}
	var res api.AgentResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	// The finalization guard may call again: an item is in progress.
	if calls == 0 || res.Reply != "fixed" || res.Turns != 2 {
		t.Errorf("%d model calls, reply %q, %d turns; want the carried message answered in the second turn", calls, res.Reply, res.Turns)
	}
	if len(res.Todos) != 2 || res.Todos[1].Content != "Write the fix" {
		t.Errorf("todos %+v; want the carried list", res.Todos)
	}
}

// A carry of a newer protocol is not guessed at: the task is refused with
// the message, and nothing runs.
func TestNewerCarryIsRefused(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	var in api.AgentInput
	if err := json.Unmarshal([]byte(strings.Replace(olderCarry, `"carry":{`, `"carry":{"protocol":99,`, 1)), &in); err != nil {
		t.Fatal(err)
	}
	env.ExecuteWorkflow(AgentWorkflow, in)
	var panicked *temporal.PanicError
	err := env.GetWorkflowError()
	if !errors.As(err, &panicked) || !strings.Contains(panicked.Error(), RefusalMessage(99)) {
		t.Fatalf("run: %v; want the task refused with %q", err, RefusalMessage(99))
	}
}

// A user's new run stays strict: a field an older build knew is not one a
// user may set now (strict_test.go holds the rest).
func TestUsersInputStaysStrict(t *testing.T) {
	var in api.AgentInput
	if err := json.Unmarshal([]byte(`{"prompt":"x","tree_bus":true}`), &in); err != nil {
		t.Fatal(err)
	}
	if err := in.Validate(); err == nil || !strings.Contains(err.Error(), "tree_bus") {
		t.Errorf("Validate: %v; want the unknown field refused", err)
	}
}
