package testsuite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/transcript"
	"github.com/todoflow/todoflow/worker/agentworker"
	"github.com/todoflow/todoflow/workflows"
)

// The races of a run's last workflow task: a signal that the server
// delivers in the same task as the turn's last model answer, just before
// the run continues as new or completes. To make the server deliver them
// together, the workflows and the activities run on separate workers, and
// the workflow worker is stopped while the model call runs: the answer and
// the signals then wait for the same workflow task.

// splitWorkers runs the activities on a worker of their own and returns a
// function that starts a workflow-only worker (and stops it with the
// function it returns).
func splitWorkers(t *testing.T, s *server) (startWorkflows func() (stop func())) {
	t.Helper()
	// Heartbeats as often as agentworker's, so that the streamed reply
	// shows when the model call has read its transcript (see
	// answerWithSignals).
	acts := worker.New(s.c, api.TaskQueue, worker.Options{DisableWorkflowWorker: true, MaxHeartbeatThrottleInterval: agentworker.HeartbeatThrottle})
	a := &activities.Activities{Transcripts: transcript.NewReader(s.c.WorkflowService(), nil, 0), Models: agentworker.NewModels("", "/"), StateDir: t.TempDir()}
	acts.RegisterActivityWithOptions(a.CallModel, activity.RegisterOptions{Name: api.ModelCallActivity})
	acts.RegisterActivityWithOptions(a.RunTool, activity.RegisterOptions{Name: api.ToolActivity})
	acts.RegisterActivityWithOptions(a.Report, activity.RegisterOptions{Name: activities.ReportName})
	if err := acts.Start(); err != nil {
		t.Fatalf("start activity worker: %v", err)
	}
	t.Cleanup(acts.Stop)
	return func() func() {
		// A worker for workflow tasks only. Registering no activities is
		// not enough: the SDK polls for activity tasks all the same, and
		// takes a model call it cannot run ("unable to find
		// activityType=CallModel. Supported types: []").
		w := worker.New(s.c, api.TaskQueue, worker.Options{LocalActivityWorkerOnly: true})
		w.RegisterWorkflowWithOptions(workflows.WithOptions(workflows.Options{}), workflow.RegisterOptions{Name: api.WorkflowName})
		if err := w.Start(); err != nil {
			t.Fatalf("start workflow worker: %v", err)
		}
		stopped := false
		stop := func() {
			if !stopped {
				stopped = true
				w.Stop()
			}
		}
		t.Cleanup(stop)
		return stop
	}
}

// answerWithSignals starts sc's run, waits until its first (slow) model
// call runs, stops the workflow worker, waits for the call to finish,
// sends signals, and starts a workflow worker again: the model's answer
// and the signals come to the run in one workflow task.
func answerWithSignals(t *testing.T, s *server, id string, in api.AgentInput, signals func(ctx context.Context)) {
	t.Helper()
	ctx := context.Background()
	startWorkflows := splitWorkers(t, s)
	stop := startWorkflows()
	if _, err := s.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: api.TaskQueue}, api.WorkflowName, in); err != nil {
		t.Fatal(err)
	}
	// writing reports whether a model call is in state and, when writing
	// is asked, has begun its reply.
	pendingModelCall := func(state enumspb.PendingActivityState, writing bool) bool {
		d, err := s.c.DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, pa := range d.GetPendingActivities() {
			if pa.GetActivityType().GetName() != api.ModelCallActivity || pa.GetState() != state {
				continue
			}
			var rs api.ReplyStream
			if !writing || converter.GetDefaultDataConverter().FromPayloads(pa.GetHeartbeatDetails(), &rs) == nil && rs.Text != "" {
				return true
			}
		}
		return false
	}
	// Only once the model writes has the call read its transcript, which
	// is a query the workflow worker answers: stopped before that, the
	// call would wait for a worker that is not there.
	waitFor(t, time.Minute, "the slow model call to write", func() bool {
		return pendingModelCall(enumspb.PENDING_ACTIVITY_STATE_STARTED, true)
	})
	stop()
	waitFor(t, time.Minute, "the slow model call to finish", func() bool {
		return !pendingModelCall(enumspb.PENDING_ACTIVITY_STATE_STARTED, false) && !pendingModelCall(enumspb.PENDING_ACTIVITY_STATE_SCHEDULED, false)
	})
	signals(ctx)
	startWorkflows()
}

// inOneTask reports whether the first completed model call and the first
// signal called name were delivered to the run in the same workflow task.
func inOneTask(evs []*historypb.HistoryEvent, name string) bool {
	answered := false
	for _, ev := range evs {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
			if answered {
				return false
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			answered = true
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
			if ev.GetWorkflowExecutionSignaledEventAttributes().GetSignalName() == name {
				return answered
			}
		}
	}
	return false
}

// logHistory logs the events' types, for a test that failed.
func logHistory(t *testing.T, evs []*historypb.HistoryEvent) {
	t.Helper()
	var b strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&b, "%d %s", ev.GetEventId(), strings.TrimPrefix(ev.GetEventType().String(), "EVENT_TYPE_"))
		if sig := ev.GetWorkflowExecutionSignaledEventAttributes(); sig != nil {
			fmt.Fprintf(&b, " %s", sig.GetSignalName())
		}
		if f := ev.GetActivityTaskFailedEventAttributes().GetFailure(); f != nil {
			fmt.Fprintf(&b, " %s", f.GetMessage())
		}
		if a := ev.GetWorkflowTaskFailedEventAttributes(); a != nil {
			fmt.Fprintf(&b, " %s: %.300s", a.GetCause(), a.GetFailure().GetMessage())
		}
		b.WriteString("\n")
	}
	t.Log(b.String())
}

