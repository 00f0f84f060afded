package testsuite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"
	tfclient "github.com/todoflow/todoflow/client"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/scenario"
	"github.com/todoflow/todoflow/todo"
	"github.com/todoflow/todoflow/worker/agentworker"
)

// The acceptance tests of the issue "a rate-limit storm and a second context
// overflow": what a session costs in history, and whether it goes on, when
// its model provider misbehaves the way real ones do. Both drive a worker's
// `openai:` model (the real openai-go client) against modelStub.

// stormDefault is the storm of TestRateLimitStormStaysSmall in a plain
// `go test`; TODOFLOW_STORM=1 plays stormIssue, the storm the issue measured.
const (
	stormDefault = 30 * time.Second
	stormIssue   = 150 * time.Second
	// stormMaxHistory is the goal for the history of a run that weathered a
	// storm, whatever its length: the twelve 15 KB tool results enter it at
	// most a few times, not once per attempt.
	stormMaxHistory = 1_000_000
	// eventsPerAttempt is what one failed attempt added to history while
	// the workflow retried (up to 1f259b3): ActivityTaskScheduled,
	// Started, Failed, a workflow task (scheduled, started, completed),
	// TimerStarted, TimerFired, and the workflow task that the timer wakes
	// (1,459 events for 123 attempts in the issue). The server's retries
	// add none (BENCHMARKS.md); the bound is kept as a ceiling.
	eventsPerAttempt = 12
	// stormBaseEvents bounds the events of the storm run without its failed
	// attempts: its start, two model calls, twelve tool calls (eagerly
	// dispatched), the end of the session: 88 without a storm on the code of
	// the issue.
	stormBaseEvents = 120
)

