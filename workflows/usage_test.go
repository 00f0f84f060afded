package workflows

import (
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"github.com/todoflow/todoflow/model"
)

// state.tree_usage adds the tokens of every agent of the subtree: a
// grandchild's reach the root through its parent's reports.
func TestTreeUsage(t *testing.T) {
	used := func(r model.Response, prompt, completion int64) model.Response {
		r.Usage = model.Usage{PromptTokens: prompt, CompletionTokens: completion}
		return r
	}
	env := newTreeEnv()
	scriptTree(env, map[string][]model.Response{
		"main":  {used(calls(spawnCall("lead", "lead it", quiet)), 100, 10), used(say("delegated"), 100, 10)},
		"lead":  {used(calls(spawnCall("grand", "do it", quiet)), 20, 2), used(say("lead done"), 20, 2)},
		"grand": {used(say("grand done"), 3, 1)},
	})
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, time.Hour)
	env.ExecuteWorkflow(AgentWorkflow, rootInput("delegate"))
	completed(t, env)
	st := queryState(t, env)
	if want := (api.Usage{PromptTokens: 200, CompletionTokens: 20, TotalTokens: 220}); st.Usage != want {
		t.Errorf("usage = %+v, want %+v", st.Usage, want)
	}
	if want := (api.Usage{PromptTokens: 243, CompletionTokens: 25, TotalTokens: 268}); st.TreeUsage != want {
		t.Errorf("tree_usage = %+v, want %+v (the root's, the lead's and the grandchild's)", st.TreeUsage, want)
	}
	if lead := st.Subagents["lead"]; lead.TreeUsage.TotalTokens != 48 {
		t.Errorf("the lead's tree_usage = %+v, want 48 tokens in all", lead.TreeUsage)
	}
}

// state.model is the input's model, or, when the input names none, the
// model the worker reports answering with: a client prices the usage of a
// session on the worker's default by it.
func TestStateModel(t *testing.T) {
	served := func(r model.Response) model.Response { r.Model = "gpt-4o-mini"; return r }
	tests := []struct {
		name, input, want string
	}{
		{"the worker's default", "", "gpt-4o-mini"},
		{"one the input names", "openai:gpt-4o", "openai:gpt-4o"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTreeEnv()
			scriptTree(env, map[string][]model.Response{"main": {served(say("hello"))}})
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, time.Hour)
			in := rootInput("hi")
			in.Model = tt.input
			env.ExecuteWorkflow(AgentWorkflow, in)
			completed(t, env)
			if got := queryState(t, env).Model; got != tt.want {
				t.Errorf("state.model = %q, want %q", got, tt.want)
			}
		})
	}
}
