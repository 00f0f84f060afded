package testsuite

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"github.com/todoflow/todoflow/worker/agentworker"
)

// The subagent scenarios 06a–06d in testdata/scenarios (played by
// TestScenarios) cover both orders of a child's step and the parent's
// dependency on it, a dependency between siblings, and a child that fails.
// The tests here cover what a scenario file cannot say.

// TestSubagentWithUnconfiguredModelFails: a subagent spawned with an
// OpenAI model on a worker that has no OpenAI configuration fails at its
// first model call (not retried: a missing configuration does not heal),
// and the parent's step that waits on it fails with a reason naming it and
// the missing setting, instead of waiting forever.
//
// Not parallel: t.Setenv, read by the in-process worker.
func TestSubagentWithUnconfiguredModelFails(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	s := startServer(t)
	// The operator lets models choose OpenAI models for subagents; the
	// worker has no OpenAI configuration.
	s.startWorkerWith(t, agentworker.Options{ScriptDir: "/", SubagentModels: []string{"openai:*"}})
	sc := scenarioVariant(t, "06d_subagent_fails.json", func(m map[string]any) {
		spawn := m["model"].([]any)[3].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)
		spawn["arguments"].(map[string]any)["model"] = "openai:nonexistent"
	})
	out, st := play(t, s.c, sc, 2*time.Minute)
	checkExpect(t, sc, out)
	// Not retried, by the server or by the workflow: the child's history
	// has one model call, which ended on its first attempt.
	if calls, retried := activityAttempts(t, s.c, out.WorkflowID+"/migrator", api.ModelCallActivity); calls != 1 || retried != 0 {
		t.Errorf("the child scheduled %d model calls, %d of them retried or timed out; want one, not retried", calls, retried)
	}
	if st.Plan == nil || len(st.Plan.Steps) != 3 {
		t.Fatalf("plan = %+v, want 3 steps", st.Plan)
	}
	if e := st.Plan.Steps[1].Error; !strings.Contains(e, "migrator") || !strings.Contains(e, "OPENAI_API_KEY") {
		t.Errorf("the dependent step's error %q does not name the child and the missing setting", e)
	}
	if got := st.Subagents["migrator"]; got.Status != api.StatusFailed || got.ModelCalls > 1 {
		t.Errorf("subagents.migrator = status %q after %d model calls, want failed at its first", got.Status, got.ModelCalls)
	}
}

