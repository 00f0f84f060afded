package testsuite

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/todoflow/todoflow/activities"
	tfclient "github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/scenario"
	"github.com/todoflow/todoflow/worker/agentworker"
)

// toolCall is an assistant message in the wire format that calls one tool.
func toolCall(id, name string, args any) string {
	a, _ := json.Marshal(args)
	s, _ := json.Marshal(string(a))
	return fmt.Sprintf(`{"role":"assistant","content":null,"tool_calls":[{"id":%q,"type":"function","function":{"name":%q,"arguments":%s}}]}`, id, name, s)
}

// serveWithStub starts a server and a worker whose openai: models are the
// stub, sent key as their API key.
func serveWithStub(t *testing.T, stub *modelStub, key string) *server {
	t.Setenv("OPENAI_BASE_URL", stub.baseURL())
	t.Setenv("OPENAI_API_KEY", key)
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	return s
}

// A provider outage of 90 s (503 on every request) is waited out: the
// server retries the model call, the run stays running, its state as the
// client reads it (from the pending call) has model_error saying what
// fails, and the run goes on when the provider is back. It also measures
// how long after the outage the run took its next step.
func TestModelOutageIsWaitedOutEndToEnd(t *testing.T) {
	stub := newModelStub(t, `{"role":"assistant","content":"back again"}`)
	s := serveWithStub(t, stub, "sk-test-not-a-secret")

	outageEnd := time.Now().Add(90 * time.Second)
	stub.failUntil(outageEnd, http.StatusServiceUnavailable, "")
	sc := &scenario.Scenario{Name: "outage", Input: api.AgentInput{Prompt: "hi", Model: "openai:test-model"}, TimeLimitS: 300}
	ch := playAsync(t, s.c, sc, "outage-e2e", 5*time.Minute)

	var during api.State
	session := tfclient.New(s.c, tfclient.Options{}).Session("outage-e2e")
	waitFor(t, 80*time.Second, "model_error while the provider is down", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		st, err := session.State(ctx)
		during = st
		return err == nil && st.ModelError != nil && st.ModelError.Attempts >= 3
	})
	if during.Status != api.StatusRunning || !during.ModelError.Retryable || !strings.Contains(during.ModelError.Message, "503") {
		t.Errorf("during the outage: status %s, model_error %+v", during.Status, during.ModelError)
	}
	if len(during.ModelError.Message) > 300 || strings.Contains(during.ModelError.Message, "activity error") {
		t.Errorf("model_error is not one clear sentence: %q", during.ModelError.Message)
	}
	p := <-ch
	if p.err != nil {
		t.Fatalf("play: %v", p.err)
	}
	if p.out.RunStatus != "completed" || p.out.Reply != "back again" {
		t.Fatalf("run %s, reply %q", p.out.RunStatus, p.out.Reply)
	}
	reqs := stub.requests()
	var firstOK time.Time
	for _, r := range reqs {
		if r.status == http.StatusOK {
			firstOK = r.at
			break
		}
	}
	t.Logf("outage of 90 s: %d requests; first answered %.1f s after the outage ended", len(reqs), firstOK.Sub(outageEnd).Seconds())
	if st := decodeState(t, p.out); st.ModelError != nil {
		t.Errorf("model_error after recovery = %+v", st.ModelError)
	}
	// TestMeasureModelOutage's figure, loosely: an outage adds no event (the
	// server retries the call), so the run's history is that of a run
	// without one, where a workflow that retried itself added 11 events an
	// attempt (77 for a 2-minute outage).
	events := len(historyOf(t, s.c, p.out.WorkflowID))
	t.Logf("the run's history: %d events", events)
	withinCIBound(t, "the history events of a one-turn run through a 90 s outage", float64(events), 40, "19 without an outage, 0 added by it")
}

// A rejected key ends the turn, not the run: the reply says what to do, the
// session waits, and retry_turn runs the turn again once the key is fixed.
func TestRejectedKeyEndsTheTurnAndRetryRunsItAgain(t *testing.T) {
	stub := newModelStub(t)
	s := serveWithStub(t, stub, "sk-wrong-key")
	rejectThenRetry(t, s.c, stub, "openai:test-model", "bad-key-e2e")
}

