package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/api/serviceerror"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// fakeTemporal is a Temporal client whose workflow takes updates and
// signals as a server would: an update id is run once, a validator may
// refuse, and answers may be late. Only what the queue uses is there.
type fakeTemporal struct {
	sdkclient.Client

	mu       sync.Mutex
	log      []string            // what the workflow took, in order: "name:arg"
	known    map[string]*fakeRun // update id → its outcome
	inFlight int                 // UpdateWorkflow calls under way
	maxIn    int

	// Hooks, all optional.
	delay    func(arg string) time.Duration // before an update is taken
	refuse   func(name, arg string) string  // a validator's refusal
	lostOnce map[string]bool                // args whose first UpdateWorkflow answer is lost
	lateGets map[string][]error             // errors the answer's first polls return, by arg
	// goesOn names the update whose turn went on in a later run, when the
	// update (name, arg, id) is answered so; "" to answer it.
	goesOn func(name, arg, id string) string
}

// fakeRun is one update the workflow took.
type fakeRun struct {
	name, arg string
	refusal   string
}

func newFake() *fakeTemporal { return &fakeTemporal{known: map[string]*fakeRun{}} }

func argText(args []any) string {
	if len(args) == 0 || args[0] == nil {
		return ""
	}
	if s, ok := args[0].(string); ok {
		return s
	}
	b, _ := json.Marshal(args[0])
	return string(b)
}

func (f *fakeTemporal) UpdateWorkflow(ctx context.Context, o sdkclient.UpdateWorkflowOptions) (sdkclient.WorkflowUpdateHandle, error) {
	if o.WaitForStage != sdkclient.WorkflowUpdateStageAccepted {
		return nil, fmt.Errorf("the queue waits for acceptance, not %v", o.WaitForStage)
	}
	arg := argText(o.Args)
	f.mu.Lock()
	f.inFlight++
	f.maxIn = max(f.maxIn, f.inFlight)
	delay := time.Duration(0)
	if f.delay != nil {
		delay = f.delay(arg)
	}
	f.mu.Unlock()
	defer func() { f.mu.Lock(); f.inFlight--; f.mu.Unlock() }()
	select {
	case <-time.After(delay):
	case <-ctx.Done():
		return nil, sdkclient.NewWorkflowUpdateServiceTimeoutOrCanceledError(ctx.Err())
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	run, ok := f.known[o.UpdateID]
	if !ok {
		run = &fakeRun{name: o.UpdateName, arg: arg}
		if f.refuse != nil {
			run.refusal = f.refuse(o.UpdateName, arg)
		}
		f.known[o.UpdateID] = run
		if run.refusal == "" {
			f.log = append(f.log, o.UpdateName+":"+arg)
		}
	}
	if f.lostOnce[arg] {
		delete(f.lostOnce, arg)
		return nil, serviceerror.NewUnavailable("connection reset; the answer was lost")
	}
	return &fakeHandle{f: f, id: o.UpdateID, run: run}, nil
}

func (f *fakeTemporal) GetWorkflowUpdateHandle(o sdkclient.GetWorkflowUpdateHandleOptions) sdkclient.WorkflowUpdateHandle {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &fakeHandle{f: f, id: o.UpdateID, run: f.known[o.UpdateID], polled: true}
}

func (f *fakeTemporal) SignalWorkflow(_ context.Context, _, _, name string, arg any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, name+":"+argText([]any{arg}))
	return nil
}

func (f *fakeTemporal) taken() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.log...)
}

// fakeHandle answers as the SDK's handles do: a refusal at once; an
// accepted update by asking the server, which fails at once with an ended
// context.
type fakeHandle struct {
	f      *fakeTemporal
	id     string
	run    *fakeRun
	polled bool
}

func (h *fakeHandle) WorkflowID() string { return "s" }
func (h *fakeHandle) RunID() string      { return "run-1" }
func (h *fakeHandle) UpdateID() string   { return h.id }

