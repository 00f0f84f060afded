package workflows

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
)

// The places a run can stand hand over, whatever waits there: each test
// plays a run that once stayed in one run until the server terminated it.

// A root waiting on a subagent's work that gets a message (a signal and an
// update) still hands over when the server suggests it: the blocked turn
// goes first in the carry, then the messages in the order they came; the
// update's caller is told where its reply comes from, and the continuation
// answers every one of them.
func TestQueuedMessagesCrossAHandover(t *testing.T) {
	env := newTreeEnv()
	scriptTree(env, reviewOfKid("work for a day"), late{"kid", 1, 24 * time.Hour})
	var msg *sent
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(api.UserMessageSignal, "also check the docs")
		msg = sendUpdate(env, api.SendMessageUpdate, "msg-1", "and the tests")
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		if st := queryState(t, env); st.Status != api.StatusBlocked {
			t.Errorf("with two messages queued the root is %s, want blocked", st.Status)
		}
		env.SetContinueAsNewSuggested(true)
		env.SignalWorkflow(api.TaskEventSignal, Events{Of: "kid", Brief: &api.Brief{Status: api.StatusRunning}})
	}, 2*time.Hour)
	env.ExecuteWorkflow(api.WorkflowName, rootInput("go"))
	next := continuedWith(t, env)

	in := next.Carry.Inbox.Queue
	if len(in) != 3 || in[0].Blocked == nil || in[0].Blocked.Calls != 5 ||
		in[1].Text != "also check the docs" || in[2].Text != "and the tests" || in[2].ReplyTo != "msg-1" {
		t.Fatalf("carry: inbox %s; want the blocked turn, then both messages in order", dump(in))
	}
	for _, m := range in {
		if m.Seq != 0 {
			t.Errorf("a seq of the run before crossed: %s", dump(m))
		}
	}
	var app *temporal.ApplicationError
	if msg == nil || !msg.done || !errors.As(msg.err, &app) || app.Type() != api.ErrTypeTurnGoesOn {
		t.Fatalf("send_message answered %+v; want a %s failure", msg, api.ErrTypeTurnGoesOn)
	}

	// The continuation ends the blocked turn, then takes the messages in
	// order, and keeps the update's reply for turn_reply.
	env = newTreeEnv()
	tm := scriptTree(env, nil)
	tm.hook = func(in activities.CallModelInput) (model.Response, bool) {
		return say(fmt.Sprintf("answer to call %d", in.Call)), true
	}
	var reply *sent
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(EndSignal, End{AgentID: "kid", How: "failed: out of disk", Key: next.Carry.Tree.Key})
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		reply = sendUpdate(env, api.TurnReplyUpdate, "msg-1/reply-1", api.TurnReplyArgs{UpdateID: "msg-1"})
		env.SignalWorkflow(api.EndSessionSignal, nil)
	}, 2*time.Hour)
	env.SetContinuedExecutionRunID("the-run-before")
	env.ExecuteWorkflow(api.WorkflowName, asInput(t, next))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if reply == nil || reply.err != nil || !strings.HasPrefix(reply.reply, "answer to call") {
		t.Fatalf("turn_reply for the queued update: %+v", reply)
	}
	var users []string
	for _, m := range queryMessages(t, env) {
		if m.Role == model.RoleUser && m.Name == "" {
			users = append(users, m.Content)
		}
	}
	if n := len(users); n < 2 || users[n-2] != "also check the docs" || users[n-1] != "and the tests" {
		t.Errorf("the continuation's user messages %q; want both queued ones, in order", users)
	}
}

// A busy turn (responses of many large tool results) hands over between
// two of its steps, not only when it ends: the carry holds the turn where
// it stood (its next model call) and the last response with its results,
// cut to fit; the continuation calls the model with them, in the same turn.
func TestBusyTurnHandsOverBetweenSteps(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	var reads []model.ToolCall
	for i := range 8 {
		reads = append(reads, call("read_file", fmt.Sprintf(`{"path":"f%d"}`, i)))
	}
	scripted(env, calls(reads...), calls(reads...), say("read them all"))
	big := strings.Repeat("x", 200<<10)
	env.RegisterActivityWithOptions(func(_ context.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
		return activities.RunToolResult{Content: big}, nil
	}, activity.RegisterOptions{Name: api.ToolActivity, DisableAlreadyRegisteredCheck: true})
	env.SetContinueAsNewSuggested(true)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "read every file", IdleTimeoutS: 3600})
	next := continuedWith(t, env)

	c := next.Carry
	if len(c.Inbox.Queue) != 1 || c.Inbox.Queue[0].Blocked == nil || !c.Inbox.Queue[0].Blocked.Next || c.Inbox.Queue[0].Blocked.Calls != 1 || c.Session.Turns != 1 {
		t.Fatalf("carry: inbox %s, %d turns; want the turn at its second model call", dump(c.Inbox.Queue), c.Session.Turns)
	}
	last := lastResponse(c.Window.Messages)
	if last < 0 || len(c.Window.Messages[last].ToolCalls) != len(reads) || len(c.Window.Messages)-last-1 != len(reads) {
		t.Fatalf("the carry lost the response the turn goes on from: %d messages, last response at %d", len(c.Window.Messages), last)
	}
	if n := carrySize(next); n > MaxCarryBytes || !strings.Contains(c.Window.Messages[last+1].Content, "Cut at a handover") {
		t.Errorf("carry of %d bytes (cap %d); results cut: %v", n, MaxCarryBytes, strings.Contains(c.Window.Messages[last+1].Content, "Cut at a handover"))
	}

	env = s.NewTestWorkflowEnvironment()
	seen := scripted(env, calls(reads...), calls(reads...), say("read them all"))
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, time.Minute)
	env.SetContinuedExecutionRunID("the-run-before")
	env.ExecuteWorkflow(AgentWorkflow, asInput(t, next))
	var res api.AgentResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if len(*seen) == 0 || (*seen)[0].Call != 2 || res.Reply != "read them all" || res.Turns != 1 {
		t.Errorf("continuation: first call %d, reply %q, %d turns; want call 2 of the same turn, ending it", (*seen)[0].Call, res.Reply, res.Turns)
	}
}

