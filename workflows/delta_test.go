package workflows

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
	"github.com/todoflow/todoflow/transcript"
)

// cachingWorker plays a worker with a transcript cache: its CallModel reads
// the call's spans from the cache, fed only by the calls' new messages, and
// its RunTool reads the call from there. The test environment has no query
// to read what the cache lacks: such a call fails the test.
type cachingWorker struct {
	t      *testing.T
	cache  *transcript.Cache
	inputs []activities.CallModelInput
	read   [][]model.Message         // what each model call was sent
	mu     sync.Mutex                // RunTools run at once
	tools  map[string]model.ToolCall // by id, the calls RunTool ran
	byRef  map[string]bool           // by id, whether it read the call by reference
	// answer answers the nth model call (summaries aside, which answer
	// summary); tools answer toolResult, or what they ran.
	answer     func(n int) (model.Response, error)
	n          int
	summary    string
	toolResult string
	// recordOnly keeps the inputs and reads nothing.
	recordOnly bool
}

func (w *cachingWorker) register(env *testsuite.TestWorkflowEnvironment) {
	w.cache = transcript.NewCache(0)
	w.tools, w.byRef = map[string]model.ToolCall{}, map[string]bool{}
	registerHost(env)
	env.RegisterActivityWithOptions(func(_ context.Context, in activities.CallModelInput) (model.Response, error) {
		w.inputs = append(w.inputs, in)
		if in.New == nil {
			w.t.Fatalf("call %d carries no new messages", in.Call)
		}
		if !w.recordOnly {
			msgs, err := w.cache.Read(in.WorkflowID, in.RunID, in.New, in.Spans, func(spans []transcript.Span) ([]model.Message, error) {
				w.t.Errorf("call %d: the cache lacks %v", in.Call, spans)
				return nil, fmt.Errorf("call %d: the cache lacks %v", in.Call, spans)
			})
			if err != nil {
				return model.Response{}, temporal.NewNonRetryableApplicationError(err.Error(), "Test", nil)
			}
			w.read = append(w.read, msgs)
		}
		if in.Summarize != nil {
			return model.Response{Content: w.summary}, nil
		}
		w.n++
		resp, err := w.answer(w.n)
		if err != nil {
			return model.Response{}, err
		}
		for i := range resp.ToolCalls {
			resp.ToolCalls[i].ID = fmt.Sprintf("c%d_%d", in.Call, i)
		}
		w.cache.Answer(in.WorkflowID, in.RunID, in.New.Epoch, in.New.From+len(in.New.Messages),
			model.Message{Role: model.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls})
		return resp, nil
	}, activity.RegisterOptions{Name: api.ModelCallActivity})
	env.RegisterActivityWithOptions(func(ctx context.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
		if w.toolResult != "" {
			return activities.RunToolResult{Content: w.toolResult}, nil
		}
		c := in.Call // small arguments travel with the call
		exec := activity.GetInfo(ctx).WorkflowExecution
		if in.From != nil {
			var ok bool
			if c, ok = w.cache.Call(exec.ID, exec.RunID, *in.From, in.Call.ID); !ok {
				w.t.Errorf("RunTool %s: the call is not in the cache (ref %+v)", in.Call.ID, *in.From)
			}
		}
		w.mu.Lock()
		w.tools[in.Call.ID] = c
		w.byRef[in.Call.ID] = in.From != nil
		w.mu.Unlock()
		res := activities.RunToolResult{Content: "ran " + c.Name + " " + string(c.Arguments)}
		w.cache.Remember(exec.ID, exec.RunID, res.Content) // as RunTool does
		return res, nil
	}, activity.RegisterOptions{Name: api.ToolActivity})
}

// sendThenEnd sends text by update a minute in, and ends the session a
// minute later.
func sendThenEnd(t *testing.T, env *testsuite.TestWorkflowEnvironment, text string) {
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(api.SendMessageUpdate, "m", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("refused: %v", err) }, OnComplete: func(any, error) {},
		}, text)
	}, time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 2*time.Minute)
}

