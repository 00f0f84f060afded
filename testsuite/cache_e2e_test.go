package testsuite

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/api"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// wireMessage is what a comparison of a request's message with a stored one
// looks at: who, what, and which calls it makes or answers.
func wireMessage(m map[string]any) string {
	var calls []string
	tcs, _ := m["tool_calls"].([]any)
	for _, tc := range tcs {
		c := tc.(map[string]any)
		fn := c["function"].(map[string]any)
		calls = append(calls, fmt.Sprintf("%v %v %v", c["id"], fn["name"], fn["arguments"]))
	}
	content := ""
	if c, ok := m["content"].(string); ok {
		content = c
	}
	return fmt.Sprintf("%v|%s|%v|%s", m["role"], content, m["tool_call_id"], strings.Join(calls, ";"))
}

func storedMessage(m model.Message) string {
	var calls []string
	for _, c := range m.ToolCalls {
		calls = append(calls, fmt.Sprintf("%s %s %s", c.ID, c.Name, c.Arguments))
	}
	id := any(nil)
	if m.ToolCallID != "" {
		id = m.ToolCallID
	}
	return fmt.Sprintf("%s|%s|%v|%s", m.Role, m.Content, id, strings.Join(calls, ";"))
}

// runMessages reads the whole transcript of a run (a run that continued as
// new still answers: a worker replays it).
func runMessages(t *testing.T, c client.Client, id, runID string) []model.Message {
	t.Helper()
	var out []model.Message
	for {
		v, err := c.QueryWorkflow(context.Background(), id, runID, api.MessagesQuery, len(out), 0)
		if err != nil {
			t.Fatal(err)
		}
		var page []model.Message
		if err := v.Get(&page); err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			return out
		}
		out = append(out, page...)
	}
}

