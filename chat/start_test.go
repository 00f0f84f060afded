package chat

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	tea "charm.land/bubbletea/v2"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"

	"github.com/todoflow/todoflow/client"
)

// starts is a Temporal client that records the sessions started on it
// (failing them with err) and, through acceptor, the messages sent.
type starts struct {
	*acceptor
	mu      sync.Mutex
	started []sdkclient.StartWorkflowOptions
	inputs  []api.AgentInput
	err     error
}

func (f *starts) ExecuteWorkflow(_ context.Context, o sdkclient.StartWorkflowOptions, _ any, args ...any) (sdkclient.WorkflowRun, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	f.started = append(f.started, o)
	f.inputs = append(f.inputs, args[0].(api.AgentInput))
	return run{id: o.ID}, nil
}

// DescribeWorkflowExecution fails: the watch of a session started here
// has nothing to look at.
func (f *starts) DescribeWorkflowExecution(context.Context, string, string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	return nil, serviceerror.NewUnavailable("no server in this test")
}

func (f *starts) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.started)
}

type run struct {
	sdkclient.WorkflowRun
	id string
}

func (r run) GetID() string    { return r.id }
func (r run) GetRunID() string { return "run-1" }

// newChat is a terminal view of a new session, not started yet, on f.
func newChat(t *testing.T, f *starts) *ui {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c := client.New(f, client.Options{})
	u := newUI(ctx, &session{id: "chat-new", pending: &newSession{c: c, model: "script:x.json"}}, nil)
	u.client, u.model, u.poll = c, "script:x.json", time.Hour
	return u
}

// typed submits lines as typed in a row, and returns the commands they
// gave, nil ones left out.
func typed(u *ui, lines ...string) []tea.Cmd {
	var cmds []tea.Cmd
	for _, l := range lines {
		u.input.SetValue(l)
		if _, cmd := u.submit(); cmd != nil {
			cmds = append(cmds, cmd)
		}
	}
	return cmds
}

// A new session starts with its first message, as its prompt (its summary
// in the Web UI is that message); what is typed before the start is done
// is sent after it, in order. Until the first message nothing is started.
func TestFirstMessageStartsTheSession(t *testing.T) {
	f := &starts{acceptor: &acceptor{}}
	u := newChat(t, f)
	if v := u.View().Content; !strings.Contains(v, "type your first message") {
		t.Errorf("a new session's view does not ask for the first message:\n%s", v)
	}
	// What needs the session says it does not exist yet; nothing starts.
	if cmds := typed(u, "/todos", "/model script:y.json"); len(cmds) != 2 || f.count() != 0 {
		t.Fatalf("commands before the first message: %d commands, %d sessions started", len(cmds), f.count())
	}
	// A model no session can run is refused, and the one set stays.
	cmds := typed(u, "/model gpt-4o")
	if len(cmds) != 1 || u.sess.pending.model != "script:y.json" {
		t.Fatalf("/model gpt-4o: %d commands, model %q", len(cmds), u.sess.pending.model)
	}
	if said := fmt.Sprint(cmds[0]()); !strings.Contains(said, `/model: model \"gpt-4o\": want openai:<model name>`) && !strings.Contains(said, `/model: model "gpt-4o": want openai:<model name>`) {
		t.Errorf("/model gpt-4o printed %s", said)
	}

	cmds = typed(u, "first message\nwith a second line", "m2", "m3", "m4")
	if len(cmds) != 1 {
		t.Fatalf("%d commands for four messages typed during the start, want one: the start", len(cmds))
	}
	if f.count() != 0 {
		t.Fatal("the session started before its start command ran")
	}
	if v := u.View().Content; !strings.Contains(v, "starting the session") || !strings.Contains(v, "queued: m4") {
		t.Errorf("the view during the start does not say so, or lacks the queue:\n%s", v)
	}
	msg, ok := cmds[0]().(startedMsg)
	if !ok || msg.err != nil {
		t.Fatalf("the start gave %+v", msg)
	}
	u.Update(msg)
	if got := f.acceptor.waitFor(t, 3); !slices.Equal(got, []string{"m2", "m3", "m4"}) {
		t.Errorf("sent after the start: %q, want m2 m3 m4", got)
	}
	if f.count() != 1 {
		t.Fatalf("%d sessions started, want one", f.count())
	}
	o, in := f.started[0], f.inputs[0]
	if o.ID != "chat-new" || in.Prompt != "first message\nwith a second line" || in.Model != "script:y.json" {
		t.Errorf("started %s with prompt %q, model %q; want chat-new, the first message, the model /model set", o.ID, in.Prompt, in.Model)
	}
	if o.StaticSummary != "first message" {
		t.Errorf("the run's summary is %q, want the first message's first line", o.StaticSummary)
	}
	if u.sess.pending != nil || u.sess.s == nil || u.looks == nil {
		t.Errorf("after the start the view does not watch the session")
	}
	if v := u.View().Content; strings.Contains(v, "type your first message") {
		t.Errorf("the view still asks for the first message:\n%s", v)
	}
}

