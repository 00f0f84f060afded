package client_test

import (
	"context"
	"github.com/todoflow/todoflow/api"
	"testing"
	"time"

	"github.com/todoflow/todoflow/client"
)

// A finished subagent's answer is read from its run's result.
func TestSubagentReply(t *testing.T) {
	e := startEnv(t)
	e.worker(t)
	ref := e.script(t, "sub.json", `{"model": [
	  {"tool_calls": [{"name": "spawn_subagent", "arguments": {"agent_id": "coder", "task": "find the slow part"}}]},
	  {"content": "Asked the coder."}
	], "agents": {"coder": [{"content": "Found it: the cache."}]}}`)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := client.New(e.tc, client.Options{}).Start(ctx, api.AgentInput{Prompt: "why is it slow?", Model: ref}, client.StartOptions{ID: "client-sub"})
	if err != nil {
		t.Fatal(err)
	}
	var st api.State
	for st.Subagents["coder"].Status != api.StatusCompleted {
		if ctx.Err() != nil {
			t.Fatalf("the subagent did not complete: %+v", st.Subagents)
		}
		time.Sleep(100 * time.Millisecond)
		if st, err = s.State(ctx); err != nil {
			t.Fatal(err)
		}
	}
	reply, err := s.SubagentReply(ctx, st, "coder")
	if err != nil || reply != "Found it: the cache." {
		t.Errorf("SubagentReply = %q, %v; want the coder's answer", reply, err)
	}
	if _, err := s.SubagentReply(ctx, st, "nobody"); err == nil {
		t.Error("the reply of an agent not in the tree: no error")
	}
}
