package testsuite

import (
	"context"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/client"

	"github.com/todoflow/todoflow/todo"
	"github.com/todoflow/todoflow/worker/agentworker"
	"github.com/todoflow/todoflow/worker/codec"
)

// TestEncryptionSwitchBetweenTurns: a session runs its first turn on a
// worker without TODOFLOW_PAYLOAD_KEY; that worker stops, and one with the
// key takes the session's next message, as when an operator turns
// encryption on with a rolling restart.
//
// The issue found that the next turn never runs: the encrypted worker
// replays the first turn with the TodoCurrent search attribute left empty
// (workflows/agent.go, publish), so where the first turn upserted because
// only the in-progress item changed, the replay finds nothing changed and
// skips that upsert: a non-determinism error, and every workflow task of
// the session fails from then on.
//
// The first turn therefore changes its list twice, the second time only in
// the in-progress item (the model re-words it once it knows the file's
// name), each model call taking 1.5 s so that neither change is held back
// by the once-a-second limit on upserts of a busy run (publishEvery). An
// in-progress item alone is not enough: with the second write_todos the same
// as the first, the switch passes on the code of the issue.
//
// The goal: the second turn completes on the encrypted worker (the update
// returns its scripted reply), and the history has no workflow task that
// failed with a non-determinism cause. Logged: the replies, the workflow
// task failures, TodoCurrent at the end.
//
// Both workers run in this process: the key reaches the second one through
// its client's data converter, given again as agentworker.Options'
// DataConverter (its activities read the history with it), and
// agentworker.Options.Encrypted, not the environment.
func TestEncryptionSwitchBetweenTurns(t *testing.T) {
	const id = "codec-switch-e2e"
	todos := func(items ...string) map[string]any {
		var list []map[string]string
		for i := 0; i < len(items); i += 2 {
			list = append(list, map[string]string{"content": items[i], "status": items[i+1]})
		}
		return map[string]any{"todos": list}
	}
	stub := newModelStub(t,
		// Turn 1, on the worker without the key.
		toolCall("t1", "write_todos", todos("Read the config", "in_progress", "Write the notes", "pending")),
		toolCall("t2", "write_todos", todos("Read config.yaml", "in_progress", "Write the notes", "pending")),
		assistantText("turn 1: reading config.yaml"),
		// Turn 2, on the worker with the key.
		toolCall("t3", "write_todos", todos("Read config.yaml", "completed", "Write the notes", "in_progress")),
		assistantText("turn 2: writing the notes"),
	)
	proxy := newStubProxy(t, stub, func(body map[string]any) {
		if tools, _ := body["tools"].([]any); len(tools) > 0 {
			time.Sleep(1500 * time.Millisecond)
		}
	})
	t.Setenv("OPENAI_BASE_URL", proxy.baseURL())
	t.Setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
	t.Setenv(codec.EnvKey, "") // the first worker must not seal
	t.Setenv(codec.EnvOldKeys, "")
	s := startServer(t)
	stateDir := t.TempDir()
	stopPlain := s.startWorker(t, stateDir)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	zero, off := 0, false
	run, err := s.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: api.TaskQueue}, api.WorkflowName,
		api.AgentInput{Model: "openai:test-model", Todo: todo.Config{FinalizationMaxCorrections: &zero, Continuation: &off}})
	if err != nil {
		t.Fatal(err)
	}
	first, err := sendMessage(ctx, s.c, id, "Read the config, then write the notes.")
	if err != nil || first != "turn 1: reading config.yaml" {
		t.Fatalf("turn 1 on the worker without the key: reply %q, %v", first, err)
	}
	if st, ok := queryState(ctx, s.c, id); !ok || len(st.Todos) != 2 || st.Todos[0].Status != todo.InProgress {
		t.Fatalf("after turn 1 the list is %+v; want its first item in progress", st.Todos)
	}
	stopPlain()

	// The worker with the key, and a client of the test that can read what
	// it seals.
	sealer, err := codec.New([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := client.Dial(client.Options{HostPort: s.srv.Address(), Namespace: s.srv.Namespace(), Logger: quiet{},
		DataConverter: sealer.DataConverter(), FailureConverter: sealer.FailureConverter()})
	if err != nil {
		t.Fatal(err)
	}
	defer sealed.Close()
	w, err := agentworker.New(sealed, agentworker.Options{StateDir: stateDir, Encrypted: true, DataConverter: sealer.DataConverter()})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	// The second turn: its reply, or the first non-determinism failure in
	// history, whichever comes first (today's code fails every workflow
	// task from then on, so the update would only time out).
	type answer struct {
		reply string
		err   error
	}
	replied := make(chan answer, 1)
	tctx, tcancel := context.WithTimeout(ctx, 90*time.Second)
	defer tcancel()
	go func() {
		r, err := sendMessage(tctx, sealed, id, "Go on.")
		replied <- answer{r, err}
	}()
	began := time.Now()
	var second answer
	var h historyFigures
wait:
	for {
		select {
		case second = <-replied:
			break wait
		case <-time.After(time.Second):
			if h = readHistory(t, sealed, id, sealer.FailureConverter()); len(h.nondeterminism) > 0 {
				tcancel()
				second = <-replied
				break wait
			}
		}
	}
	h = readHistory(t, sealed, id, sealer.FailureConverter())
	desc, derr := sealed.DescribeWorkflow(ctx, id, "")
	current := "(unknown)"
	if derr == nil {
		if v, ok := desc.TypedSearchAttributes.GetKeyword(api.TodoCurrentKey); ok {
			current = v
		}
	}
	t.Logf("turn 1 (no key) replied %q; turn 2 (key) replied %q, %v, after %.1f s; %d workflow task failures, %d of them non-determinism %q; TodoCurrent %q",
		first, second.reply, second.err, time.Since(began).Seconds(), h.wftFailures, len(h.nondeterminism), h.nondeterminism, current)

	if second.err != nil || second.reply != "turn 2: writing the notes" {
		t.Errorf("turn 2 on the worker with the key: reply %q, %v; want the scripted reply", second.reply, second.err)
	}
	if len(h.nondeterminism) > 0 {
		t.Errorf("the worker with the key failed %d workflow tasks with a non-determinism error; the first: %s", len(h.nondeterminism), h.nondeterminism[0])
	}
	if second.err != nil {
		return // the session is stuck: ending it would wait for nothing
	}
	if st, ok := queryState(ctx, sealed, id); !ok || len(st.Todos) != 2 || st.Todos[1].Status != todo.InProgress {
		t.Errorf("after turn 2 the list is %+v; want its second item in progress", st.Todos)
	}
	_ = sealed.SignalWorkflow(ctx, id, "", api.EndSessionSignal, nil)
	if err := sealed.GetWorkflow(ctx, id, run.GetRunID()).Get(ctx, nil); err != nil {
		t.Errorf("run: %v", err)
	}
}