// Model calls read their messages from the workers' transcript caches, fed
// by each call's new messages, and by query what a cache lacks: with two
// workers taking calls, one of them restarted (an empty cache) halfway, and the session continuing as new every few turns, every request
// the model gets is the transcript the workflow holds, and what a turn adds
// to history stays the same from the first turns to the last.
func TestTranscriptCacheEndToEnd(t *testing.T) {
	const turns = 24
	var answers []string
	for i := 1; i <= turns; i++ {
		answers = append(answers,
			toolCall(fmt.Sprintf("call_%d", i), "write_file", map[string]string{"path": fmt.Sprintf("f%d.txt", i), "content": strings.Repeat("x", 500)}),
			fmt.Sprintf(`{"role":"assistant","content":"Turn %d done."}`, i))
	}
	stub := newModelStub(t, answers...)
	t.Setenv("OPENAI_BASE_URL", stub.baseURL())
	t.Setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
	// About ten turns to a run.
	s := startServerTB(t, "limit.historyCount.suggestContinueAsNew=200")
	// Each worker its own state folder, hence host queue; the session's
	// tools run on the one it learns first.
	dirA := t.TempDir()
	stopA := s.startWorker(t, dirA)
	s.startWorker(t, t.TempDir())

	ctx := context.Background()
	id := "cache-e2e"
	run, err := s.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: api.TaskQueue}, api.WorkflowName,
		// No summaries: each request must be the stored transcript, which a
		// handover that summarises (the view outgrew the carry) would not send.
		api.AgentInput{Model: "openai:test-model", Todo: todoOff(), Context: api.ContextConfig{Summarize: new(bool)}})
	if err != nil {
		t.Fatal(err)
	}
	type mark struct{ events, bytes, runs int }
	var marks []mark
	seen := 0
	for turn := 1; turn <= turns; turn++ {
		if turn == turns/2 {
			// A restart: a new process on the same folder, its cache
			// empty.
			stopA()
			s.startWorker(t, dirA)
		}
		// The run that takes the turn: it may continue as new once the
		// turn is over.
		d, err := s.c.DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			t.Fatal(err)
		}
		runID := d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
		reply, err := sendMessage(ctx, s.c, id, fmt.Sprintf("message %d", turn))
		if err != nil || reply != fmt.Sprintf("Turn %d done.", turn) {
			t.Fatalf("turn %d: reply %q, %v", turn, reply, err)
		}
		// The turn's two requests are the transcript before each answer, in
		// the run that made each: the turn may have started in a later run
		// than the one described (a handover with the message queued), and
		// its second call may be in the next (a handover between the two).
		want := turnTranscripts(t, s.c, id, runID, fmt.Sprintf("message %d", turn), reply)
		reqs := stub.requests()
		if len(reqs) != seen+2 {
			t.Fatalf("turn %d: %d requests, want %d", turn, len(reqs), seen+2)
		}
		for k, want := range want {
			sent := reqs[seen+k].body["messages"].([]any)
			if len(sent) != len(want) {
				t.Fatalf("turn %d, request %d: %d messages sent, the transcript had %d", turn, k+1, len(sent), len(want))
			}
			for i := range want {
				if got, w := wireMessage(sent[i].(map[string]any)), storedMessage(want[i]); got != w {
					t.Fatalf("turn %d, request %d, message %d:\n sent   %s\n stored %s", turn, k+1, i, got, w)
				}
			}
		}
		seen += 2
		evs := historyOf(t, s.c, id)
		runs, _ := runsOf(ctx, s.c, id)
		marks = append(marks, mark{len(evs), historyBytes(evs), len(runs)})
	}
	_ = s.c.SignalWorkflow(ctx, id, "", api.EndSessionSignal, nil)
	if err := run.Get(ctx, nil); err != nil {
		t.Logf("the first run: %v", err)
	}

	// What a turn adds, leaving out the turns that continued as new (the
	// new run's input carries the transcript) and the first two.
	var first, last int
	for i := 2; i < len(marks); i++ {
		if marks[i].runs != marks[i-1].runs {
			continue
		}
		n := marks[i].bytes - marks[i-1].bytes
		if first == 0 {
			first = n
		}
		last = n
	}
	if runs := marks[len(marks)-1].runs; runs < 2 {
		t.Errorf("the session never continued as new (%d run)", runs)
	}
	if first == 0 || float64(last) > 1.15*float64(first) {
		t.Errorf("a turn adds %d bytes of history at the start and %d at the end; it should stay flat", first, last)
	}
	t.Logf("a turn adds %d bytes of history at the start, %d at the end; %d runs", first, last, marks[len(marks)-1].runs)
	// Each model call's input carries the messages new since the previous
	// call, so the largest input stays small however long the session.
	largest := 0
	for _, ev := range historyOf(t, s.c, id) {
		if ev.GetEventType() == enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED {
			largest = max(largest, proto.Size(ev.GetActivityTaskScheduledEventAttributes().GetInput()))
		}
	}
	if largest > 6<<10 {
		t.Errorf("the largest activity input is %d bytes", largest)
	}
}

// turnTranscripts are the transcripts a turn's two model requests were
// made from: the first run from runID whose transcript holds the turn's
// user message, up to it; and the transcript before the turn's reply, in
// that run or the next, which took the turn on after a handover.
func turnTranscripts(t *testing.T, c client.Client, id, runID, message, reply string) [2][]model.Message {
	t.Helper()
	runs, err := runsOf(context.Background(), c, id)
	if err != nil {
		t.Fatal(err)
	}
	var out [2][]model.Message
	found := false
	for _, r := range runs[max(0, slices.Index(runs, runID)):] {
		msgs := runMessages(t, c, id, r)
		if !found {
			i := slices.IndexFunc(msgs, func(m model.Message) bool { return m.Role == model.RoleUser && m.Content == message })
			if i < 0 {
				continue
			}
			out[0], found = msgs[:i+1], true
		}
		if j := slices.IndexFunc(msgs, func(m model.Message) bool { return m.Role == model.RoleAssistant && m.Content == reply }); j >= 0 {
			out[1] = msgs[:j]
			return out
		}
	}
	t.Fatalf("no run from %s holds %q and its reply %q (found the message: %v)", runID, message, reply, found)
	return out
}

// todoOff turns the todo list off, so that a turn is a tool call and a
// reply, without reminders.
func todoOff() todo.Config {
	off := false
	return todo.Config{Enabled: &off}
}