// spanned is msgs cut to spans.
func spanned(msgs []model.Message, spans []transcript.Span) []model.Message {
	var out []model.Message
	for _, sp := range spans {
		out = append(out, msgs[sp.Start:sp.End]...)
	}
	return out
}

func sameTranscript(t *testing.T, what string, got, want []model.Message) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d messages, want %d", what, len(got), len(want))
		return
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Role != w.Role || g.Name != w.Name || g.Content != w.Content || g.ToolCallID != w.ToolCallID || len(g.ToolCalls) != len(w.ToolCalls) {
			t.Errorf("%s: message %d = %+v, want %+v", what, i, g, w)
			return
		}
	}
}

// Each model call carries the messages added since the previous one, once:
// a worker that took every call serves every call from its cache. A tool
// call carries its small arguments; large ones it reads by reference, from
// the cache.
func TestModelCallsCarryTheirNewMessages(t *testing.T) {
	large := strings.Repeat("x", transcript.HeldOver)
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	responses := []model.Response{
		calls(call("write_todos", `{"todos":[{"content":"Find","status":"in_progress"}]}`)),
		calls(call("read_file", `{"path":"a.go"}`), call("todo_read", `{}`), call("write_file", `{"path":"b.go","content":"`+large+`"}`)),
		calls(call("write_todos", `{"todos":[{"content":"Find","status":"completed"}]}`)),
		{Content: "Found."},
	}
	w := &cachingWorker{t: t, answer: func(n int) (model.Response, error) {
		if n > len(responses) {
			return model.Response{Content: "Nothing more."}, nil
		}
		return responses[n-1], nil
	}}
	w.register(env)
	sendThenEnd(t, env, "and again")
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "Find it.", IdleTimeoutS: 600})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	final := queryMessages(t, env)
	if len(w.inputs) != 5 {
		t.Fatalf("%d model calls, want 5", len(w.inputs))
	}
	next := 0
	for i, in := range w.inputs {
		if in.New.From != next || in.New.Epoch != 0 {
			t.Errorf("call %d: new messages from %d (epoch %d), want from %d", in.Call, in.New.From, in.New.Epoch, next)
		}
		next = in.New.From + len(in.New.Messages)
		sameTranscript(t, fmt.Sprintf("call %d", in.Call), w.read[i], spanned(final, in.Spans))
	}
	// Every message before the last call was sent once; the last answer
	// was not sent at all.
	if next != len(final)-1 {
		t.Errorf("the calls sent %d messages of %d", next, len(final))
	}
	if len(w.tools) != 2 || w.tools["c2_0"].Name != "read_file" || string(w.tools["c2_0"].Arguments) != `{"path":"a.go"}` ||
		string(w.tools["c2_2"].Arguments) != `{"path":"b.go","content":"`+large+`"}` {
		t.Errorf("RunTool ran %d calls: %v", len(w.tools), w.byRef)
	}
	if w.byRef["c2_0"] || !w.byRef["c2_2"] {
		t.Errorf("by reference: %v; want the large call alone", w.byRef)
	}
}

