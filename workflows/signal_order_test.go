package workflows

import (
	"testing"
	"time"

	"github.com/todoflow/todoflow/model"
)

// A resume that reaches the root in the same workflow task as the brief in
// which its subagent paused is handed on, not dropped. Both come in one task
// when the task that took in the brief is lost and run again (the server
// was killed before it stored the task's completion, while the player had
// already seen the pause, from the worker's cache, and answered it): taken
// in the resume first, the root found no wait, dropped the resume, and then
// showed the pause for good. The load test (TestFaultsUnderLoad) found it.
func TestTreeResumeInTheTaskOfThePause(t *testing.T) {
	env := newTreeEnv()
	scriptTree(env, map[string][]model.Response{
		"main": {calls(spawnCall("kid", "deploy", quiet)), say("kid deploys")},
		"kid":  {say("deployed")}, // answered two hours in
	}, late{"kid", 1, 2 * time.Hour})
	// The kid's brief of its pause, as it sends it, and the human's resume,
	// in one workflow task.
	pause := Wait{AgentID: "kid", Kind: WaitPaused, Reason: "The deploy key is missing."}
	brief := TaskEvent{From: "kid", Brief: &Brief{Status: StatusPaused, Paused: true, PauseReason: pause.Reason, Waiting: []Wait{pause}}}
	var after State
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflowSkippingWorkflowTask(TaskEventSignal, brief)
		env.SignalWorkflow(ResumeSignal, "the key is in place")
	}, 30*time.Minute)
	env.RegisterDelayedCallback(func() { after = queryState(t, env) }, time.Hour)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(EndSessionSignal, nil) }, 3*time.Hour)
	env.ExecuteWorkflow(WorkflowName, rootInput("go"))
	completed(t, env)

	if after.Status == StatusPaused || len(after.Waiting) != 0 {
		t.Errorf("after the resume: status %s, waiting %s; want the kid's pause answered", after.Status, dump(after.Waiting))
	}
}
