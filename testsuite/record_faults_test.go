package testsuite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoflow/todoflow/activities/report"
	"github.com/todoflow/todoflow/api"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/todoflow/todoflow/scenario"
	"github.com/todoflow/todoflow/worker/agentworker"
)

// driven are the recorded cases that a scenario file cannot script: faults
// of the model's server, a workspace host that is gone, a reporter still
// delivering when the run ends, a session left idle (the scenario player
// ends a session that waits with no action left). Each plays its run, as
// the workflow id it is given, on the worker of TestRecordHistories, whose
// openai: models are scripted stubs (stubRouter), and checks that what it
// drives happened as meant. Each takes a few seconds: the waits are the
// run's own settings, lowered through its input.
var driven = []recordedCase{
	{"20_model_retry", recordModelRetry},
	{"21_failed_turn_retry", recordFailedTurn},
	{"22_context_overflow", recordContextOverflow},
	{"23_host_gone_and_back", recordHostGone},
	{"24_reporter_drain", recordReporterDrain},
	{"25_idle_timeout", recordIdleTimeout},
	{"26_compact_context_overflow", recordCompactOverflow},
	{"27_child_adopted", recordChildAdopted},
	// Scenario 15 on the early server: its root hands over in its wait on
	// the subagent, which the server ends at its deadline, silently.
	{"28_adopted_child_timeout", playScenarioFile("15_subagent_timeout")},
	{"29_chat_turn_reply", recordChatTurnReply},
	{"30_late_turn_reply", recordLateTurnReply},
	{"32_busy_turn_handover", recordBusyTurn},
	{"33_interrupt", recordInterrupt},
	{"34_cancel_adopted_child", recordCancelAdoptedChild},
	{"35_cancel_root_with_children", recordCancelRootWithChildren},
}

// recordEnv is what the recorded cases run on: a server that suggests
// continue-as-new early (recordDynamicConfig), one worker, and the model
// stubs of the driven cases behind that worker's OPENAI_BASE_URL.
type recordEnv struct {
	s     *server
	stubs *stubRouter
}

// newRecordEnv starts the server (with recordDynamicConfig unless late)
// and a worker whose openai: models are stubs's. Not for a parallel test: the worker reads its
// OpenAI settings from the environment.
func newRecordEnv(t *testing.T, stubs *stubRouter, late bool) *recordEnv {
	t.Setenv("OPENAI_BASE_URL", stubs.baseURL())
	t.Setenv("OPENAI_API_KEY", "sk-recorded-not-a-secret")
	config := recordDynamicConfig
	if late {
		config = nil
	}
	s := startServerTB(t, config...)
	s.startWorker(t, t.TempDir())
	return &recordEnv{s: s, stubs: stubs}
}

// play plays sc as workflow id to its end, which must be a completed run.
func (env *recordEnv) play(t *testing.T, sc *scenario.Scenario, id string) *scenario.Output {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := scenario.Play(ctx, env.s.c, sc, scenario.Options{WorkflowID: id})
	if err != nil {
		t.Fatalf("play: %v", err)
	}
	if out.RunStatus != "completed" {
		t.Fatalf("run %s: %s", out.RunStatus, out.Error)
	}
	return out
}

// firstTurn starts a session with in as workflow id, and returns once its
// first turn has ended.
func (env *recordEnv) firstTurn(ctx context.Context, t *testing.T, in api.AgentInput, id string) client.WorkflowRun {
	t.Helper()
	run, err := env.s.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: api.TaskQueue}, api.WorkflowName, in)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the end of the first turn", func() bool {
		st, ok := queryState(ctx, env.s.c, id)
		return ok && st.Turns == 1 && st.Status == api.StatusWaitingUser
	})
	return run
}

// inputOf reads an AgentInput as a scenario's input is read (unknown fields
// refused, the input validated).
func inputOf(t *testing.T, text string) api.AgentInput {
	t.Helper()
	sc, err := scenario.Parse([]byte(`{"input": ` + text + `}`))
	if err != nil {
		t.Fatalf("input %s: %v", text, err)
	}
	return sc.Input
}

// stubRouter serves many modelStubs behind one base URL, each the model its
// requests name: the worker reads OPENAI_BASE_URL once, and each driven
// case scripts a stub of its own.
type stubRouter struct {
	srv   *httptest.Server
	mu    sync.Mutex
	stubs map[string]*modelStub
}

func newStubRouter(t testing.TB) *stubRouter {
	r := &stubRouter{stubs: map[string]*modelStub{}}
	r.srv = httptest.NewServer(r)
	t.Cleanup(r.srv.Close)
	return r
}

func (r *stubRouter) baseURL() string { return r.srv.URL + "/v1" }

