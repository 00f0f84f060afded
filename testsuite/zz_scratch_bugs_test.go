package testsuite

import (
	"context"
	"github.com/todoflow/todoflow/testsuite/scenario"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"
)

func TestScratchBugs(t *testing.T) {
	if os.Getenv("TODOFLOW_SCRATCH2") == "" {
		t.Skip()
	}
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	t.Run("A webhook with subagent", func(t *testing.T) {
		t.Parallel()
		h := newHook(t, func(int) (int, string) { return 200, "" })
		data, _ := os.ReadFile("testdata/scenarios/06b_subagent_finishes_last.json")
		var m map[string]any
		json.Unmarshal(data, &m)
		m["input"].(map[string]any)["reporters"] = []any{map[string]any{"type": "webhook", "config": map[string]any{"url": h.URL}}}
		sc := writeScenario(t, mustJSON(t, m))
		out, st := play(t, s.c, sc, time.Minute)
		t.Logf("run %s reporters %+v events %d", out.RunStatus, st.Reporters, len(st.Events))
		for i, r := range h.requests() {
			var b hookBody
			json.Unmarshal(r.Body, &b)
			t.Logf("req %d key %s body agent %s event %d %s %s", i, r.Key, b.AgentID, b.Event.EventID, b.Event.AgentID, b.Event.Type)
		}
		for _, ev := range st.Events {
			t.Logf("state event %d %s %s %s", ev.EventID, ev.AgentID, ev.Type, ev.StepID)
		}
		_ = http.StatusOK
	})
	t.Run("B dependency on an ended child", func(t *testing.T) {
		t.Parallel()
		sc := writeScenario(t, `{"input": {"prompt": "x"}, "model": [
 {"tool_calls": [{"name": "createPlan", "arguments": {"title": "T", "steps": ["Delegate"]}}]},
 {"tool_calls": [{"name": "startPlan", "arguments": {}}]},
 {"tool_calls": [{"name": "spawn_subagent", "arguments": {"agent_id": "broken", "task": "t", "model": "script:/nonexistent/x.json"}}]},
 {"delay_ms": 2000, "tool_calls": [{"name": "addDependentStep", "arguments": {"description": "Check", "depends_on": [{"agent_id": "broken", "step_id": "step_1"}]}}]},
 {"tool_calls": [{"name": "setStepStatus", "arguments": {"step_id": "step_1", "status": "completed", "result": "Delegated"}}]},
 {"content": "Waiting."}
], "user": `+approvePlan+`, "time_limit_s": 20}`)
		out, st := play(t, s.c, sc, time.Minute)
		t.Logf("run %s status %s plan %s", out.RunStatus, st.Status, mustJSON(t, st.Plan))
		t.Logf("sub %+v", st.Subagents["broken"].Status)
	})
	t.Run("C sibling spawned after the producer ended", func(t *testing.T) {
		t.Parallel()
		sc := writeScenario(t, `{"input": {"prompt": "x"}, "model": [
 {"tool_calls": [{"name": "spawn_subagent", "arguments": {"agent_id": "producer", "task": "p"}}]},
 {"delay_ms": 2000, "tool_calls": [{"name": "spawn_subagent", "arguments": {"agent_id": "consumer", "task": "c"}}]},
 {"content": "Both at work."}
], "agents": {
 "producer": [
  {"tool_calls": [{"name": "createPlan", "arguments": {"title": "P", "steps": ["Produce"]}}]},
  {"tool_calls": [{"name": "startPlan", "arguments": {}}]},
  {"tool_calls": [{"name": "completeStepWithOutput", "arguments": {"step_id": "step_1", "output": {"rows": 1}, "result": "done"}}]},
  {"tool_calls": [{"name": "completePlan", "arguments": {"status": "completed"}}]},
  {"content": "Produced."}],
 "consumer": [
  {"tool_calls": [{"name": "createPlan", "arguments": {"title": "C", "steps": ["Prepare"]}}]},
  {"tool_calls": [{"name": "startPlan", "arguments": {}}]},
  {"tool_calls": [{"name": "addDependentStep", "arguments": {"description": "Use", "depends_on": [{"agent_id": "producer", "step_id": "step_1"}]}}]},
  {"tool_calls": [{"name": "setStepStatus", "arguments": {"step_id": "step_1", "status": "completed", "result": "ok"}}]},
  {"content": "Waiting."},
  {"tool_calls": [{"name": "setStepStatus", "arguments": {"step_id": "step_2", "status": "completed", "result": "used"}}]},
  {"tool_calls": [{"name": "completePlan", "arguments": {"status": "completed"}}]},
  {"content": "Consumed."}]
}, "time_limit_s": 20}`)
		out, err := playErr(t, s, sc)
		fmt.Println("C:", err)
		if out != nil {
			st := decodeState(t, out)
			t.Logf("run %s status %s consumer %s plan %s", out.RunStatus, st.Status, st.Subagents["consumer"].Status, mustJSON(t, st.Subagents["consumer"].Plan))
		}
	})
}

func playErr(t *testing.T, s *server, sc *scenario.Scenario) (*scenario.Output, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return scenario.Play(ctx, s.c, sc, scenario.Options{Progress: testWriter{t}})
}