// A reporter whose webhook keeps failing does not hold the handover: the
// run hands over as soon as it is due, and its queue crosses (the delivery
// under way among it) with its counts, for the continuation to deliver.
func TestFailingReporterDoesNotHoldTheHandover(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	plan := calls(call("createPlan", `{"title":"T","steps":["a","b"]}`))
	scripted(env, plan, say("planned"))
	env.RegisterActivityWithOptions(func(ctx context.Context, in activities.ReportInput) error {
		return temporal.NewApplicationError("webhook answered 503", "Webhook")
	}, activity.RegisterOptions{Name: activities.ReportName})
	var suggested, now time.Time
	env.RegisterDelayedCallback(func() {
		suggested = env.Now()
		env.SetContinueAsNewSuggested(true)
		env.SignalWorkflow(api.TaskEventSignal, Events{Of: "nobody", Brief: &api.Brief{Status: api.StatusRunning}})
	}, time.Minute)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "plan", IdleTimeoutS: 7 * 24 * 3600,
		Reporters: []api.ReporterConfig{{Type: "console", RetryWindowS: 3600}}})
	now = env.Now()
	next := continuedWith(t, env)

	if waited := now.Sub(suggested); waited > time.Second {
		t.Errorf("the handover waited %s for the reporter; want it at once", waited)
	}
	r := next.Carry.Reports
	if len(r) != 1 || len(r[0].Queue) == 0 || r[0].Status.Type != "console" {
		t.Fatalf("carry: reports %s; want the console reporter's queue", dump(r))
	}

	env = s.NewTestWorkflowEnvironment()
	scripted(env)
	var delivered []string
	env.RegisterActivityWithOptions(func(ctx context.Context, in activities.ReportInput) error {
		delivered = append(delivered, string(in.Event))
		return nil
	}, activity.RegisterOptions{Name: activities.ReportName})
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, time.Minute)
	env.SetContinuedExecutionRunID("the-run-before")
	env.ExecuteWorkflow(AgentWorkflow, asInput(t, next))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if len(delivered) != len(r[0].Queue) {
		t.Errorf("the continuation delivered %d of the %d carried reports", len(delivered), len(r[0].Queue))
	}
}

// A carry holds at most carriedReportBytes of reports: the oldest that do
// not fit are counted as failed, and the state says so.
func TestCarriedReportsStayBounded(t *testing.T) {
	rp := newReporting("main", "", []api.ReporterConfig{{Type: "console"}, {Type: "file"}}, nil)
	ev := []byte(fmt.Sprintf(`{"data":%q}`, strings.Repeat("e", 1<<10)))
	for range 200 {
		for _, r := range rp.list {
			r.queue = append(r.queue, Report{Event: ev})
		}
	}
	out := rp.carry()
	total := 0
	for _, c := range out {
		for _, r := range c.Queue {
			total += len(r.Event) + len(r.Plan)
		}
		if c.Status.Failed != 200-len(c.Queue) || !strings.Contains(c.Status.LastError, "dropped at a handover") {
			t.Errorf("%s: %d carried, %d counted failed (%q); want the rest of 200 failed", c.Status.Type, len(c.Queue), c.Status.Failed, c.Status.LastError)
		}
	}
	if total > carriedReportBytes || total < carriedReportBytes/2 {
		t.Errorf("carried %d bytes of reports; want at most %d, most of it used", total, carriedReportBytes)
	}
	if again := newReporting("main", "", []api.ReporterConfig{{Type: "console"}, {Type: "file"}}, out); len(again.list[1].queue) != len(out[1].Queue) {
		t.Errorf("a carry of the same reporters restored %d reports of %d", len(again.list[1].queue), len(out[1].Queue))
	}
	if other := newReporting("main", "", []api.ReporterConfig{{Type: "file"}, {Type: "console"}}, out); len(other.list[0].queue) != 0 {
		t.Errorf("a carry of other reporters was restored: %d reports", len(other.list[0].queue))
	}
}

// A run does some work of its own before it hands over: on a server that
// suggests a handover to a run as fresh as its carry (a suggestion set below
// a carry's size), a session would otherwise pass from run to run in its
// first wait, each run a few events long.
func TestAFreshRunDoesNotHandOverAtOnce(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	scripted(env)
	env.SetCurrentHistoryLength(10)
	env.SetContinueAsNewSuggested(true)
	var fresh api.State
	env.RegisterDelayedCallback(func() {
		fresh = queryState(t, env)
		env.SetCurrentHistoryLength(10 + minRunEvents)
		env.SignalWorkflow(api.TaskEventSignal, Events{Of: "nobody", Brief: &api.Brief{Status: api.StatusRunning}})
	}, time.Minute)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{IdleTimeoutS: 3600})
	continuedWith(t, env)
	if fresh.Status != api.StatusWaitingUser {
		t.Errorf("a minute into a fresh run suggested to hand over, it is %s; want it waiting for its user", fresh.Status)
	}
}
