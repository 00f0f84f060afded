package workflows

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/temporal"

	"github.com/todoflow/todoflow/todo"
)

// sendUpdate sends update name with id and args; its answer goes to reply
// and err, a refusal to refused.
type sent struct {
	reply   string
	err     error
	refused error
	done    bool
}

func sendUpdate(env testEnv, name, id string, arg any) *sent {
	s := &sent{}
	env.UpdateWorkflow(name, id, &updateCallback{
		reject: func(err error) { s.refused, s.done = err, true },
		complete: func(v any, err error) {
			s.err, s.done = err, true
			if r, ok := v.(string); ok {
				s.reply = r
			}
		},
	}, arg)
	return s
}

// A chat turn (started by send_message) that waits for an approval past
// the run's history limits is handed over like any other: its update is
// answered that the turn goes on, naming the update's id, and the
// continuation answers turn_reply with the turn's reply once the approval
// came, to a second caller too. An id no turn answers is refused.
func TestChatTurnCrossesContinueAsNew(t *testing.T) {
	next := handedChatTurn(t)
	env, ran := approvalEnv(say("(call 1, of the first run)"), say("wrote a"))
	var unknown, early, again *sent
	env.RegisterDelayedCallback(func() {
		unknown = sendUpdate(env, api.TurnReplyUpdate, "r0", api.TurnReplyArgs{UpdateID: "msg-9"})
		early = sendUpdate(env, api.TurnReplyUpdate, "msg-1/reply-1", api.TurnReplyArgs{UpdateID: "msg-1"})
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		if early.done {
			t.Errorf("turn_reply answered before the turn ended: %+v", early)
		}
		approveTool(t, env, api.ToolApprovalArgs{Approved: yes(), CallID: "c1a"}, nil)
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		again = sendUpdate(env, api.TurnReplyUpdate, "r2", api.TurnReplyArgs{UpdateID: "msg-1"})
		env.SignalWorkflow(api.EndSessionSignal, nil)
	}, 2*time.Hour)
	env.SetContinuedExecutionRunID("the-run-before")
	env.ExecuteWorkflow(AgentWorkflow, asInput(t, next))
	completed(t, env)
	if unknown.refused == nil || !strings.Contains(unknown.refused.Error(), "msg-9") {
		t.Errorf("turn_reply for an unknown id: %+v; want refused", unknown)
	}
	if early.err != nil || early.reply != "wrote a" {
		t.Errorf("turn_reply answered %+v; want the turn's reply", early)
	}
	if again.err != nil || again.reply != "wrote a" {
		t.Errorf("turn_reply for a reply taken once: %+v; want it again", again)
	}
	if strings.Join(*ran, ",") != "c1a" {
		t.Errorf("tools run = %v; want the approved write", *ran)
	}
}

// A session that ends before the caller of its handed-over turn asked for
// the reply waits for that ask (as long as it waits for its reporters),
// then completes with the reply in its result.
func TestKeptReplyOutlivesEndSession(t *testing.T) {
	for _, tt := range []struct {
		name  string
		asked bool
	}{{"asked after the end", true}, {"never asked", false}} {
		t.Run(tt.name, func(t *testing.T) {
			next := handedChatTurn(t)
			env, _ := approvalEnv(say("(call 1, of the first run)"), say("wrote a"))
			var late *sent
			var openAfterEnd bool
			env.RegisterDelayedCallback(func() {
				approveTool(t, env, api.ToolApprovalArgs{Approved: yes(), CallID: "c1a"}, nil)
				env.SignalWorkflow(api.EndSessionSignal, nil)
			}, time.Hour)
			env.RegisterDelayedCallback(func() {
				openAfterEnd = true
				if tt.asked {
					late = sendUpdate(env, api.TurnReplyUpdate, "msg-1/reply-1", api.TurnReplyArgs{UpdateID: "msg-1"})
				}
			}, time.Hour+time.Minute)
			env.SetContinuedExecutionRunID("the-run-before")
			env.ExecuteWorkflow(AgentWorkflow, asInput(t, next))
			completed(t, env)
			if !openAfterEnd {
				t.Fatal("the run completed before its caller could ask for the reply")
			}
			if tt.asked && (late == nil || late.err != nil || late.reply != "wrote a") {
				t.Errorf("turn_reply after end_session: %+v; want the reply", late)
			}
			var res api.AgentResult
			if err := env.GetWorkflowResult(&res); err != nil || res.Reply != "wrote a" {
				t.Errorf("result reply %q (%v)", res.Reply, err)
			}
		})
	}
}