// TestRateLimitStormStaysSmall: a session whose first turn read twelve tool
// results of ~15 KB each (each under the 16 KiB a model call carries in its
// input, transcript.HeldOver), then met a rate-limit storm: the provider
// answered every request with 429 and `Retry-After: 1`.
//
// The issue found that a 150 s storm left 23.6 MB of history (1,459
// events, 123 CallModel attempts): the workflow honoured the 1 s
// Retry-After literally (one attempt a second, no backoff), and every
// attempt's ActivityTaskScheduled carried the same ~190 KB of new messages
// again.
//
// The goal: the history of the run stays under 1 MB, and the attempts grow
// with the logarithm of the storm, as exponential backoff makes them
// (README: "waiting 1 s, 2 s, 4 s …"): a storm of S seconds is met at 0, 1,
// 3, 7, … 2^k−1 s, about log2(S+1) attempts, whatever the provider's
// Retry-After asks (a floor over it, e.g. 5 s, makes them fewer); two more
// are allowed as slack. The run must still answer once the storm ends, no
// later than one storm's length after it (backoff doubles, so its last wait
// is shorter than the storm).
//
// The storm is stormDefault (30 s) by default; TODOFLOW_STORM=1 plays the
// issue's 150 s. The history is measured over every run of the session
// (today it continues as new once, after the storm). Logged: history bytes
// (wire and JSON), events, CallModel attempts, 429 answers, and how long
// after the storm the run answered. On the code of the issue: 30 s, 5.8–6.3
// MB, 380–416 events, 29–32 attempts; 150 s, 27.8 MB, 1,692 events, 148
// attempts; without a storm, 0.38 MB and 88 events.
func TestRateLimitStormStaysSmall(t *testing.T) {
	storm := stormDefault
	if os.Getenv("TODOFLOW_STORM") == "1" {
		storm = stormIssue
	}
	const id = "storm-e2e"
	stateDir := t.TempDir()
	// A named workspace: the session's own folder is named when it starts.
	workspace := filepath.Join(stateDir, agentworker.DefaultRootFolder, id)
	if err := os.MkdirAll(workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for i := 1; i <= 12; i++ {
		p := fmt.Sprintf("part-%02d.txt", i)
		writeTextFile(t, filepath.Join(workspace, p), 15_000, i)
		paths = append(paths, p)
	}

	stub := newModelStub(t, readFiles("read", paths...), assistantText("weathered the storm"))
	// The storm begins at the request that carries the twelve results.
	var (
		mu                   sync.Mutex
		stormStart, stormEnd time.Time
	)
	proxy := newStubProxy(t, stub, func(body map[string]any) {
		mu.Lock()
		defer mu.Unlock()
		if stormStart.IsZero() && countToolResults(body) >= 12 {
			stormStart = time.Now()
			stormEnd = stormStart.Add(storm)
			stub.failUntil(stormEnd, http.StatusTooManyRequests, "1")
		}
	})
	t.Setenv("OPENAI_BASE_URL", proxy.baseURL())
	t.Setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
	s := startServer(t)
	s.startWorker(t, stateDir)

	sc := &scenario.Scenario{Name: "storm", TimeLimitS: int((storm + 5*time.Minute) / time.Second),
		Input: api.AgentInput{Prompt: "Read the twelve parts.", Model: "openai:test-model", Workspace: id}}
	began := time.Now()
	ch := playAsync(t, s.c, sc, id, storm+6*time.Minute)
	p := <-ch
	took := time.Since(began)
	if p.err != nil {
		t.Fatalf("play: %v", p.err)
	}

	h := readHistory(t, s.c, id, nil)
	mu.Lock()
	defer mu.Unlock()
	refused, firstOK := 0, time.Time{}
	for _, r := range stub.requests() {
		switch {
		case r.status == http.StatusTooManyRequests:
			refused++
		case r.status == http.StatusOK && !stormEnd.IsZero() && r.at.After(stormStart) && firstOK.IsZero():
			firstOK = r.at
		}
	}
	lag := firstOK.Sub(stormEnd)
	t.Logf("storm of %s: history %d bytes (%.2f MB; %d bytes as JSON) in %d runs, %d events, %d CallModel attempts, %d answered 429; "+
		"first answer %.1f s after the storm ended; run took %.1f s",
		storm, h.bytes, float64(h.bytes)/1e6, h.jsonBytes, h.runs, h.events, h.modelCalls, refused, lag.Seconds(), took.Seconds())

	if stormStart.IsZero() {
		t.Fatal("no model request carried the twelve tool results: the storm never began")
	}
	if p.out.RunStatus != "completed" || p.out.Reply != "weathered the storm" {
		t.Errorf("run %s, reply %q, error %s; want completed with the scripted reply", p.out.RunStatus, p.out.Reply, p.out.Error)
	}
	if st := decodeState(t, p.out); st.ModelError != nil {
		t.Errorf("model_error after the storm = %+v, want null", st.ModelError)
	}
	maxAttempts := int(math.Ceil(math.Log2(storm.Seconds()+1))) + 2
	if refused > maxAttempts {
		t.Errorf("%d attempts during a %s storm; want at most %d (log2 of the storm's seconds, plus 2)", refused, storm, maxAttempts)
	}
	if h.bytes >= stormMaxHistory {
		t.Errorf("history of %d bytes after a %s storm; want under %d (1 MB)", h.bytes, storm, stormMaxHistory)
	}
	if maxEvents := stormBaseEvents + eventsPerAttempt*maxAttempts; h.events > maxEvents {
		t.Errorf("%d events after a %s storm; want at most %d (%d for the run, %d per attempt, %d attempts)",
			h.events, storm, maxEvents, stormBaseEvents, eventsPerAttempt, maxAttempts)
	}
	if firstOK.IsZero() || lag > storm {
		t.Errorf("the run's first answered request came %s after the storm ended; want within the storm's length, %s", lag, storm)
	}
}

// contextLimitBytes is the request size over which the stub of
// TestSecondContextOverflowIsLearned refuses: less than what the run's
// default budget lets through (100,000 tokens at 3 bytes a token, about
// 288 KB of messages once the tools' 4,000 are counted).
const contextLimitBytes = 250_000

// TestSecondContextOverflowIsLearned: a provider whose context is smaller
// than the run's budget (context.max_tokens left at its default) answers
// 400 context_length_exceeded to every request over 250 KB. The session
// reads 40 KB files over three turns; its view passes 250 KB after about six
// reads, and again six reads after each compaction.
//
// The issue found that the run compacts at the first overflow, aiming at
// half of what was refused, but learns nothing: its view grows past the
// provider's limit again, the second overflow of the turn is not compacted
// (only one is, per turn), and the turn ends with "the conversation does not
// fit the model's context window, even after compaction".
//
// The goal: every turn ends with the model's scripted reply (no failed
// turn); after the first overflow the run keeps its requests under the
// limit it learned, so the stub sees at most two overflowing requests in
// the whole session (one to learn from, one spare); state.model_error is
// null at the end. Logged: the replies, the requests refused, the largest
// request sent after the first refusal, the compactions. On the code of the
// issue: turn 1 fails at its second overflow, the later turns answer with
// the script shifted by one, 4 agent requests refused in all.
func TestSecondContextOverflowIsLearned(t *testing.T) {
	const id = "overflow-e2e"
	turns := []struct {
		reads int
		reply string
	}{{14, "turn 1 done"}, {7, "turn 2 done"}, {7, "turn 3 done"}}

	stateDir := t.TempDir()
	var script, chapters []string
	for _, turn := range turns {
		for range turn.reads {
			p := fmt.Sprintf("chapter-%02d.txt", len(chapters)+1)
			chapters = append(chapters, p)
			script = append(script, readFiles(fmt.Sprintf("r%d", len(chapters)), p))
		}
		script = append(script, assistantText(turn.reply))
	}
	stub := newModelStub(t, script...)
	stub.setFinalText("the script is used up")
	stub.contextLimit(contextLimitBytes)
	stub.setSummaryText("The user asked for the chapters to be read; each is a numbered block of text lines.")
	t.Setenv("OPENAI_BASE_URL", stub.baseURL())
	t.Setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
	s := startServer(t)
	s.startWorker(t, stateDir)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	off := false
	run, err := s.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: api.TaskQueue}, api.WorkflowName,
		api.AgentInput{Model: "openai:test-model", Todo: todo.Config{Enabled: &off}})
	if err != nil {
		t.Fatal(err)
	}
	// The session's folder, named by its first run, before its first message.
	workspace := filepath.Join(stateDir, activities.SessionsFolder, activities.SessionKey(id, run.GetRunID()))
	if err := os.MkdirAll(workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, p := range chapters {
		writeTextFile(t, filepath.Join(workspace, p), 40_000, i+1)
	}
	began := time.Now()
	var replies []string
	for i, turn := range turns {
		reply, err := sendMessage(ctx, s.c, id, fmt.Sprintf("Read the next %d chapters.", turn.reads))
		if err != nil {
			t.Fatalf("turn %d: send_message: %v", i+1, err)
		}
		replies = append(replies, reply)
	}
	st, _ := queryState(ctx, s.c, id)
	_ = s.c.SignalWorkflow(ctx, id, "", api.EndSessionSignal, nil)
	if err := run.Get(ctx, nil); err != nil {
		t.Errorf("run: %v", err)
	}

	// The agent's requests, in order: the largest before the first refused
	// one, and the largest sent after it.
	agentReqs, summaryReqs := stub.requests(), stub.summaryRequests()
	firstOverflow, largestBefore, largestAfter := -1, 0, 0
	for i, r := range agentReqs {
		switch {
		case firstOverflow < 0 && r.status == http.StatusBadRequest:
			firstOverflow = i
		case firstOverflow < 0:
			largestBefore = max(largestBefore, r.size)
		default:
			largestAfter = max(largestAfter, r.size)
		}
	}
	refused := func(reqs []stubRequest) int {
		n := 0
		for _, r := range reqs {
			if r.status == http.StatusBadRequest {
				n++
			}
		}
		return n
	}
	agentOverflows, summaryOverflows := refused(agentReqs), refused(summaryReqs)
	overflows := agentOverflows + summaryOverflows
	t.Logf("replies %q; %d agent requests (%d refused for length, over %d bytes) and %d summary requests (%d refused); "+
		"largest agent request %d bytes before the first refusal, %d after it; %d compactions; model_error %+v; turns took %.1f s",
		replies, len(agentReqs), agentOverflows, contextLimitBytes, len(summaryReqs), summaryOverflows,
		largestBefore, largestAfter, st.Compactions, st.ModelError, time.Since(began).Seconds())

	for i, turn := range turns {
		if i < len(replies) && replies[i] != turn.reply {
			t.Errorf("turn %d replied %q; want the scripted %q", i+1, replies[i], turn.reply)
		}
	}
	if overflows == 0 {
		t.Errorf("no request was refused for length: the session never passed %d bytes, so it tests nothing", contextLimitBytes)
	}
	if overflows > 2 {
		t.Errorf("%d requests refused for length; want at most 2: after the first, the run should keep under the limit it learned", overflows)
	}
	if st.ModelError != nil {
		t.Errorf("model_error at the end = %+v, want null", st.ModelError)
	}
}