func (h *fakeHandle) Get(ctx context.Context, out any) error {
	if h.run == nil {
		return serviceerror.NewNotFound("update not found")
	}
	if h.run.refusal != "" {
		return temporal.NewApplicationError(h.run.refusal, "")
	}
	if ctx.Err() != nil {
		return sdkclient.NewWorkflowUpdateServiceTimeoutOrCanceledError(ctx.Err())
	}
	if !h.polled {
		return errors.New("the test answers from GetWorkflowUpdateHandle only")
	}
	h.f.mu.Lock()
	if errs := h.f.lateGets[h.run.arg]; len(errs) > 0 {
		h.f.lateGets[h.run.arg] = errs[1:]
		h.f.mu.Unlock()
		return errs[0]
	}
	h.f.mu.Unlock()
	if h.f.goesOn != nil {
		if id := h.f.goesOn(h.run.name, h.run.arg, h.id); id != "" {
			return temporal.NewNonRetryableApplicationError("the turn goes on", api.ErrTypeTurnGoesOn, nil, api.TurnGoesOn{UpdateID: id})
		}
	}
	if out == nil {
		return nil
	}
	b, _ := json.Marshal("reply to " + h.run.arg)
	return json.Unmarshal(b, out)
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Four lines typed fast reach the session in the order they were typed,
// each accepted before the next is sent, however long acceptance takes.
func TestSendKeepsOrder(t *testing.T) {
	f := newFake()
	// The first message takes longest to be accepted: a sender per
	// message would let the others overtake it.
	f.delay = func(arg string) time.Duration {
		return map[string]time.Duration{"m1": 60 * time.Millisecond, "m2": 30 * time.Millisecond, "m3": 10 * time.Millisecond}[arg]
	}
	ctx := testCtx(t)
	s := New(f, Options{}).Session("s")
	var sent []*Sent
	for _, m := range []string{"m1", "m2", "m3", "m4"} {
		sent = append(sent, s.Send(ctx, m))
	}
	for i, m := range sent {
		reply, err := m.Reply(ctx)
		if err != nil || reply != fmt.Sprintf("reply to m%d", i+1) {
			t.Errorf("message %d: %q, %v", i+1, reply, err)
		}
	}
	want := "send_message:m1 send_message:m2 send_message:m3 send_message:m4"
	if got := strings.Join(f.taken(), " "); got != want {
		t.Errorf("the session took %s; want %s", got, want)
	}
	if f.maxIn != 1 {
		t.Errorf("%d updates were sent at once; want one at a time", f.maxIn)
	}
}

// Everything asked of a session shares the queue: an end asked after a
// message reaches the session after it, and the same id is the same queue.
func TestQueueIsShared(t *testing.T) {
	f := newFake()
	f.delay = func(arg string) time.Duration {
		if arg == "last words" {
			return 50 * time.Millisecond
		}
		return 0
	}
	ctx := testCtx(t)
	c := New(f, Options{})
	m := c.Session("s").Send(ctx, "last words")
	if err := c.Session("s").End(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Accepted(ctx); err != nil {
		t.Fatal(err)
	}
	want := "send_message:last words end_session:"
	if got := strings.Join(f.taken(), " "); got != want {
		t.Errorf("the session took %s; want %s", got, want)
	}
}

// A message whose acceptance was lost on the way is sent again with the
// same update id, and taken once.
func TestSendAgainAfterLostAnswer(t *testing.T) {
	f := newFake()
	f.lostOnce = map[string]bool{"hello": true}
	ctx := testCtx(t)
	s := New(f, Options{}).Session("s")
	reply, err := s.Send(ctx, "hello").Reply(ctx)
	if err != nil || reply != "reply to hello" {
		t.Fatalf("reply %q, %v", reply, err)
	}
	if got := f.taken(); len(got) != 1 {
		t.Errorf("the session took %q; want the message once", got)
	}
	// The caller's own retry, under the first id, is answered once too.
	first := s.SendWithID(ctx, "u-1", "again")
	if _, err := first.Reply(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SendWithID(ctx, "u-1", "again").Reply(ctx); err != nil {
		t.Fatal(err)
	}
	if got := f.taken(); len(got) != 2 || first.UpdateID() != "u-1" {
		t.Errorf("the session took %q (id %q); want each message once", got, first.UpdateID())
	}
}

// An accepted message whose answer is late (a worker restarted mid-turn,
// the server timed the poll out) is answered, not reported unsent.
func TestReplyAfterRestart(t *testing.T) {
	f := newFake()
	f.lateGets = map[string][]error{"slow": {
		sdkclient.NewWorkflowUpdateServiceTimeoutOrCanceledError(serviceerror.NewDeadlineExceeded("Timeout expired")),
		serviceerror.NewUnavailable("history service restarting"),
	}}
	ctx := testCtx(t)
	m := New(f, Options{}).Session("s").Send(ctx, "slow")
	if err := m.Accepted(ctx); err != nil {
		t.Fatalf("accepted: %v", err)
	}
	reply, err := m.Reply(ctx)
	if err != nil || reply != "reply to slow" {
		t.Fatalf("reply %q, %v; want the answer after the late polls", reply, err)
	}

	// When the caller stops waiting, the error says the message was taken.
	f.lateGets["slower"] = []error{sdkclient.NewWorkflowUpdateServiceTimeoutOrCanceledError(serviceerror.NewDeadlineExceeded("Timeout expired"))}
	m = New(f, Options{}).Session("s").Send(ctx, "slower")
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := m.Reply(short); err == nil || !strings.Contains(err.Error(), "accepted, not answered yet") {
		t.Errorf("reply error %v; want accepted, not answered yet", err)
	}
}

// A refused message is the workflow's own words, and the queue goes on; a
// message whose context ended before it was sent is not sent.
func TestRefusedAndNotSent(t *testing.T) {
	f := newFake()
	f.refuse = func(name, arg string) string {
		if arg == "" {
			return "send_message needs a text"
		}
		return ""
	}
	ctx := testCtx(t)
	s := New(f, Options{}).Session("s")
	refused := s.Send(ctx, "")
	next := s.Send(ctx, "next")
	err := refused.Accepted(ctx)
	var r *RefusedError
	if !errors.As(err, &r) || err.Error() != "send_message needs a text" {
		t.Errorf("refused: %v (%T); want the validator's words", err, err)
	}
	if _, err := refused.Reply(ctx); !errors.As(err, &r) {
		t.Errorf("the refused message's reply: %v", err)
	}
	if _, err := next.Reply(ctx); err != nil {
		t.Errorf("the message after a refused one: %v", err)
	}

	gone, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Send(gone, "never").Accepted(ctx); err == nil || !strings.Contains(err.Error(), "not sent") {
		t.Errorf("a message whose context ended: %v; want not sent", err)
	}
}

// An approval names what the caller was shown: the tool call by its
// call_id, else the plan.
func TestAnswers(t *testing.T) {
	st := api.State{AgentID: "main", Status: api.StatusAwaitingApproval,
		PendingApproval: &api.PendingApproval{CallID: "call_7", Tool: "write_file"}}
	if a := AnswerTo(st, ""); a.CallID != "call_7" {
		t.Errorf("AnswerTo = %+v; want call_7", a)
	}
	if a := AnswerTo(api.State{AgentID: "main"}, ""); a.CallID != "" {
		t.Errorf("AnswerTo a plan wait = %+v; want no call", a)
	}

	f := newFake()
	ctx := testCtx(t)
	s := New(f, Options{}).Session("s")
	if _, err := s.Approve(ctx, Answer{CallID: "call_7", Remember: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reject(ctx, Answer{Feedback: "smaller steps", Remember: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Approve(ctx, Answer{Remember: true}); err == nil {
		t.Error("remember without a call was sent")
	}
	want := []string{
		`approve_tool:{"approved":true,"feedback":"","call_id":"call_7","remember":true}`,
		`approve_plan:{"approved":false,"feedback":"smaller steps"}`,
	}
	if got := f.taken(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the session took\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A message whose turn was handed over to a later run, twice, gets the
// turn's reply: Reply follows it with turn_reply, under ids of its own, as
// often as it goes on.
func TestReplyFollowsAHandedOverTurn(t *testing.T) {
	f := newFake()
	first := "" // the first turn_reply's id, which goes on too
	f.goesOn = func(name, arg, id string) string {
		if name == api.TurnReplyUpdate && first == "" {
			first = id
		}
		if name == api.SendMessageUpdate || id == first {
			return "u1"
		}
		return ""
	}
	s := New(f, Options{}).Session("s")
	reply, err := s.SendWithID(testCtx(t), "u1", "hello").Reply(testCtx(t))
	const follow = `turn_reply:{"update_id":"u1"}`
	if err != nil || reply != `reply to {"update_id":"u1"}` {
		t.Fatalf("reply %q, %v; want the turn_reply's answer", reply, err)
	}
	if got := strings.Join(f.taken(), " "); got != "send_message:hello "+follow+" "+follow {
		t.Errorf("sent %s; want the message, then turn_reply twice", got)
	}
}

// The turn_reply that follows a turn asks under an update id no one can
// work out from the message's (issue 36: an update registered first under
// "<id>/reply-1" had its answer shown as the turn's reply), and under the
// same id when the caller asks for the reply again, which the server then
// answers once.
func TestFollowIDsAreRandomAndKept(t *testing.T) {
	tests := []struct {
		name string
		// planted are updates someone else registered first, by id.
		planted     map[string]*fakeRun
		asks        int // how many times the caller asks for the reply
		wantFollows int // turn_reply updates the session takes
	}{
		{"an update planted under the predictable id", map[string]*fakeRun{
			"u1/reply-1": {name: api.SendMessageUpdate, arg: "planted"},
		}, 1, 1},
		{"the reply asked for three times", nil, 3, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			f.goesOn = func(name, arg, _ string) string {
				if name == api.SendMessageUpdate && arg == "hello" {
					return "u1"
				}
				return ""
			}
			maps.Copy(f.known, tt.planted)
			m := New(f, Options{}).Session("s").SendWithID(testCtx(t), "u1", "hello")
			for range tt.asks {
				reply, err := m.Reply(testCtx(t))
				if err != nil || reply != `reply to {"update_id":"u1"}` {
					t.Fatalf("reply %q, %v; want the turn_reply's answer", reply, err)
				}
			}
			follows := 0
			for _, s := range f.taken() {
				if strings.HasPrefix(s, api.TurnReplyUpdate+":") {
					follows++
				}
			}
			if follows != tt.wantFollows {
				t.Errorf("the session took %d turn_reply updates, want %d: %q", follows, tt.wantFollows, f.taken())
			}
			for id := range f.known {
				if strings.HasPrefix(id, "u1/") && tt.planted[id] == nil {
					t.Errorf("a turn_reply asked under %q, an id worked out from the message's", id)
				}
			}
		})
	}
}

func TestTransient(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{sdkclient.NewWorkflowUpdateServiceTimeoutOrCanceledError(serviceerror.NewDeadlineExceeded("Timeout expired")), true},
		{serviceerror.NewUnavailable("Workflow Update was aborted."), true},
		{serviceerror.NewDeadlineExceeded("timeout"), true},
		{serviceerror.NewResourceExhausted(0, "busy"), true},
		{serviceerror.NewFailedPrecondition("no poller seen for task queue recently, worker may be down"), true},
		{serviceerror.NewNotFound("workflow not found"), false},
		{serviceerror.NewWorkflowNotReady("workflow task failed"), false},
		{temporal.NewApplicationError("no tool call is waiting for approval", ""), false},
		{errors.New("something else"), false},
	} {
		if got := transient(tt.err); got != tt.want {
			t.Errorf("transient(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

func TestWrap(t *testing.T) {
	s := New(newFake(), Options{}).Session("s-1")
	for _, tt := range []struct {
		err        error
		is         error
		want       string
		wantRefuse bool
	}{
		{serviceerror.NewNotFound("workflow not found for ID: s-1"), ErrNoSession, "send s-1: no such session", false},
		{serviceerror.NewNotFound("workflow execution already completed"), ErrEnded, "send s-1: the session has ended", false},
		{temporal.NewApplicationError("no plan waits for approval", "x"), nil, "no plan waits for approval", true},
		{errors.New("dial tcp: refused"), nil, "send s-1: dial tcp: refused", false},
	} {
		err := s.wrap("send", tt.err)
		if err.Error() != tt.want || (tt.is != nil && !errors.Is(err, tt.is)) {
			t.Errorf("wrap(%v) = %v; want %q", tt.err, err, tt.want)
		}
		var r *RefusedError
		if errors.As(err, &r) != tt.wantRefuse {
			t.Errorf("wrap(%v) refused: %v, want %v", tt.err, !tt.wantRefuse, tt.wantRefuse)
		}
	}
}