// TestSubagentEdgeCases pins three bugs the end-to-end tests found, now
// fixed: colliding webhook keys of relayed events, a dependency added after
// its agent ended, and a sibling spawned after another had finished.
func TestSubagentEdgeCases(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.startWorker(t, t.TempDir())

	// workflows/tree_receive.go onEvents reports a child's event as the
	// child numbered it, under the parent's agent id: its Idempotency-Key
	// <workflow>/main/<n> is the key of the parent's own event n, and it
	// is not the event_id the state shows.
	t.Run("webhook keys of subagent events", func(t *testing.T) {
		t.Parallel()
		h := newHook(t, func(int) (int, string) { return 200, "" })
		sc := scenarioVariant(t, "06b_subagent_finishes_last.json", func(m map[string]any) {
			m["input"].(map[string]any)["reporters"] = []any{map[string]any{"type": "webhook", "config": map[string]any{"url": h.URL}}}
		})
		out, st := play(t, s.c, sc, 2*time.Minute)
		checkExpect(t, sc, out)
		reqs := h.requests()
		if len(reqs) != len(st.Events) {
			t.Fatalf("%d deliveries for %d events", len(reqs), len(st.Events))
		}
		seen := map[string]bool{}
		for i, ev := range st.Events {
			var body hookBody
			_ = json.Unmarshal(reqs[i].Body, &body)
			if seen[reqs[i].Key] {
				t.Errorf("delivery %d reuses Idempotency-Key %s: a receiver drops %s's %s", i+1, reqs[i].Key, body.Event.AgentID, body.Event.Type)
			}
			seen[reqs[i].Key] = true
			if !sameEvent(body.Event, ev) {
				t.Errorf("delivery %d carries event %d (%s %s), the state has %d (%s %s)", i+1,
					body.Event.EventID, body.Event.AgentID, body.Event.Type, ev.EventID, ev.AgentID, ev.Type)
			}
		}
	})

	// addDependentStep resolves a new dependency from the event log only;
	// an agent that already ended without completing the step is never
	// consulted (AgentEnded runs once, when the child ends), so the step
	// stays blocked for good and the plan can never complete.
	t.Run("dependency on a subagent that already failed", func(t *testing.T) {
		t.Parallel()
		sc := writeScenario(t, `{
  "input": {"prompt": "Delegate and check."},
  "model": [
    {"tool_calls": [{"name": "createPlan", "arguments": {"title": "Delegate", "steps": ["Delegate the work"]}}]},
    {"tool_calls": [{"name": "startPlan", "arguments": {}}]},
    {"tool_calls": [{"name": "spawn_subagent", "arguments": {"agent_id": "broken", "task": "Work.", "model": "script:/nonexistent/todoflow-no-such-scenario.json"}}]},
    {"delay_ms": 2000, "tool_calls": [{"name": "addDependentStep", "arguments": {"description": "Check the work",
      "depends_on": [{"agent_id": "broken", "step_id": "step_1"}]}}]},
    {"tool_calls": [{"name": "setStepStatus", "arguments": {"step_id": "step_1", "status": "completed", "result": "Delegated"}}]},
    {"content": "Waiting."}
  ],
  "user": `+approvePlan+`,
  "time_limit_s": 30,
  "expect": [
    ".run_status == \"completed\"",
    ".state.subagents.broken.status == \"failed\"",
    ".state.plan.steps[1].status == \"failed\"",
    ".state.plan.steps[1].error | test(\"broken\")"
  ]
}`)
		out, _ := play(t, s.c, sc, 2*time.Minute)
		checkExpect(t, sc, out)
	})

	// The parent relays an agent's events (and its end) only to the
	// children running at that moment: a subagent spawned later never
	// learns of them, waits blocked on a sibling that is long gone, and the
	// root, which waits for its children, never completes.
	t.Run("sibling spawned after the producer finished", func(t *testing.T) {
		t.Parallel()
		sc := writeScenario(t, `{
  "input": {"prompt": "Produce, then consume."},
  "model": [
    {"tool_calls": [{"name": "spawn_subagent", "arguments": {"agent_id": "producer", "task": "Produce the data."}}]},
    {"delay_ms": 2000, "tool_calls": [{"name": "spawn_subagent", "arguments": {"agent_id": "consumer", "task": "Use the producer's data."}}]},
    {"content": "Both subagents were started."}
  ],
  "agents": {
    "producer": [
      {"tool_calls": [{"name": "createPlan", "arguments": {"title": "Produce", "steps": ["Produce the rows"]}}]},
      {"tool_calls": [{"name": "startPlan", "arguments": {}}]},
      {"tool_calls": [{"name": "completeStepWithOutput", "arguments": {"step_id": "step_1", "output": {"rows": 42}, "result": "42 rows produced"}}]},
      {"tool_calls": [{"name": "completePlan", "arguments": {"status": "completed"}}]},
      {"content": "Produced."}
    ],
    "consumer": [
      {"tool_calls": [{"name": "createPlan", "arguments": {"title": "Consume", "steps": ["Prepare the importer"]}}]},
      {"tool_calls": [{"name": "startPlan", "arguments": {}}]},
      {"tool_calls": [{"name": "addDependentStep", "arguments": {"description": "Import the producer's rows",
        "depends_on": [{"agent_id": "producer", "step_id": "step_1"}]}}]},
      {"tool_calls": [{"name": "setStepStatus", "arguments": {"step_id": "step_1", "status": "completed", "result": "Importer ready"}}]},
      {"content": "Waiting for the producer."},
      {"tool_calls": [{"name": "setStepStatus", "arguments": {"step_id": "step_2", "status": "completed", "result": "Imported 42 rows"}}]},
      {"tool_calls": [{"name": "completePlan", "arguments": {"status": "completed"}}]},
      {"content": "Consumed."}
    ]
  },
  "time_limit_s": 30,
  "expect": [
    ".run_status == \"completed\"",
    ".state.subagents.consumer.status == \"completed\"",
    ".state.subagents.consumer.plan.steps[1].received_outputs[\"producer:step_1\"].rows == 42"
  ]
}`)
		out, _ := play(t, s.c, sc, 2*time.Minute)
		checkExpect(t, sc, out)
	})
}