// sendMessage sends a chat message with the send_message update and returns
// the turn's reply, followed into a later run (turn_reply) as the typed
// client does when the turn was carried over.
func sendMessage(ctx context.Context, c client.Client, id, text string) (string, error) {
	return tfclient.New(c, tfclient.Options{}).Session(id).Send(ctx, text).Reply(ctx)
}

// readFiles is an assistant message in the wire format that calls read_file
// once per path, all at once; the calls' ids are prefix-1, prefix-2, ….
func readFiles(prefix string, paths ...string) string {
	var calls []map[string]any
	for i, p := range paths {
		args, _ := json.Marshal(map[string]string{"path": p})
		calls = append(calls, map[string]any{"id": fmt.Sprintf("%s-%d", prefix, i+1), "type": "function",
			"function": map[string]any{"name": "read_file", "arguments": string(args)}})
	}
	b, _ := json.Marshal(map[string]any{"role": "assistant", "content": nil, "tool_calls": calls})
	return string(b)
}

// writeTextFile writes a text file of size bytes in lines of 100, each
// naming the file's number n and the line's, so that no two files are
// alike.
func writeTextFile(t *testing.T, path string, size, n int) {
	t.Helper()
	var b strings.Builder
	for line := 1; b.Len() < size; line++ {
		l := fmt.Sprintf("file %d line %d: the quick brown fox jumps over the lazy dog; ", n, line)
		l += strings.Repeat(".", max(0, 99-len(l))) + "\n"
		b.WriteString(l)
	}
	if err := os.WriteFile(path, []byte(b.String()[:size]), 0o644); err != nil {
		t.Fatal(err)
	}
}

