package testsuite

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	tfclient "github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/todo"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// A chat message whose turn waits for an approval while the server asks the
// run to continue as new gets its reply all the same: the run hands the
// turn over, answers the update that the turn goes on, and the typed client
// follows the turn (turn_reply) into the run that ends it. The caller sees
// nothing of it but the reply. A caller that asks for the reply late, after
// the session was told to end, still gets it.
func TestChatReplyFollowsTheTurnAcrossRuns(t *testing.T) {
	stubs, s := handoverEnv(t)
	for _, late := range []bool{false, true} {
		id := fmt.Sprintf("chat-turn-reply-late-%v", late)
		_, ref := stubs.add(t, id, writeThenReply()...)
		runs := chatReplyAcrossRuns(t, s.c, ref, id, late)
		t.Logf("late %v: the turn's reply came after %d runs", late, runs)
	}
}

// handoverEnv is a server that suggests continuing as new after 20 events,
// and a worker whose openai: model calls the stubs answer.
func handoverEnv(t *testing.T) (*stubRouter, *server) {
	stubs := newStubRouter(t)
	t.Setenv("OPENAI_BASE_URL", stubs.baseURL())
	t.Setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
	s := startServerTB(t, "limit.historyCount.suggestContinueAsNew=20")
	s.startWorker(t, t.TempDir())
	return stubs, s
}

// awaitHandedOverApproval waits until session id waits for a tool call's
// approval in a later run than its first: what grows the run's history (a
// child's news in real sessions; here updates that change nothing) makes
// the server suggest continuing as new, and the wait is handed over.
func awaitHandedOverApproval(ctx context.Context, t *testing.T, c client.Client, sess *tfclient.Session, id string) {
	t.Helper()
	waitFor(t, 2*time.Minute, "the approval wait in a later run", func() bool {
		st, err := sess.State(ctx)
		if err != nil || st.PendingApproval == nil {
			return false
		}
		if runs, err := runsOf(ctx, c, id); err != nil || len(runs) < 2 {
			if _, err := sess.SetContinuation(ctx, false); err != nil {
				t.Logf("set_continuation: %v", err)
			}
			return false
		}
		return true
	})
}

// writeThenReply are the model's answers of chatReplyAcrossRuns: a write
// that waits for approval, then the turn's reply.
func writeThenReply() []string {
	return []string{
		toolCall("call_1", "write_file", map[string]string{"path": "a.txt", "content": "x"}),
		`{"role":"assistant","content":"Wrote a.txt."}`,
	}
}