// transcriptOf reads the messages of the workflow's current run.
func transcriptOf(c client.Client, id string) ([]model.Message, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var all []model.Message
	for {
		v, err := c.QueryWorkflow(ctx, id, "", api.MessagesQuery, len(all), 0)
		if err != nil {
			return nil, fmt.Errorf("messages of %s: %w", id, err)
		}
		var page []model.Message
		if err := v.Get(&page); err != nil {
			return nil, fmt.Errorf("messages of %s: %w", id, err)
		}
		if len(page) == 0 {
			return all, nil
		}
		all = append(all, page...)
	}
}

func hasMessage(msgs []model.Message, role, content string) bool {
	for _, m := range msgs {
		if m.Role == role && m.Content == content {
			return true
		}
	}
	return false
}

// A user_message signal that comes in the same workflow task as the turn's
// last answer, when the server already suggests continue-as-new, is
// answered: the main coroutine drains the signal channels before it hands
// over, so the message is not lost between the runs.
func TestSignalInTheTaskBeforeContinueAsNew(t *testing.T) {
	s := startServerTB(t, "limit.historyCount.suggestContinueAsNew=5")
	sc := writeScenario(t, `{"name": "race", "input": {"prompt": "one", "todo": {"enabled": false}},
	  "model": [{"content": "reply one", "delay_ms": 5000}, {"content": "reply two"}]}`)
	id := "race-continue-as-new"
	answerWithSignals(t, s, id, sc.RunInput(), func(ctx context.Context) {
		if err := s.c.SignalWorkflow(ctx, id, "", api.UserMessageSignal, "two"); err != nil {
			t.Fatal(err)
		}
	})
	var runs []string
	t.Cleanup(func() {
		if t.Failed() {
			logHistory(t, historyOf(t, s.c, id))
		}
	})
	waitFor(t, time.Minute, "the run to answer the signal", func() bool {
		var err error
		if runs, err = runsOf(context.Background(), s.c, id); err != nil {
			t.Fatal(err)
		}
		st, ok := queryState(context.Background(), s.c, id)
		msgs, err := transcriptOf(s.c, id)
		return ok && err == nil && st.Status == api.StatusWaitingUser && hasMessage(msgs, model.RoleAssistant, "reply two")
	})
	first := historyOf(t, s.c, id)
	if !inOneTask(first, api.UserMessageSignal) {
		t.Fatal("the model's answer and the signal came in different workflow tasks: the race was not played")
	}
	if len(runs) < 2 {
		t.Errorf("%d run(s); want the session to have continued as new", len(runs))
	}
	msgs, err := transcriptOf(s.c, id)
	if err != nil {
		t.Fatal(err)
	}
	if !hasMessage(msgs, model.RoleUser, "two") {
		t.Errorf("the signalled message is missing from the transcript: %+v", msgs)
	}
	_ = s.c.SignalWorkflow(context.Background(), id, "", api.EndSessionSignal, nil)
}

// A user_message signal and end_session in the same workflow task as the
// turn's last answer: the message is answered before the run completes.
func TestSignalInTheTaskBeforeCompletion(t *testing.T) {
	s := startServer(t)
	sc := writeScenario(t, `{"name": "race", "input": {"prompt": "one", "todo": {"enabled": false}},
	  "model": [{"content": "reply one", "delay_ms": 5000}, {"content": "reply two"}]}`)
	id := "race-completion"
	answerWithSignals(t, s, id, sc.RunInput(), func(ctx context.Context) {
		if err := s.c.SignalWorkflow(ctx, id, "", api.UserMessageSignal, "two"); err != nil {
			t.Fatal(err)
		}
		if err := s.c.SignalWorkflow(ctx, id, "", api.EndSessionSignal, nil); err != nil {
			t.Fatal(err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var res api.AgentResult
	if err := s.c.GetWorkflow(ctx, id, "").Get(ctx, &res); err != nil {
		t.Fatalf("run: %v", err)
	}
	evs := historyOf(t, s.c, id)
	t.Cleanup(func() {
		if t.Failed() {
			logHistory(t, evs)
		}
	})
	if !inOneTask(evs, api.EndSessionSignal) {
		t.Fatal("the model's answer and end_session came in different workflow tasks: the race was not played")
	}
	msgs, err := transcriptOf(s.c, id)
	if err != nil {
		t.Fatal(err)
	}
	if !hasMessage(msgs, model.RoleUser, "two") || !hasMessage(msgs, model.RoleAssistant, "reply two") {
		t.Errorf("the message signalled with end_session was not answered: %+v", msgs)
	}

	// The rolling-deploy fallback of the activities (activities.readMessages)
	// relies on how a worker refuses a query it has no handler for.
	_, err = s.c.QueryWorkflow(context.Background(), id, "", "no_such_query")
	var failed *serviceerror.QueryFailed
	if !errors.As(err, &failed) || !strings.Contains(failed.Message, "unknown queryType no_such_query") {
		t.Errorf("query of an unknown type: %#v; want a QueryFailed naming the query type", err)
	}
}