// add serves a stub with answers (see modelStub.answers) as the model name,
// and returns it with the reference a run's input names it by.
func (r *stubRouter) add(t testing.TB, name string, answers ...string) (*modelStub, string) {
	s := newModelStub(t, answers...)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stubs[name] = s
	return s, "openai:" + name
}

func (r *stubRouter) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	data, err := io.ReadAll(req.Body)
	var body struct {
		Model string `json:"model"`
	}
	if err == nil {
		err = json.Unmarshal(data, &body)
	}
	r.mu.Lock()
	s := r.stubs[body.Model]
	r.mu.Unlock()
	if err != nil || s == nil {
		writeOpenAIError(w, http.StatusNotFound, nil, fmt.Sprintf("stubRouter: no stub serves model %q", body.Model), "invalid_request_error", "model_not_found")
		return
	}
	req.Body = io.NopCloser(bytes.NewReader(data))
	s.ServeHTTP(w, req)
}

// recordModelRetry: the provider answers the turn's first call with 429
// twice (a rate limit without Retry-After); the server retries the call
// after its backoff (1 s, then 2 s), and the third attempt goes through.
func recordModelRetry(t *testing.T, env *recordEnv, id string) []string {
	const reply = "Answered once the rate limit passed."
	stub, ref := env.stubs.add(t, id,
		toolCall("w", "write_todos", map[string]any{"todos": []map[string]string{{"content": "Answer the user", "status": "completed"}}}),
		assistantText(reply))
	stub.failNext(2, http.StatusTooManyRequests, "")
	in := inputOf(t, `{"prompt": "Answer me."}`)
	in.Model = ref
	out := env.play(t, &scenario.Scenario{Name: "model retries with backoff", Input: in}, id)
	if out.Reply != reply {
		t.Errorf("reply %q, want %q", out.Reply, reply)
	}
	var statuses []int
	for _, r := range stub.requests() {
		statuses = append(statuses, r.status)
	}
	if fmt.Sprint(statuses) != "[429 429 200 200]" {
		t.Errorf("the stub answered %v, want [429 429 200 200]", statuses)
	}
	return nil
}

// recordFailedTurn: a rejected key ends the turn; retry_turn runs it again.
func recordFailedTurn(t *testing.T, env *recordEnv, id string) []string {
	stub, ref := env.stubs.add(t, id)
	rejectThenRetry(t, env.s.c, stub, ref, id)
	return nil
}

// recordContextOverflow: the provider refuses requests past a size as too
// long for its context; the run learns the limit, compacts and goes on.
func recordContextOverflow(t *testing.T, env *recordEnv, id string) []string {
	stub, ref := env.stubs.add(t, id, overflowAnswers()...)
	playOverflow(t, env.s.c, stub, ref, id)
	return nil
}

// recordHostGone: a session pinned to a host queue that no worker polls.
// Its first tool call is refused by the worker it is handed to, which is not
// the host, then taken by no worker within host_wait_s: the model reads that
// the host is not answering. Then a worker polls that queue, and the next
// message's tool call runs there.
func recordHostGone(t *testing.T, env *recordEnv, id string) []string {
	write := func(n int) string {
		return toolCall(fmt.Sprintf("w%d", n), "write_file", map[string]string{"path": "notes.txt", "content": fmt.Sprintf("take %d", n)})
	}
	const gone, back = "The workspace's host is not answering.", "Written."
	_, ref := env.stubs.add(t, id, write(1), assistantText(gone), write(2), assistantText(back))
	host := id + "-host"
	in := inputOf(t, fmt.Sprintf(`{"prompt": "Write notes.txt.", "workspace_host": %q, "host_wait_s": 1}`, host))
	in.Model = ref
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := env.s.c
	run := env.firstTurn(ctx, t, in, id)
	if tools := toolMessages(t, c, id); len(tools) == 0 || !tools[len(tools)-1].IsError || !strings.Contains(tools[len(tools)-1].Content, "is not answering") {
		t.Fatalf("tool messages with the host gone: %+v", tools)
	}
	// The host comes back: a worker that polls its queue (and, for its
	// workflows, a queue no run uses, so that it takes nothing else).
	w, err := agentworker.New(c, agentworker.Options{TaskQueue: id + "-unused", StateDir: t.TempDir(), HostQueue: host})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if reply := send(ctx, t, c, id, "Try again."); reply != back {
		t.Errorf("reply with the host back = %q, want %q", reply, back)
	}
	if tools := toolMessages(t, c, id); tools[len(tools)-1].IsError {
		t.Errorf("the tool call with the host back: %q", tools[len(tools)-1].Content)
	}
	if err := c.SignalWorkflow(ctx, id, "", api.EndSessionSignal, nil); err != nil {
		t.Fatal(err)
	}
	if err := run.Get(ctx, nil); err != nil {
		t.Fatalf("run: %v", err)
	}
	return nil
}