// chatReplyAcrossRuns plays a chat session of one message with model ref
// (answering writeThenReply) as workflow id: the turn waits for the write's
// approval until its wait was handed over, and the message's reply must come
// through. The typed client follows the turn by itself; a late caller (the
// stock CLI's way) is answered that the turn goes on, and asks turn_reply
// only after the session was told to end, which waits for it. It ends the
// session and returns how many runs it took.
func chatReplyAcrossRuns(t *testing.T, c client.Client, ref, id string, late bool) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sess, err := tfclient.New(c, tfclient.Options{}).Start(ctx, api.AgentInput{
		Model: ref, Todo: todoOff(), Approval: todo.ToolApproval{"write_file": todo.ApprovalRequired},
	}, tfclient.StartOptions{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		reply string
		err   error
	}
	got := make(chan answer, 1)
	const lateID = "late-message"
	go func() {
		if !late {
			reply, err := sess.Send(ctx, "write a.txt").Reply(ctx)
			got <- answer{reply, err}
			return
		}
		var reply string
		h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id, UpdateID: lateID, UpdateName: api.SendMessageUpdate,
			Args: []any{"write a.txt"}, WaitForStage: client.WorkflowUpdateStageCompleted})
		if err == nil {
			err = h.Get(ctx, &reply)
		}
		got <- answer{reply, err}
	}()

	// The approval is given once the wait was handed over at least once.
	awaitHandedOverApproval(ctx, t, c, sess, id)
	var st api.State
	// An answer that reaches a run which has just handed the wait over,
	// and one whose successor has not asked again yet, is refused ("no
	// tool call is waiting"): the user answers the wait shown next.
	var refused error
	waitFor(t, time.Minute, "the approval taken", func() bool {
		if st, err = sess.State(ctx); err != nil || st.PendingApproval == nil {
			return false
		}
		_, err := sess.Approve(ctx, tfclient.AnswerTo(st, ""))
		if _, ok := errors.AsType[*tfclient.RefusedError](err); ok {
			refused = err
			return false
		}
		if err != nil {
			t.Fatalf("approve: %v", err)
		}
		return true
	})
	if refused != nil {
		t.Logf("an approval between two runs was refused: %v", refused)
	}
	var a answer
	select {
	case a = <-got:
	case <-ctx.Done():
		t.Fatal("no answer to the message")
	}
	if late {
		if app, ok := errors.AsType[*temporal.ApplicationError](a.err); !ok || app.Type() != api.ErrTypeTurnGoesOn {
			t.Fatalf("send_message answered %q, %v; want %s", a.reply, a.err, api.ErrTypeTurnGoesOn)
		}
		if err := sess.End(ctx); err != nil {
			t.Fatal(err)
		}
		waitFor(t, time.Minute, "the session waiting for the late caller", func() bool { return timerStarted(ctx, t, c, id, "replies drain") })
		h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: api.TurnReplyUpdate,
			Args: []any{api.TurnReplyArgs{UpdateID: lateID}}, WaitForStage: client.WorkflowUpdateStageCompleted})
		if err == nil {
			err = h.Get(ctx, &a.reply)
		}
		a.err = err
	}
	if a.err != nil || a.reply != "Wrote a.txt." {
		t.Fatalf("the message's reply: %q, %v; want the turn's reply", a.reply, a.err)
	}
	if !late {
		if err := sess.End(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sess.Wait(ctx); err != nil {
		t.Fatalf("the session's end: %v", err)
	}
	runs, err := runsOf(ctx, c, id)
	if err != nil {
		t.Fatal(err)
	}
	return len(runs)
}

// recordChatTurnReply: a chat turn handed over in its approval wait; its
// caller follows it with turn_reply.
func recordChatTurnReply(t *testing.T, env *recordEnv, id string) []string {
	_, ref := env.stubs.add(t, id, writeThenReply()...)
	chatReplyAcrossRuns(t, env.s.c, ref, id, false)
	return nil
}

// recordLateTurnReply: the same turn, whose caller asks for the reply only
// once the session was told to end: the session waits for it.
func recordLateTurnReply(t *testing.T, env *recordEnv, id string) []string {
	_, ref := env.stubs.add(t, id, writeThenReply()...)
	chatReplyAcrossRuns(t, env.s.c, ref, id, true)
	return nil
}

// The scenario player follows the turns it starts, as every client does: a
// message whose busy turn is handed over to a later run gets its reply by
// turn_reply, so the session the player then ends completes without waiting
// out "replies drain" (5 minutes) for a caller that never comes. A player
// that took only the update's acceptance left the reply untaken, and the
// session stood at waiting_user after end_session (the cluster's fault test
// failed on it).
func TestPlayerFollowsAHandedOverTurn(t *testing.T) {
	s := startServerTB(t, "limit.historyCount.suggestContinueAsNew=5")
	s.startWorker(t, t.TempDir())
	sc := writeScenario(t, `{"name": "a busy turn handed over", "input": {"prompt": "Hi.", "todo": {"enabled": false}},
	  "model": [{"content": "Hello."},
	    {"tool_calls": [{"name": "list_files", "arguments": {}}]},
	    {"tool_calls": [{"name": "list_files", "arguments": {}}]},
	    {"tool_calls": [{"name": "list_files", "arguments": {}}]},
	    {"content": "Listed three times."}],
	  "user": [{"when": "waiting_user", "update": "send_message", "args": "List the files."}],
	  "expect": [".reply == \"Listed three times.\""]}`)
	id := "player-follows-turn"
	got := <-playAsync(t, s.c, sc, id, 2*time.Minute)
	evs := historyOf(t, s.c, id)
	t.Cleanup(func() {
		if t.Failed() {
			logHistory(t, evs)
		}
	})
	if got.err != nil {
		t.Fatalf("play: %v", got.err)
	}
	if got.out.Reply != "Listed three times." {
		t.Errorf("reply %q; want the handed-over turn's", got.out.Reply)
	}
	followed := 0
	for _, ev := range evs {
		if a := ev.GetWorkflowExecutionUpdateAcceptedEventAttributes(); a != nil && a.GetAcceptedRequest().GetInput().GetName() == api.TurnReplyUpdate {
			followed++
		}
	}
	if followed == 0 {
		t.Fatal("no turn_reply in the session's history: the message's turn was not handed over, the case was not played")
	}
}

// The typed client follows a handed-over turn under update ids no one can
// work out (issue 36: it asked under "<message's id>/reply-1", and an update
// that someone who read the history registered first under that id had its
// answer taken for the turn's reply). Here that someone registers a
// set_continuation under the old id as soon as the turn is handed over; the
// message's caller still gets the turn's reply.
func TestTurnReplyCannotBePreempted(t *testing.T) {
	stubs, s := handoverEnv(t)
	const id = "turn-reply-preempted"
	_, ref := stubs.add(t, id, writeThenReply()...)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sess, err := tfclient.New(s.c, tfclient.Options{}).Start(ctx, api.AgentInput{
		Model: ref, Todo: todoOff(), Approval: todo.ToolApproval{"write_file": todo.ApprovalRequired},
	}, tfclient.StartOptions{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	sent := sess.Send(ctx, "write a.txt")
	if err := sent.Accepted(ctx); err != nil {
		t.Fatal(err)
	}
	// The write's approval wait, handed over to a later run (the message's
	// update is answered that its turn goes on).
	awaitHandedOverApproval(ctx, t, s.c, sess, id)
	planted, err := s.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id, UpdateID: sent.UpdateID() + "/reply-1",
		UpdateName: api.SetContinuationUpdate, Args: []any{api.ContinuationArgs{Enabled: new(bool)}},
		WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil || planted.Get(ctx, nil) != nil {
		t.Fatalf("the planted update: %v", err)
	}

	type answer struct {
		reply string
		err   error
	}
	got := make(chan answer, 1)
	go func() {
		reply, err := sent.Reply(ctx)
		got <- answer{reply, err}
	}()
	// The caller asks for the reply (a turn_reply the run accepts), or has
	// taken the planted update's answer for it, before the write is
	// approved.
	var a *answer
	waitFor(t, time.Minute, "the caller following the turn", func() bool {
		select {
		case r := <-got:
			a = &r
			return true
		default:
		}
		for _, ev := range historyOf(t, s.c, id) {
			if u := ev.GetWorkflowExecutionUpdateAcceptedEventAttributes(); u != nil && u.GetAcceptedRequest().GetInput().GetName() == api.TurnReplyUpdate {
				return true
			}
		}
		return false
	})
	if a == nil {
		waitFor(t, time.Minute, "the approval taken", func() bool {
			st, err := sess.State(ctx)
			if err != nil || st.PendingApproval == nil {
				return false
			}
			_, err = sess.Approve(ctx, tfclient.AnswerTo(st, ""))
			return err == nil
		})
		r := <-got
		a = &r
	}
	if a.err != nil || a.reply != "Wrote a.txt." {
		t.Fatalf("the message's reply: %q, %v; want the turn's reply", a.reply, a.err)
	}
	if err := sess.End(ctx); err != nil {
		t.Fatal(err)
	}
}