// A start that fails says why and puts what was typed back at the prompt,
// the first message first; Enter tries again.
func TestFailedStartKeepsWhatWasTyped(t *testing.T) {
	f := &starts{acceptor: &acceptor{}, err: errors.New("connection refused")}
	u := newChat(t, f)
	cmds := typed(u, "first", "second")
	typeText(u, "third, being typed")
	msg := cmds[0]().(startedMsg)
	if _, cmd := u.Update(msg); cmd == nil {
		t.Error("the failed start printed nothing")
	}
	if got, want := u.input.Value(), "first\nsecond\nthird, being typed"; got != want {
		t.Errorf("the prompt holds %q, want %q", got, want)
	}
	if len(u.queued) != 0 || u.starting || u.sess.pending == nil {
		t.Errorf("after the failed start: queued %q, starting %v, pending %v", u.queued, u.starting, u.sess.pending)
	}
	f.err = nil
	cmds = typed(u, u.input.Value())
	u.Update(cmds[0]())
	if f.count() != 1 || f.inputs[0].Prompt != "first\nsecond\nthird, being typed" {
		t.Errorf("the second try started %d sessions (%+v)", f.count(), f.inputs)
	}
}

// Leaving a new session before its first message starts nothing; /clear
// makes a new session that its first message starts, too.
func TestLeavingANewSessionLeavesNothing(t *testing.T) {
	f := &starts{acceptor: &acceptor{}}
	u := newChat(t, f)
	u.Update(keyCtrlC)
	u.Update(keyCtrlC)
	if !u.quitting || f.count() != 0 || u.leftLine() != leftUnstarted {
		t.Errorf("two Ctrl+C: quitting %v, %d sessions started, last line %q", u.quitting, f.count(), u.leftLine())
	}

	u = newChat(t, f)
	u.Update(typed(u, "hello")[0]())
	typed(u, "/clear")
	if f.count() != 1 || u.sess.pending == nil || u.sess.id == "chat-new" || u.looks != nil {
		t.Fatalf("/clear: %d sessions started, pending %v, id %s", f.count(), u.sess.pending, u.sess.id)
	}
	u.Update(typed(u, "hello again")[0]())
	if f.count() != 2 || f.started[1].ID != u.sess.id || f.inputs[1].Prompt != "hello again" {
		t.Errorf("after /clear the first message started %+v", f.started)
	}
}

// The line mode starts a new session with the first line; input that ends
// before one leaves nothing on the server.
func TestLineModeLeavesNothingUnsent(t *testing.T) {
	f := &starts{acceptor: &acceptor{}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out strings.Builder
	sess := &session{id: "chat-new", pending: &newSession{c: client.New(f, client.Options{})}}
	if err := runPlain(ctx, sess, nil, strings.NewReader("/plan\n"), &out, nil); err != nil {
		t.Fatal(err)
	}
	if f.count() != 0 || !strings.Contains(out.String(), errNotStarted.Error()) || !strings.Contains(out.String(), leftUnstarted) {
		t.Errorf("%d sessions started; the output:\n%s", f.count(), out.String())
	}
}

// The server's silence is told as such, whatever the SDK calls it; other
// errors keep their own words.
func TestUnanswered(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("start session x: %w", context.DeadlineExceeded), true},
		{serviceerror.NewDeadlineExceeded("context deadline exceeded"), true},
		{serviceerror.NewUnavailable("connection refused"), true},
		{serviceerror.NewWorkflowExecutionAlreadyStarted("started", "", ""), false},
		{context.Canceled, false},
		{nil, false},
	} {
		if got := unanswered(tc.err); got != tc.want {
			t.Errorf("unanswered(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
