package client_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/todo"
)

// Rewind takes a session back to just before a turn: its list, its turns
// and its transcript are as they were then, the messages of the turns
// after are not taken in again, and the session goes on from there.
func TestRewind(t *testing.T) {
	e := startEnv(t)
	e.worker(t)
	model := e.script(t, "rewind.json", `{"model": [
	  {"tool_calls": [{"name": "write_todos", "arguments": {"todos": [{"content": "One", "status": "in_progress"}]}}]},
	  {"content": "turn one"},
	  {"tool_calls": [{"name": "write_todos", "arguments": {"todos": [{"content": "One", "status": "completed"}, {"content": "Two", "status": "in_progress"}]}}]},
	  {"content": "turn two"},
	  {"content": "turn three"},
	  {"content": "turn two again"}
	]}`)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := client.New(e.tc, client.Options{})
	zero, off := 0, false // no guard: one model call per scripted answer
	s, err := c.Start(ctx, api.AgentInput{Model: model, IdleTimeoutS: 600,
		Todo: todo.Config{FinalizationMaxCorrections: &zero, Continuation: &off}}, client.StartOptions{ID: "rewind-e2e"})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"turn one", "turn two", "turn three"} {
		if reply, err := s.Send(ctx, "message "+string(rune('1'+i))).Reply(ctx); err != nil || reply != want {
			t.Fatalf("turn %d: %q, %v", i+1, reply, err)
		}
	}
	if _, err := s.Rewind(ctx, 5); err == nil || !strings.Contains(err.Error(), "no turn 5") {
		t.Errorf("rewind to a turn that did not happen: %v", err)
	}
	if _, err := s.Rewind(ctx, 2); err != nil {
		t.Fatal(err)
	}
	var st api.State
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if st, err = s.State(ctx); err == nil && st.Status == api.StatusWaitingUser {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session is not back after turn 1: %+v, %v", st, err)
		}
	}
	if st.Turns != 1 || len(st.Todos) != 1 || st.Todos[0].Content != "One" || st.Todos[0].Status != "in_progress" {
		t.Errorf("after the rewind: %d turns, todos %+v; want the state after turn 1", st.Turns, st.Todos)
	}
	msgs, err := s.Messages(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if strings.Contains(m.Content, "turn two") || m.Content == "message 2" {
			t.Errorf("the transcript still holds %q after the rewind", m.Content)
		}
	}
	// The session goes on from turn 1; the scripted model answers its
	// calls by number, so the next one gets the next response.
	if reply, err := s.Send(ctx, "message 2, again").Reply(ctx); err != nil || reply == "" {
		t.Errorf("the turn after the rewind: %q, %v", reply, err)
	}
}