// countToolResults counts the tool results in a Chat Completions request.
func countToolResults(body map[string]any) int {
	msgs, _ := body["messages"].([]any)
	n := 0
	for _, m := range msgs {
		if mm, ok := m.(map[string]any); ok && mm["role"] == "tool" {
			n++
		}
	}
	return n
}

// stubProxy serves a modelStub behind a hook that sees each request's body
// first (decoded) and may change the stub's faults or delay the answer: a
// fault that begins at a given request rather than at a given time.
type stubProxy struct {
	srv *httptest.Server
}

func newStubProxy(t *testing.T, stub *modelStub, hook func(body map[string]any)) *stubProxy {
	t.Helper()
	p := &stubProxy{srv: httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var body map[string]any
		if json.Unmarshal(data, &body) == nil {
			hook(body)
		}
		r.Body = io.NopCloser(bytes.NewReader(data))
		stub.ServeHTTP(w, r)
	}))}
	t.Cleanup(p.srv.Close)
	return p
}

func (p *stubProxy) baseURL() string { return p.srv.URL + "/v1" }

// historyFigures are what a session's history measures: every run of it,
// the runs it continued as new included.
type historyFigures struct {
	runs       int
	events     int
	bytes      int // the events' wire size (protobuf), what the server stores
	jsonBytes  int // their size as the JSON of an export
	modelCalls int // CallModel activities scheduled: one per attempt
	// nondeterminism lists the workflow task failures whose cause is a
	// non-determinism error, each as "cause: message".
	nondeterminism []string
	wftFailures    int
}

// readHistory reads the history of workflow id's latest run and of each run
// it continued from, and measures them. fc, when not nil, decodes failure
// messages that a codec sealed.
func readHistory(t *testing.T, c client.Client, id string, fc converter.FailureConverter) historyFigures {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var h historyFigures
	for runID := ""; ; {
		h.runs++
		previous := ""
		it := c.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatalf("history of %s (run %q): %v", id, runID, err)
			}
			h.events++
			h.bytes += proto.Size(ev)
			if b, err := protojson.Marshal(ev); err == nil {
				h.jsonBytes += len(b)
			}
			switch ev.GetEventType() {
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
				previous = ev.GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
				if ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == api.ModelCallActivity {
					h.modelCalls++
				}
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED:
				h.wftFailures++
				a := ev.GetWorkflowTaskFailedEventAttributes()
				if a.GetCause() != enumspb.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR {
					continue
				}
				msg := a.GetFailure().GetMessage()
				if fc != nil {
					if err := fc.FailureToError(a.GetFailure()); err != nil {
						msg = err.Error()
					}
				}
				h.nondeterminism = append(h.nondeterminism, a.GetCause().String()+": "+msg)
			}
		}
		if previous == "" {
			return h
		}
		runID = previous
	}
}
