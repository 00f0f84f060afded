package testsuite

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	tfclient "github.com/todoflow/todoflow/client"
)

// recordBusyTurn: one chat turn of many steps (responses of four list_files
// calls) on the early server, with two messages signalled while it works:
// the run hands over between two steps of the turn, the messages queued
// behind it; the continuation ends the turn, whose caller the typed client
// follows (turn_reply), then answers both messages in order.
func recordBusyTurn(t *testing.T, env *recordEnv, id string) []string {
	var script []string
	for i := range 8 {
		var calls [][3]string
		for j := range 4 {
			calls = append(calls, [3]string{fmt.Sprintf("c%d_%d", i, j), "list_files", `{}`})
		}
		script = append(script, toolCalls(t, calls...))
	}
	script = append(script, assistantText("Listed them all."))
	stub, ref := env.stubs.add(t, id, script...)
	stub.setFinalText("Noted.")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := env.s.c
	sess, err := tfclient.New(c, tfclient.Options{}).Start(ctx, api.AgentInput{Model: ref, Todo: todoOff()}, tfclient.StartOptions{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	sent := sess.Send(ctx, "List the files, again and again.")
	// The messages come while the turn works, not before it.
	waitFor(t, time.Minute, "the turn's first model call", func() bool { return len(stub.requests()) >= 1 })
	for _, text := range []string{"Then tell me how many.", "And thanks."} {
		if err := c.SignalWorkflow(ctx, id, "", api.UserMessageSignal, text); err != nil {
			t.Fatal(err)
		}
	}
	reply, err := sent.Reply(ctx)
	if err != nil || reply != "Listed them all." {
		t.Fatalf("the busy turn's reply: %q, %v", reply, err)
	}
	waitFor(t, time.Minute, "both queued messages answered", func() bool {
		st, err := sess.State(ctx)
		return err == nil && st.Turns == 3 && st.Status == api.StatusWaitingUser
	})
	if err := sess.End(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.GetWorkflow(ctx, id, "").Get(ctx, nil); err != nil {
		t.Fatalf("session: %v", err)
	}
	return nil
}

// recordInterrupt: a chat turn whose model call keeps failing (the
// provider answers 503) is interrupted by its user: the call in flight and
// its retries are cancelled, the turn ends with the interrupted reply, and
// the next message gets its turn.
func recordInterrupt(t *testing.T, env *recordEnv, id string) []string {
	stub, ref := env.stubs.add(t, id)
	stub.setFinalText("Back again.")
	stub.failUntil(time.Now().Add(time.Hour), http.StatusServiceUnavailable, "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sess, err := tfclient.New(env.s.c, tfclient.Options{}).Start(ctx, api.AgentInput{Model: ref, Todo: todoOff()}, tfclient.StartOptions{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	sent := sess.Send(ctx, "Answer me.")
	waitFor(t, time.Minute, "the model call failing", func() bool { return len(stub.requests()) >= 2 })
	if _, err := sess.Interrupt(ctx); err != nil {
		t.Fatalf("interrupt: %v", err)
	}
	if reply, err := sent.Reply(ctx); err != nil || !strings.Contains(reply, "Interrupted") {
		t.Fatalf("the interrupted turn's reply: %q, %v", reply, err)
	}
	stub.failUntil(time.Time{}, 0, "")
	if reply, err := sess.Send(ctx, "Now?").Reply(ctx); err != nil || reply != "Back again." {
		t.Fatalf("the next turn's reply: %q, %v", reply, err)
	}
	if err := sess.End(ctx); err != nil {
		t.Fatal(err)
	}
	if err := env.s.c.GetWorkflow(ctx, id, "").Get(ctx, nil); err != nil {
		t.Fatalf("session: %v", err)
	}
	return nil
}
