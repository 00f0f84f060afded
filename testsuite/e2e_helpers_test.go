package testsuite

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/client"

	"github.com/todoflow/todoflow/scenario"
)

// writeScenario writes a scenario file (JSON text) into a temporary folder
// and loads it, so that the scripted model of the worker reads it by its
// absolute path. Tests build scenarios this way when a part of them (a URL,
// a delay) is only known at run time.
func writeScenario(t *testing.T, text string) *scenario.Scenario {
	t.Helper()
	path := filepath.Join(t.TempDir(), "scenario.json")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Load(path)
	if err != nil {
		t.Fatalf("scenario: %v\n%s", err, text)
	}
	return sc
}

// mustJSON is v as JSON text, for building scenarios.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// play plays sc to its end on c (within limit) and fails the test when it
// could not be played; it returns the output and its state, decoded.
func play(t *testing.T, c client.Client, sc *scenario.Scenario, limit time.Duration) (*scenario.Output, api.State) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	out, err := scenario.Play(ctx, c, sc, scenario.Options{Progress: testWriter{t}})
	if err != nil {
		t.Fatalf("play: %v", err)
	}
	return out, decodeState(t, out)
}

// played is the outcome of playAsync.
type played struct {
	out *scenario.Output
	err error
}

// playAsync plays sc as workflow id in the background, for tests that act
// on the run (or its worker) meanwhile.
func playAsync(t *testing.T, c client.Client, sc *scenario.Scenario, id string, limit time.Duration) <-chan played {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	ch := make(chan played, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		out, err := scenario.Play(ctx, c, sc, scenario.Options{WorkflowID: id, Progress: testWriter{t}})
		ch <- played{out, err}
	}()
	// A test that fails early must not leave the player logging after it.
	t.Cleanup(func() { cancel(); <-done })
	return ch
}

func decodeState(t *testing.T, out *scenario.Output) api.State {
	t.Helper()
	var st api.State
	if err := json.Unmarshal(out.State, &st); err != nil {
		t.Fatalf("decode state: %v\n%s", err, out.State)
	}
	return st
}

// queryState reads a run's state query; ok is false while it cannot be read.
func queryState(ctx context.Context, c client.Client, workflowID string) (api.State, bool) {
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	v, err := c.QueryWorkflow(qctx, workflowID, "", api.StateQuery)
	if err != nil {
		return api.State{}, false
	}
	var st api.State
	if v.Get(&st) != nil {
		return api.State{}, false
	}
	return st, true
}

// waitFor polls cond every 50 ms until it holds, and fails the test when it
// does not within limit; what names the awaited condition.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// plan05Model is the model script of testdata/scenarios/05_plan_with_approval.json: a plan that
// waits for approval, has a refused and a failed step and ends failed.
const plan05Model = `[
  {"tool_calls": [{"name": "createPlan", "arguments": {"title": "Refactor auth module", "steps": [
    "Review current auth implementation",
    "Extract token validation to separate module",
    "Update imports in dependent files"]}}]},
  {"tool_calls": [{"name": "startPlan", "arguments": {"message": "Ready to proceed?"}}]},
  {"tool_calls": [{"name": "setStepStatus", "arguments": {"step_id": "step_1", "status": "completed", "result": "Found auth.py, tokens.py, session.py"}}]},
  {"tool_calls": [{"name": "setStepStatus", "arguments": {"step_id": "step_2", "status": "completed", "result": "Unable to extract: circular imports"}}]},
  {"tool_calls": [{"name": "setStepStatus", "arguments": {"step_id": "step_2", "status": "failed", "error": "Circular imports between tokens.py and session.py"}}]},
  {"tool_calls": [{"name": "setStepStatus", "arguments": {"step_id": "step_3", "status": "skipped", "result": "Nothing was moved"}}]},
  {"tool_calls": [{"name": "completePlan", "arguments": {"status": "failed", "summary": "Blocked by circular imports"}}]},
  {"content": "The refactor is blocked by circular imports; details in the plan."}
]`

// approvePlan is the user action list that approves a plan.
const approvePlan = `[{"when": "awaiting_approval", "update": "approve_plan", "args": {"approved": true}}]`