// rejectThenRetry runs a session (workflow id, on stub as model) whose first
// model call is refused for its key (401): the turn ends with a reply that
// says what to do, retry_turn runs it again, and the session ends.
func rejectThenRetry(t *testing.T, c client.Client, stub *modelStub, model, id string) {
	t.Helper()
	stub.setFinalText("hello after the fix")
	stub.failNext(1, http.StatusUnauthorized, `{"error":{"message":"Incorrect API key provided: sk-wrong-key","type":"invalid_request_error"}}`)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: api.TaskQueue},
		api.WorkflowName, api.AgentInput{Prompt: "hi", Model: model})
	if err != nil {
		t.Fatal(err)
	}
	var st api.State
	waitFor(t, time.Minute, "the failed turn", func() bool {
		var ok bool
		st, ok = queryState(ctx, c, run.GetID())
		return ok && st.Status == api.StatusWaitingUser
	})
	if st.ModelError == nil || st.ModelError.Retryable || !strings.Contains(st.ModelError.Message, "OPENAI_API_KEY") || strings.Contains(st.ModelError.Message, "sk-wrong") {
		t.Fatalf("model_error after a 401 = %+v", st.ModelError)
	}
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: run.GetID(), UpdateName: api.RetryTurnUpdate,
		WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		t.Fatal(err)
	}
	var reply string
	if err := h.Get(ctx, &reply); err != nil {
		t.Fatalf("retry_turn: %v", err)
	}
	if reply != "hello after the fix" {
		t.Errorf("retry_turn reply = %q", reply)
	}
	_ = c.SignalWorkflow(ctx, run.GetID(), "", api.EndSessionSignal, nil)
	if err := run.Get(ctx, nil); err != nil {
		t.Fatalf("run: %v", err)
	}
}

// A provider that answers 400 context_length_exceeded past a request size:
// the loop compacts (a summary written by a call without tools) and calls
// again; the stored transcript keeps every message.
func TestContextLengthExceededCompactsEndToEnd(t *testing.T) {
	stub := newModelStub(t, overflowAnswers()...)
	s := serveWithStub(t, stub, "sk-test-not-a-secret")
	out := playOverflow(t, s.c, stub, "openai:test-model", "")
	if st := decodeState(t, out); st.Compactions == 0 {
		t.Errorf("state.compactions = 0")
	}
	tools, summaries := 0, 0
	for _, raw := range out.Messages {
		var m model.Message
		_ = json.Unmarshal(raw, &m)
		if m.Role == model.RoleTool {
			tools++
		}
		if m.Name == api.NameContextSummary {
			summaries++
		}
	}
	if tools != 4 || summaries == 0 {
		t.Errorf("stored transcript: %d tool messages (want all 4), %d summaries", tools, summaries)
	}
}

// overflowAnswers are the answers of playOverflow's model: a 24 KB file
// written, then read three times.
func overflowAnswers() []string {
	big := strings.Repeat("0123456789abcdef", 1500) // 24 KB
	return []string{
		toolCall("w", "write_file", map[string]string{"path": "big.txt", "content": big}),
		toolCall("r1", "read_file", map[string]string{"path": "big.txt"}),
		toolCall("r2", "read_file", map[string]string{"path": "big.txt"}),
		toolCall("r3", "read_file", map[string]string{"path": "big.txt"}),
		`{"role":"assistant","content":"read it all"}`,
	}
}