// A continued run's first call sends only what came after the carried
// messages, which are in the run's input already: a worker reads them from
// the run's first event.
func TestContinuedRunDoesNotSendItsCarriedMessages(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	carried := []model.Message{
		{Role: model.RoleSystem, Content: "system", ToolCalls: []model.ToolCall{}},
		{Role: model.RoleUser, Content: "first", ToolCalls: []model.ToolCall{}},
		{Role: model.RoleAssistant, Content: "answered", ToolCalls: []model.ToolCall{}},
	}
	var seen []activities.CallModelInput
	env.RegisterActivityWithOptions(func(_ context.Context, in activities.CallModelInput) (model.Response, error) {
		seen = append(seen, in)
		return model.Response{Content: "again"}, nil
	}, activity.RegisterOptions{Name: api.ModelCallActivity})
	env.SetContinuedExecutionRunID("the-run-before")
	env.ExecuteWorkflow(AgentWorkflow, withCarry(t, api.AgentInput{IdleTimeoutS: 1}, &Carry{Window: WindowCarry{Messages: carried}, Inbox: InboxCarry{Queue: []Inbound{{Text: "second"}}}, Session: SessionCarry{Turns: 1, ModelCalls: 1}}))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 {
		t.Fatalf("%d model calls", len(seen))
	}
	nm := seen[0].New
	if nm == nil || nm.From != 3 || len(nm.Messages) != 1 || nm.Messages[0].Content != "second" {
		t.Errorf("the continued run's first call carries %+v; want only the new message, from 3", nm)
	}
	if nm != nil && !slices.Equal(nm.Carried, transcript.MessageDigests(carried)) {
		t.Errorf("the carried messages' digests are %q, want %q", nm.Carried, transcript.MessageDigests(carried))
	}
}

