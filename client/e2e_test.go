package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	sdkclient "go.temporal.io/sdk/client"

	"github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/model/openai"
	"github.com/todoflow/todoflow/worker/agentworker"
	"github.com/todoflow/todoflow/worker/devserver"
)

// env is a dev server of the test's own (free ports, a fresh database) and
// a folder its workers serve scripted models from.
type env struct {
	tc  sdkclient.Client
	dir string
}

func startEnv(t *testing.T) *env {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test against a real Temporal server; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute) // includes a cold build
	defer cancel()
	srv, err := devserver.Start(ctx, devserver.Options{UIPort: -1, SearchAttributes: api.SearchAttributes()})
	if err != nil {
		t.Fatalf("start dev server: %v", err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	tc, err := sdkclient.Dial(sdkclient.Options{HostPort: srv.Address(), Namespace: srv.Namespace(), Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tc.Close)
	return &env{tc: tc, dir: t.TempDir()}
}

// worker starts a worker; stop stops it (also at the test's end).
func (e *env) worker(t *testing.T) (stop func()) {
	t.Helper()
	w, err := agentworker.New(e.tc, agentworker.Options{ScriptDir: e.dir, StateDir: e.dir, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() { once.Do(w.Stop) }
	t.Cleanup(stop)
	return stop
}

// script writes a scripted model and returns its model reference.
func (e *env) script(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(e.dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return "script:" + path
}

// watched collects a session's events in the background.
type watched struct {
	mu   sync.Mutex
	evs  []client.Event
	done chan struct{}
}

func watch(ctx context.Context, s *client.Session) *watched {
	w := &watched{done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for ev := range s.Watch(ctx, 20*time.Millisecond) {
			w.mu.Lock()
			w.evs = append(w.evs, ev)
			w.mu.Unlock()
		}
	}()
	return w
}

// find is the first event that match accepts, and whether there is one.
func (w *watched) find(match func(client.Event) bool) (client.Event, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ev := range w.evs {
		if match(ev) {
			return ev, true
		}
	}
	return nil, false
}

func (w *watched) waitFor(t *testing.T, what string, match func(client.Event) bool) client.Event {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if ev, ok := w.find(match); ok {
			return ev
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %s in the watch within a minute", what)
	return nil
}

// A session driven through the client against a real server: four
// messages sent at once reach the transcript in order, an approval names
// the call that was shown (another is refused), the watch shows the list,
// the streamed reply, the wait and the tool call, and End completes it.
func TestSessionEndToEnd(t *testing.T) {
	e := startEnv(t)
	e.worker(t)
	const r1 = "The first answer streams in pieces while the model writes it, over a second and a half."
	ref := e.script(t, "session.json", `{"model": [
	  {"tool_calls": [{"name": "write_todos", "arguments": {"todos": [
	    {"content": "Read the code", "status": "completed"},
	    {"content": "Answer", "status": "completed"}]}}]},
	  {"content": "`+r1+`", "delay_ms": 1500},
	  {"content": "r2"},
	  {"content": "r3"},
	  {"tool_calls": [{"id": "call_w", "name": "write_file", "arguments": {"path": "out.txt", "content": "x"}}]},
	  {"content": "r4"}
	]}`)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := client.New(e.tc, client.Options{})
	s, err := c.Start(ctx, api.AgentInput{Model: ref, Approval: map[string]string{"write_file": "required"}}, client.StartOptions{ID: "client-e2e"})
	if err != nil {
		t.Fatal(err)
	}
	w := watch(ctx, s)

	// Sent from one goroutine without waiting: taken in this order.
	var sent []*client.Sent
	for _, m := range []string{"m1", "m2", "m3", "m4"} {
		sent = append(sent, s.Send(ctx, m))
	}

	// The fourth turn's tool call waits; a wrong call_id is refused, the
	// one shown is approved.
	ev := w.waitFor(t, "a tool call waiting", func(ev client.Event) bool {
		wc, ok := ev.(client.WaitsChanged)
		return ok && wc.Pending != nil
	})
	shown := ev.(client.WaitsChanged).Pending
	var refused *client.RefusedError
	if _, err := s.Approve(ctx, client.Answer{CallID: "not-" + shown.CallID}); !errors.As(err, &refused) {
		t.Errorf("approving a call that does not wait: %v; want the workflow's refusal", err)
	}
	st, err := s.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a := client.AnswerTo(st, "")
	if a.CallID != shown.CallID {
		t.Errorf("AnswerTo names %q; the watch showed %q", a.CallID, shown.CallID)
	}
	if _, err := s.Approve(ctx, a); err != nil {
		t.Fatalf("approve %s: %v", a.CallID, err)
	}

	for i, want := range []string{r1, "r2", "r3", "r4"} {
		reply, err := sent[i].Reply(ctx)
		if err != nil || reply != want {
			t.Errorf("reply %d: %q, %v; want %q", i+1, reply, err, want)
		}
	}
	msgs, err := s.Messages(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, m := range msgs {
		if m.Role == model.RoleUser && m.Name == "" {
			users = append(users, m.Content)
		}
	}
	if got := strings.Join(users, " "); got != "m1 m2 m3 m4" {
		t.Errorf("the transcript's user messages: %s; want m1 m2 m3 m4", got)
	}

	if err := s.End(ctx); err != nil {
		t.Fatal(err)
	}
	if res, err := s.Wait(ctx); err != nil || res.Turns != 4 {
		t.Errorf("the session's result: %+v, %v; want 4 turns", res, err)
	}
	select {
	case <-w.done:
	case <-time.After(time.Minute):
		t.Fatal("the watch did not end after the session did")
	}
	for what, match := range map[string]func(client.Event) bool{
		"the list": func(ev client.Event) bool { tc, ok := ev.(client.TodosChanged); return ok && len(tc.Todos) == 2 },
		"a part of the first reply, streaming": func(ev client.Event) bool {
			sc, ok := ev.(client.StreamChanged)
			return ok && sc.Running && sc.Text != "" && strings.HasPrefix(r1, sc.Text) && sc.Text != r1
		},
		"the status awaiting_approval": func(ev client.Event) bool {
			sc, ok := ev.(client.StatusChanged)
			return ok && sc.Status == api.StatusAwaitingApproval
		},
		"the tool call in the transcript": func(ev client.Event) bool {
			nm, ok := ev.(client.NewMessage)
			return ok && len(nm.Message.ToolCalls) == 1 && nm.Message.ToolCalls[0].Name == "write_file"
		},
		"the end": func(ev client.Event) bool {
			cl, ok := ev.(client.Closed)
			return ok && cl.Status == client.RunCompleted
		},
	} {
		if _, ok := w.find(match); !ok {
			t.Errorf("the watch never showed %s", what)
		}
	}
}

// A worker that stops in the middle of a turn does not make an accepted
// message look unsent: its reply comes once another worker has finished
// the turn. The model server shows it happened that way: the first
// attempt's stream was under way (its first piece sent) and then cut, a
// second request came for the same call, and the reply is the one the
// second request was answered with.
func TestReplySurvivesWorkerRestart(t *testing.T) {
	e := startEnv(t)
	m := newCutModel(t)
	t.Setenv(openai.EnvBaseURL, m.srv.URL)
	stop := e.worker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := client.New(e.tc, client.Options{}).Start(ctx, api.AgentInput{Model: "openai:stub"}, client.StartOptions{ID: "client-restart"})
	if err != nil {
		t.Fatal(err)
	}
	sent := s.Send(ctx, "take your time")
	if err := sent.Accepted(ctx); err != nil {
		t.Fatalf("accepted: %v", err)
	}
	waitClosed(ctx, t, m.streaming, "the first attempt's stream to start")
	stop()
	waitClosed(ctx, t, m.cut, "the first attempt's stream to be cut by the worker's stop")
	e.worker(t)
	reply, err := sent.Reply(ctx)
	if want := cutModelReply(2); err != nil || reply != want {
		t.Fatalf("reply %q, %v; want %q, the second request's answer", reply, err, want)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.requests) != 2 || !bytes.Equal(m.requests[0], m.requests[1]) {
		t.Errorf("the model was sent %d requests; want two with the same messages (the call, again):\n%s", len(m.requests), bytes.Join(m.requests, []byte("\n")))
	}
}

// cutModel is a Chat Completions server whose first request streams one
// piece and then waits until its client goes away; every later one is
// answered at once with cutModelReply of its number.
type cutModel struct {
	srv            *httptest.Server
	streaming, cut chan struct{} // closed when the first request has sent its piece, and when it was cut
	mu             sync.Mutex
	requests       [][]byte // the messages of each request
}

func newCutModel(t *testing.T) *cutModel {
	m := &cutModel{streaming: make(chan struct{}), cut: make(chan struct{})}
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages json.RawMessage `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		m.mu.Lock()
		m.requests = append(m.requests, req.Messages)
		n := len(m.requests)
		m.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(content, finish string) {
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":%s}]}\n\n", content, finish)
			w.(http.Flusher).Flush()
		}
		if n == 1 {
			chunk("the first worker starts ", "null")
			close(m.streaming)
			<-r.Context().Done()
			close(m.cut)
			return
		}
		chunk(cutModelReply(n), `"stop"`)
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(m.srv.Close)
	return m
}

// cutModelReply is the answer to request n, which names it.
func cutModelReply(n int) string { return fmt.Sprintf("answered by request %d", n) }

// waitClosed waits until ch is closed, failing the test with what was
// awaited if ctx ends first.
func waitClosed(ctx context.Context, t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-ctx.Done():
		t.Fatalf("waiting for %s: %v", what, ctx.Err())
	}
}