// recordReporterDrain: a session ends (end_session) while its webhook
// reporter is still delivering: the run waits for the delivery (the
// "reporters drain" timer) before it completes. The hook holds every
// delivery until that wait is in the run's history.
func recordReporterDrain(t *testing.T, env *recordEnv, id string) []string {
	t.Setenv(report.WebhookAllowNetsEnv, hookNets)
	held := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(held) }) }
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-held:
			w.WriteHeader(http.StatusNoContent)
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hook.Close)
	t.Cleanup(release) // first: Close waits for the requests it holds
	_, ref := env.stubs.add(t, id,
		toolCall("p", "createPlan", map[string]any{"title": "Ship", "steps": []string{"Build", "Release"}}),
		assistantText("The plan is made."))
	in := inputOf(t, fmt.Sprintf(`{"prompt": "Plan the release.", "reporters": [{"type": "webhook", "config": {"url": %q}}],
		"todo": {"finalization_max_corrections": 0, "continuation": false}}`, hook.URL))
	in.Model = ref
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := env.s.c
	run := env.firstTurn(ctx, t, in, id)
	if err := c.SignalWorkflow(ctx, id, "", api.EndSessionSignal, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the wait for the reporters", func() bool { return timerStarted(ctx, t, c, id, "reporters drain") })
	release()
	var res api.AgentResult
	if err := run.Get(ctx, &res); err != nil {
		t.Fatalf("run: %v", err)
	}
	if res.State == nil {
		t.Fatal("the run's result has no state")
	}
	if rs := res.State.Reporters; len(rs) != 1 || rs[0].Delivered == 0 || rs[0].Failed != 0 || rs[0].Pending != 0 {
		t.Errorf("reporters at the end: %+v, want every event delivered", rs)
	}
	return nil
}

// recordIdleTimeout: a session that hears nothing for idle_timeout_s
// completes by itself.
func recordIdleTimeout(t *testing.T, env *recordEnv, id string) []string {
	_, ref := env.stubs.add(t, id, assistantText("Hello."))
	in := inputOf(t, `{"prompt": "Hi.", "idle_timeout_s": 1}`)
	in.Model = ref
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run := env.firstTurn(ctx, t, in, id)
	var res api.AgentResult
	if err := run.Get(ctx, &res); err != nil {
		t.Fatalf("run: %v", err)
	}
	if res.Reply != "Hello." || res.Turns != 1 {
		t.Errorf("result: reply %q after %d turns, want Hello. after 1", res.Reply, res.Turns)
	}
	return nil
}

// recordCompactOverflow: compact_context between turns whose summarising
// call the provider refuses as too long for its context: the update answers
// that nothing was compacted, and the session goes on.
func recordCompactOverflow(t *testing.T, env *recordEnv, id string) []string {
	// A 36 KB file written: over half of a 20,000-token budget, so that
	// compact_context has it to summarise.
	log := strings.Repeat("a line of the deploy log, host h0 answered in 100 ms\n", 700)
	stub, ref := env.stubs.add(t, id,
		toolCall("w", "write_file", map[string]string{"path": "deploy.log", "content": log}),
		assistantText("The deploy log is written."),
		assistantText("Still here."))
	in := inputOf(t, `{"prompt": "Write the deploy log.", "context": {"max_tokens": 20000},
		"todo": {"finalization_max_corrections": 0, "continuation": false}}`)
	in.Model = ref
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := env.s.c
	run := env.firstTurn(ctx, t, in, id)
	stub.contextLimit(10_000)
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: api.CompactContextUpdate,
		WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		t.Fatal(err)
	}
	var res api.CompactResult
	if err := h.Get(ctx, &res); err != nil {
		t.Fatalf("compact_context: %v", err)
	}
	if res.Compacted || !strings.Contains(res.Message, "did not happen") {
		t.Errorf("compact_context answered %+v, want that nothing was compacted", res)
	}
	stub.contextLimit(0)
	if reply := send(ctx, t, c, id, "Are you there?"); reply != "Still here." {
		t.Errorf("reply after the refused compaction = %q", reply)
	}
	if err := c.SignalWorkflow(ctx, id, "", api.EndSessionSignal, nil); err != nil {
		t.Fatal(err)
	}
	if err := run.Get(ctx, nil); err != nil {
		t.Fatalf("run: %v", err)
	}
	return nil
}

// timerStarted reports whether the latest run of workflow id has started a
// timer with that summary.
func timerStarted(ctx context.Context, t *testing.T, c client.Client, id, summary string) bool {
	t.Helper()
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatalf("history of %s: %v", id, err)
		}
		p := ev.GetUserMetadata().GetSummary()
		if ev.GetEventType() != enumspb.EVENT_TYPE_TIMER_STARTED || p == nil {
			continue
		}
		var s string
		if converter.GetDefaultDataConverter().FromPayload(p, &s) == nil && s == summary {
			return true
		}
	}
	return false
}