// handedChatTurn plays a chat turn whose write waits for approval until the
// run hands it over, and returns the continuation's input; the
// send_message (id msg-1) must have been answered that the turn goes on.
func handedChatTurn(t *testing.T) handover {
	t.Helper()
	chat := approvalInput(todo.ToolApproval{"write_*": todo.ApprovalRequired})
	chat.Prompt = ""
	env, ran := approvalEnv(calls(call("write_file", `{"path":"a","content":"x"}`)))
	var msg *sent
	env.RegisterDelayedCallback(func() { msg = sendUpdate(env, api.SendMessageUpdate, "msg-1", "write a") }, time.Minute)
	env.RegisterDelayedCallback(func() {
		if st := queryState(t, env); st.PendingApproval == nil {
			t.Errorf("the turn does not wait for its approval: %s", st.Status)
		}
		env.SetContinueAsNewSuggested(true)
		env.SignalWorkflow(api.TaskEventSignal, Events{Of: "nobody", Brief: &api.Brief{Status: api.StatusRunning}})
	}, time.Hour)
	env.ExecuteWorkflow(AgentWorkflow, chat)
	next := continuedWith(t, env)

	var app *temporal.ApplicationError
	if msg == nil || !msg.done || !errors.As(msg.err, &app) || app.Type() != api.ErrTypeTurnGoesOn {
		t.Fatalf("send_message answered %+v; want a %s failure", msg, api.ErrTypeTurnGoesOn)
	}
	var d api.TurnGoesOn
	if err := app.Details(&d); err != nil || d.UpdateID != "msg-1" || !strings.Contains(app.Message(), api.TurnReplyUpdate) {
		t.Errorf("the failure names %+v (%v) and says %q; want msg-1 and where the reply comes from", d, err, app.Message())
	}
	if len(*ran) != 0 {
		t.Errorf("tools ran before the approval: %v", *ran)
	}
	in := next.Carry.Inbox.Queue
	if len(in) != 1 || in[0].ReplyTo != "msg-1" || in[0].Seq != 0 || in[0].Blocked == nil || !in[0].Blocked.Tools {
		t.Fatalf("carry: inbox %s; want the waiting turn, answering msg-1, with no seq of the run before", dump(in))
	}
	return next
}

// A reply no one asked for yet is carried, cut to its bound, and the oldest
// give way when more are kept than the bound allows.
func TestKeptRepliesStayBounded(t *testing.T) {
	a := newInbox(nil, "")
	long := strings.Repeat("é", keptReplyBytes)
	for i := range maxKeptReplies + 2 {
		a.replied(Inbound{ReplyTo: string(rune('a' + i))}, long)
	}
	a.replied(Inbound{Seq: 3, ReplyTo: "waits-here"}, "to the update")
	if len(a.kept) != maxKeptReplies || a.kept[0].UpdateID != "c" {
		t.Fatalf("kept %d replies from %q; want %d, the oldest dropped", len(a.kept), a.kept[0].UpdateID, maxKeptReplies)
	}
	if a.waiting[3] != "to the update" || a.keptReply("waits-here") >= 0 {
		t.Errorf("a turn whose update waits in this run answers it, not the kept replies")
	}
	carried := a.carry().Replies
	for _, k := range carried {
		if len(k.Reply) > keptReplyBytes || !strings.Contains(k.Reply, "messages query") || !utf8.ValidString(k.Reply) {
			t.Fatalf("a carried reply of %d bytes (bound %d), note or runes lost: %.80q", len(k.Reply), keptReplyBytes, k.Reply[len(k.Reply)-80:])
		}
	}
	if len(a.kept[0].Reply) != len(long) {
		t.Errorf("the run's own copy was cut: %d bytes", len(a.kept[0].Reply))
	}
	a.kept[0].Taken = true
	if carried := a.carry().Replies; len(carried) != maxKeptReplies-1 || !a.untaken() {
		t.Errorf("with one reply taken, %d are carried; want the %d others", len(carried), maxKeptReplies-1)
	}
}
