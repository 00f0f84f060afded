package testsuite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/todoflow/todoflow/api"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	tfclient "github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/worker/agentworker"
)

// TestModelAnswerPaidOnce: a model call whose completion the server never
// recorded is not paid for twice on the same worker. Two sessions on one
// dev server, each on a worker of its own: one worker without an answer
// cache (as before, AnswerCacheBytes -1) and one with it. Both sessions'
// first model calls are held at the model server until the test kills the
// dev server; then the model answers, the workers cannot report the
// completions, and give up (the SDK tries for a minute); the server comes
// back on its database, the attempts' heartbeat timeouts pass and the calls
// run again. The worker without the cache asks the model again, the one
// with it does not.
func TestModelAnswerPaidOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test against a real Temporal server; skipped with -short")
	}
	gate := newModelGate(t, newModelStub(t))
	t.Setenv("OPENAI_BASE_URL", gate.srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
	s := startRestartableServer(t)

	sessions := []struct {
		name      string
		cache     int64
		wantCalls int
		logs      *reportLog
		id        string
	}{
		{name: "without the answer cache (before)", cache: -1, wantCalls: 2},
		{name: "with the answer cache", cache: 0, wantCalls: 1},
	}
	stamp := time.Now().Format("150405")
	for i := range sessions {
		ss := &sessions[i]
		queue := fmt.Sprintf("paid-once-%d-%s", i, stamp)
		ss.logs = &reportLog{}
		// A client of the worker's own, whose log says when the worker
		// gave up reporting the completion.
		c, err := client.Dial(client.Options{HostPort: s.srv.Address(), Namespace: s.srv.Namespace(), Logger: ss.logs})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		w, err := agentworker.New(c, agentworker.Options{TaskQueue: queue, StateDir: t.TempDir(), AnswerCacheBytes: ss.cache})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
		ss.id = fmt.Sprintf("paid-once-%d-%s", i, stamp)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err = tfclient.New(s.c, tfclient.Options{TaskQueue: queue}).Start(ctx,
			api.AgentInput{Prompt: "Say hello, session " + ss.id + ".", Model: "openai:test-model"}, tfclient.StartOptions{ID: ss.id})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 2*time.Minute, "both sessions' first model calls at the model server", func() bool { return gate.held() == len(sessions) })
	down := s.kill(t)
	gate.release()
	for _, ss := range sessions {
		waitFor(t, 3*time.Minute, ss.name+": the worker giving up on reporting the call's completion", ss.logs.gaveUp)
	}
	s.restart(t)
	t.Logf("dev server down %s, back on %s", time.Since(down).Round(time.Millisecond), s.srv.Address())

	for _, ss := range sessions {
		var attempt int32
		waitFor(t, 3*time.Minute, ss.name+": the model call recorded", func() bool {
			attempt = completedCallAttempt(t, s.c, ss.id)
			return attempt > 0
		})
		calls := gate.stub.requestsMentioning(ss.id)
		t.Logf("%s: the model call was recorded at attempt %d, after %d provider calls", ss.name, attempt, calls)
		if attempt < 2 {
			t.Errorf("%s: the call was recorded at its first attempt: the completion was not lost, so the test proved nothing", ss.name)
		}
		if calls != ss.wantCalls {
			t.Errorf("%s: %d provider calls for one model call, want %d", ss.name, calls, ss.wantCalls)
		}
	}
}

// modelGate serves a modelStub, holding every request until release: a
// test can then act while the model's answers are on their way.
type modelGate struct {
	stub *modelStub
	srv  *httptest.Server
	open chan struct{}
	once sync.Once

	mu      sync.Mutex
	waiting int
}

func newModelGate(t *testing.T, stub *modelStub) *modelGate {
	g := &modelGate{stub: stub, open: make(chan struct{})}
	g.srv = httptest.NewServer(g)
	t.Cleanup(g.srv.Close)
	t.Cleanup(g.release) // first: Close waits for the held requests
	return g
}

func (g *modelGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	g.waiting++
	g.mu.Unlock()
	select {
	case <-g.open:
	case <-r.Context().Done():
		return
	}
	g.stub.ServeHTTP(w, r)
}

// held counts the requests that came to the gate (held until release).
func (g *modelGate) held() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.waiting
}

// release lets the held requests and all later ones through.
func (g *modelGate) release() { g.once.Do(func() { close(g.open) }) }

// requestsMentioning counts the agent's model requests whose body holds
// text (a session's prompt names it).
func (s *modelStub) requestsMentioning(text string) int {
	n := 0
	for _, r := range s.requests() {
		if b, _ := json.Marshal(r.body); bytes.Contains(b, []byte(text)) {
			n++
		}
	}
	return n
}

// completedCallAttempt is the attempt at which the run's first model call
// was recorded as completed, 0 while it is not.
func completedCallAttempt(t *testing.T, c client.Client, id string) int32 {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	isModel := map[int64]bool{}   // CallModel's scheduled events
	attempts := map[int64]int32{} // by scheduled event
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Logf("history of %s: %v", id, err)
			return 0
		}
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			isModel[ev.GetEventId()] = ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == api.ModelCallActivity
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			a := ev.GetActivityTaskStartedEventAttributes()
			attempts[a.GetScheduledEventId()] = a.GetAttempt()
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			if id := ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId(); isModel[id] {
				return attempts[id]
			}
		}
	}
	return 0
}

// reportLog is a worker client's logger that notes when its activity
// worker failed to report a task's result (the SDK's retries spent).
type reportLog struct {
	mu     sync.Mutex
	failed bool
}

func (l *reportLog) note(msg string, keyvals []any) {
	if !strings.HasPrefix(msg, "Task processing failed") || !strings.Contains(fmt.Sprint(keyvals...), "ActivityWorker") {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failed = true
}

func (l *reportLog) gaveUp() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failed
}

func (l *reportLog) Debug(msg string, keyvals ...any) { l.note(msg, keyvals) }
func (l *reportLog) Info(msg string, keyvals ...any)  { l.note(msg, keyvals) }
func (l *reportLog) Warn(msg string, keyvals ...any)  { l.note(msg, keyvals) }
func (l *reportLog) Error(msg string, keyvals ...any) { l.note(msg, keyvals) }