// playOverflow plays a run (as workflow id, or a new one when empty) whose
// model (ref), stub with overflowAnswers, refuses requests over 70,000
// bytes as too long for its context: the run compacts with summarising
// calls, calls again, and finishes as scripted.
func playOverflow(t *testing.T, c client.Client, stub *modelStub, ref, id string) *scenario.Output {
	t.Helper()
	stub.contextLimit(70_000)
	stub.setSummaryText("The user asked to read big.txt; it holds a repeated hex pattern.")
	sc := &scenario.Scenario{Name: "context", Input: api.AgentInput{Prompt: "Write and read big.txt.", Model: ref}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := scenario.Play(ctx, c, sc, scenario.Options{WorkflowID: id, Progress: testWriter{t}})
	if err != nil {
		t.Fatalf("play: %v", err)
	}
	if out.RunStatus != "completed" || out.Reply != "read it all" {
		t.Fatalf("run %s, reply %q, error %s", out.RunStatus, out.Reply, out.Error)
	}
	refused := 0
	for _, r := range stub.requests() {
		if r.status == http.StatusBadRequest {
			refused++
		}
	}
	if refused == 0 || len(stub.summaryRequests()) == 0 {
		t.Fatalf("%d refused requests, %d summary calls", refused, len(stub.summaryRequests()))
	}
	t.Logf("%d agent requests (%d refused for length), %d summary calls", len(stub.requests()), refused, len(stub.summaryRequests()))
	return out
}

// A transcript far over the 2 MiB query cap (a 250 KB file read ten times)
// is read back by every model call, paged by bytes. The worker keeps the
// most tool output it may (set through its environment, as an operator
// would), so that each read_file returns a whole 256 KiB piece.
func TestTranscriptOverTheQueryCap(t *testing.T) {
	t.Setenv(agentworker.EnvToolOutputMax, strconv.Itoa(activities.MaxToolOutputMax))
	content := strings.Repeat("a line of a large log file, é 日本 <tags> & \"quotes\"\n", 250_000/56)
	steps := []any{map[string]any{"tool_calls": []any{map[string]any{"name": "write_file", "arguments": map[string]string{"path": "big.log", "content": content}}}}}
	for i := 0; i < 10; i++ {
		steps = append(steps, map[string]any{"tool_calls": []any{map[string]any{"name": "read_file", "arguments": map[string]string{"path": "big.log"}}}})
	}
	steps = append(steps, map[string]any{"content": "read ten times"})
	sc := writeScenario(t, mustJSON(t, map[string]any{
		"name":  "big transcript",
		"input": map[string]any{"prompt": "Read the log ten times.", "context": map[string]any{"max_tokens": 10_000_000}},
		"model": steps,
	}))
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	out, _ := play(t, s.c, sc, 3*time.Minute)
	if out.RunStatus != "completed" || out.Reply != "read ten times" {
		t.Fatalf("run %s, reply %q, error %s", out.RunStatus, out.Reply, out.Error)
	}
	size := 0
	for _, m := range out.Messages {
		size += len(m)
	}
	if size < 2<<20 {
		t.Fatalf("transcript of %d bytes: not over the 2 MiB cap", size)
	}
	t.Logf("transcript of %d messages, %d bytes, read back by every call", len(out.Messages), size)
}

// A chat session's idle waits share one timer, moved by each wait
// (workflows/idle.go, patch lean-turn): no timer is started per turn, and
// none fires while the session is in use.
func TestIdleTimerIsOnePerSession(t *testing.T) {
	sc := writeScenario(t, `{"name": "chat", "input": {"prompt": "one"},
	  "model": [{"content": "1"}, {"content": "2"}, {"content": "3"}],
	  "user": [{"when": "waiting_user", "update": "send_message", "args": "two"},
	           {"when": "waiting_user", "update": "send_message", "args": "three"}]}`)
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	out, _ := play(t, s.c, sc, time.Minute)
	it := s.c.GetWorkflowHistory(context.Background(), out.WorkflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	started, cancelled, fired := 0, 0, 0
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_TIMER_STARTED:
			started++
		case enumspb.EVENT_TYPE_TIMER_CANCELED:
			cancelled++
		case enumspb.EVENT_TYPE_TIMER_FIRED:
			fired++
		}
	}
	// Three waits (two ended by a message, one by end_session), one timer,
	// still pending when the run completes.
	if started != 1 || cancelled != 0 || fired != 0 {
		t.Errorf("timers: %d started, %d cancelled, %d fired; want 1, 0, 0", started, cancelled, fired)
	}
}

// TestManySendsInFlight: while a slow turn runs, many send_message updates
// are accepted at once; each waits in the inbox and is answered, in order,
// by its own turn: none is accepted and forgotten.
func TestManySendsInFlight(t *testing.T) {
	const sends = 15
	model := []string{`{"content": "0", "delay_ms": 3000}`}
	for i := 1; i <= sends; i++ {
		model = append(model, fmt.Sprintf(`{"content": "reply %d"}`, i))
	}
	sc := writeScenario(t, `{"name": "slow", "input": {"prompt": "first", "todo": {"enabled": false}}, "model": [`+strings.Join(model, ",")+`]}`)
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run, err := s.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "inflight-e2e", TaskQueue: api.TaskQueue}, api.WorkflowName, sc.RunInput())
	if err != nil {
		t.Fatal(err)
	}
	var handles []client.WorkflowUpdateHandle
	for i := 1; i <= sends; i++ {
		h, err := s.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: run.GetID(), UpdateName: api.SendMessageUpdate,
			Args: []any{fmt.Sprintf("message %d", i)}, WaitForStage: client.WorkflowUpdateStageAccepted})
		if err != nil {
			t.Fatalf("send %d refused: %v", i, err)
		}
		handles = append(handles, h)
	}
	for i, h := range handles {
		var reply string
		if err := h.Get(ctx, &reply); err != nil {
			t.Fatalf("send %d: %v", i+1, err)
		}
		if want := fmt.Sprintf("reply %d", i+1); reply != want {
			t.Errorf("send %d answered %q, want %q", i+1, reply, want)
		}
	}
	_ = s.c.SignalWorkflow(ctx, run.GetID(), "", api.EndSessionSignal, nil)
	if err := run.Get(ctx, nil); err != nil {
		t.Fatalf("run: %v", err)
	}
}
