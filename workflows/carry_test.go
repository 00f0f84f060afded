package workflows

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
	"go.temporal.io/sdk/testsuite"
)

func transcriptOfRoles(roles string, content string) []model.Message {
	var out []model.Message
	for _, r := range roles {
		role := map[rune]string{'s': model.RoleSystem, 'u': model.RoleUser, 'a': model.RoleAssistant, 't': model.RoleTool}[r]
		out = append(out, model.Message{Role: role, Content: content})
	}
	return out
}

func TestCompact(t *testing.T) {
	short := transcriptOfRoles("su"+strings.Repeat("at", 10), "x")
	if got := carriedMessages(short); len(got) != len(short) {
		t.Errorf("a short transcript was cut to %d", len(got))
	}
	long := transcriptOfRoles("su"+strings.Repeat("at", 100), "x")
	got := carriedMessages(long)
	if len(got) > 2+carryMessages || got[0].Role != model.RoleSystem || got[1].Role != model.RoleUser {
		t.Fatalf("compacted to %d messages, head %v %v", len(got), got[0].Role, got[1].Role)
	}
	if got[2].Role == model.RoleTool {
		t.Error("the tail starts on a tool result")
	}
	long[len(long)-1].Content = "newest"
	got = carriedMessages(long)
	if last := got[len(got)-1]; last.Content != "newest" {
		t.Error("the newest message was lost")
	}
	big := transcriptOfRoles("su"+strings.Repeat("at", 20), strings.Repeat("y", 64<<10))
	if n := size(carriedMessages(big)); n > carryBytes+size(big[:2]) {
		t.Errorf("compacted transcript is %d bytes, over the %d bound", n, carryBytes)
	}
}

// The context summary crosses continue-as-new with the head and the tail,
// however far before the tail it stands.
func TestCompactKeepsTheSummary(t *testing.T) {
	msgs := transcriptOfRoles("su"+strings.Repeat("at", 100), "x")
	summary := model.Message{Role: model.RoleUser, Name: api.NameContextSummary, Content: "what was decided"}
	msgs = append(msgs[:todo.Head], append([]model.Message{summary}, msgs[todo.Head:]...)...)
	got := carriedMessages(msgs)
	if len(got) > todo.Head+1+carryMessages || got[todo.Head].Name != api.NameContextSummary || got[todo.Head].Content != "what was decided" {
		t.Fatalf("carried %d messages, the one after the head %+v; want the summary kept", len(got), got[todo.Head])
	}
	if n := len(got) - todo.Head - 1; n != carryMessages && n != carryMessages-1 {
		t.Errorf("tail of %d messages, want about %d", n, carryMessages)
	}
}

// readMoreThanTheCarry is a model answer whose tool results alone are more
// messages than a carry holds.
func readMoreThanTheCarry() model.Response {
	var reads []model.ToolCall
	for i := range carryMessages {
		reads = append(reads, call("read_file", fmt.Sprintf(`{"path":"f%d"}`, i)))
	}
	return calls(reads...)
}

// A session whose view is larger than the carry summarises before it hands
// over: the continuation carries a context summary standing for what the
// carry leaves out, not only the last carryMessages messages.
func TestHandOverSummarisesWhatTheCarryLeavesOut(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	seen := scripted(env, readMoreThanTheCarry(), model.Response{Content: "read them all"})
	suggestAfterTurn(env)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "read every file", IdleTimeoutS: 3600})
	next := continuedWith(t, env)
	summaries := 0
	for _, m := range next.Carry.Window.Messages {
		if m.Name == api.NameContextSummary {
			summaries++
		}
	}
	last := (*seen)[len(*seen)-1]
	if summaries != 1 || last.Summarize == nil {
		t.Errorf("the carry of %d messages holds %d summaries, the last model call summarised: %v; want the summary written before the handover and carried",
			len(next.Carry.Window.Messages), summaries, last.Summarize != nil)
	}
}

// A worker that lacks a continued run's carried messages reads them from
// the run's input, as carry.window.messages (activities' reader of history): the
// names it reads must be the input's.
func TestCarriedMessagesAreWhereTheReaderLooks(t *testing.T) {
	in := withCarry(t, api.AgentInput{}, &Carry{Window: WindowCarry{Messages: []model.Message{{Role: model.RoleUser, Content: "hello"}}}})
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var read struct {
		Carry struct {
			Window struct {
				Messages []model.Message `json:"messages"`
			} `json:"window"`
		} `json:"carry"`
	}
	if err := json.Unmarshal(b, &read); err != nil || len(read.Carry.Window.Messages) != 1 || read.Carry.Window.Messages[0].Content != "hello" {
		t.Errorf("carry.window.messages of %s: %+v, %v", b, read, err)
	}
}

// The summary written before a handover gets one attempt: a model that is
// down does not hold the handover for the model retry window (a day by
// default) nor retry it within; the carry goes without the summary, and
// the failed summary is no failed turn.
func TestHandOverSummaryIsOneAttempt(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	seen := faulty(env, func(in activities.CallModelInput) error {
		if in.Summarize != nil {
			return unavailable()
		}
		return nil
	}, "", readMoreThanTheCarry(), model.Response{Content: "read them all"})
	suggestAfterTurn(env)
	start := env.Now()
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "read every file", IdleTimeoutS: 3600})
	next := continuedWith(t, env)
	if took := env.Now().Sub(start); took > time.Minute {
		t.Errorf("the handover came %s after the start; want it at once, not after the model retry window", took)
	}
	summaries := 0
	for _, in := range *seen {
		if in.Summarize != nil {
			summaries++
		}
	}
	if summaries != 1 {
		t.Errorf("%d attempts at the summary before the handover, want 1", summaries)
	}
	for _, m := range next.Carry.Window.Messages {
		if m.Name == api.NameContextSummary {
			t.Errorf("the carry holds a summary the model never wrote: %+v", m)
		}
	}
	if next.Carry.Session.ModelError != nil || next.Carry.Session.FailedTurn {
		t.Errorf("carry: model_error %+v, failed turn %v; a summary that was not written fails no turn", next.Carry.Session.ModelError, next.Carry.Session.FailedTurn)
	}
}