// A failed turn run again takes back its failure notice. When a model call
// had been sent it (a compaction between the turns), the workers' copies
// are void: the retry's call counts a new epoch, and a worker that kept the
// notice reads the transcript again rather than send it to the model.
func TestRetryAfterTheNoticeWasSentStartsANewEpoch(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	read := calls(call("read_file", `{"path":"a"}`))
	failing := true
	// Three reads of 10,000 tokens each fit a budget of 40,000; the
	// compaction keeps 20,000 of them, so it summarises (in vain: the
	// summary is empty) what comes before, the notice included.
	w := &cachingWorker{t: t, recordOnly: true, toolResult: strings.Repeat("x", 30_000), answer: func(n int) (model.Response, error) {
		switch {
		case n <= 3:
			return read, nil
		case n == 4:
			return model.Response{Content: "first turn done"}, nil
		case n == 5 && failing:
			return model.Response{}, temporal.NewNonRetryableApplicationError("openai: 400 bad request", activities.ErrTypeModel, nil)
		}
		return model.Response{Content: "second turn done"}, nil
	}}
	w.register(env)
	var compacted api.CompactResult
	var retried string
	update := func(name string, args ...any) func(func(any)) {
		return func(done func(any)) {
			env.UpdateWorkflow(name, name, &testsuite.TestUpdateCallback{
				OnReject: func(err error) { t.Errorf("%s refused: %v", name, err) }, OnComplete: func(r any, _ error) { done(r) },
			}, args...)
		}
	}
	env.RegisterDelayedCallback(func() { update(api.SendMessageUpdate, "second")(func(any) {}) }, time.Minute)
	env.RegisterDelayedCallback(func() { update(api.CompactContextUpdate)(func(r any) { compacted, _ = r.(api.CompactResult) }) }, 2*time.Minute)
	env.RegisterDelayedCallback(func() {
		failing = false
		update(api.RetryTurnUpdate)(func(r any) { retried, _ = r.(string) })
	}, 3*time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 4*time.Minute)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "read", IdleTimeoutS: 600, Context: api.ContextConfig{MaxTokens: 40_000}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if retried != "second turn done" || !strings.Contains(compacted.Message, "Dropped") {
		t.Fatalf("retry_turn = %q, compact_context = %+v", retried, compacted)
	}
	final := queryMessages(t, env)
	last := w.inputs[len(w.inputs)-1]
	prev := w.inputs[len(w.inputs)-2]
	notice := len(final) - 1 // where the notice was, before the retry's answer took its place
	if prev.Summarize == nil || prev.New.From+len(prev.New.Messages) != notice+1 || prev.New.Messages[len(prev.New.Messages)-1].Name != api.NameModelError {
		t.Fatalf("the call before the retry is not the summary that was sent the notice: %+v", prev)
	}
	if last.New.Epoch != 1 || last.New.From != notice || len(last.New.Messages) != 0 {
		t.Errorf("the retry's call: new messages %+v; want none, from %d, epoch 1", last.New, notice)
	}
	// A worker that took every call: for the retry it reads the transcript
	// again, and sends what the workflow holds, without the notice.
	cache := transcript.NewCache(0)
	for _, in := range w.inputs[:len(w.inputs)-1] {
		if _, err := cache.Read(in.WorkflowID, in.RunID, in.New, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	queried := 0
	got, err := cache.Read(last.WorkflowID, last.RunID, last.New, last.Spans, func(spans []transcript.Span) ([]model.Message, error) {
		queried++
		return spanned(final, spans), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sameTranscript(t, "the retry's call", got, spanned(final, last.Spans))
	if queried != 1 {
		t.Errorf("%d queries for the retry's call, want 1", queried)
	}
}

// A call an older build scheduled failed for want of a message it left
// out (transcript.ErrTypeHole): the turn fails and says why, and the next
// call sends the transcript again from that message, which it sends whole.
func TestAMessageNoReaderFindsIsSentWhole(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	prompt := strings.Repeat("p", transcript.HeldOver+1) // left out: it is in the run's input
	w := &cachingWorker{t: t, recordOnly: true, answer: func(n int) (model.Response, error) {
		if n == 1 {
			return model.Response{}, temporal.NewNonRetryableApplicationError("messages [1,2) are nowhere: scheduled by an older build; resend the message", transcript.ErrTypeHole, nil, 1)
		}
		return model.Response{Content: "done"}, nil
	}}
	w.register(env)
	sendThenEnd(t, env, "again")
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: prompt, IdleTimeoutS: 600})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if len(w.inputs) != 2 {
		t.Fatalf("%d model calls, want 2", len(w.inputs))
	}
	if first := w.inputs[0].New; len(first.Held) != 1 || first.Messages[1].Content != "" {
		t.Fatalf("the first call carries %+v; want the prompt left out", first.Held)
	}
	msgs := queryMessages(t, env)
	if msgs[2].Name != api.NameModelError || !strings.Contains(msgs[2].Content, "older build") {
		t.Errorf("the failed turn's reply is %+v; want it to name the older build", msgs[2])
	}
	nm := w.inputs[1].New
	if nm.From != 1 || nm.Messages[0].Content != prompt || slices.ContainsFunc(nm.Held, func(h transcript.Held) bool { return h.Index == 0 }) {
		t.Errorf("the next call sends from %d, held %+v; want from 1, the prompt whole", nm.From, nm.Held)
	}
}

// A field of the workflow's own making (here a message cut to fit the
// inbox) that a call leaves out is recorded in a marker (patch
// record-made); a run an older build started, which takes no patch, sends
// it whole instead.
func TestAFieldTheWorkflowMadeIsToldOrSentWhole(t *testing.T) {
	for _, takesPatch := range []bool{true, false} {
		t.Run(fmt.Sprintf("patched %v", takesPatch), func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			if !takesPatch {
				env.OnGetVersion(patchRecordMade, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
			}
			w := &cachingWorker{t: t, recordOnly: true, answer: func(int) (model.Response, error) { return model.Response{Content: "ok"}, nil }}
			w.register(env)
			env.RegisterDelayedCallback(func() {
				env.SignalWorkflow(api.UserMessageSignal, strings.Repeat("a long paste. ", todo.MaxMessageBytes/10))
			}, time.Second)
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, time.Minute)
			env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{IdleTimeoutS: 600})
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			if len(w.inputs) != 1 {
				t.Fatalf("%d model calls, want 1", len(w.inputs))
			}
			nm := w.inputs[0].New
			cut := nm.Messages[len(nm.Messages)-1]
			if held := len(nm.Held) == 1 && cut.Content == ""; held != takesPatch {
				t.Errorf("the cut message (%d bytes sent, held %+v) is left out: %v, want %v", len(cut.Content), nm.Held, held, takesPatch)
			}
		})
	}
}
