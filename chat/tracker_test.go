package chat

import (
	"errors"
	"fmt"
	"github.com/todoflow/todoflow/api"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/model"
)

// A reply cut short stays on the screen, marked as cut: when its attempt
// fails and the next one has written nothing (or no worker runs it: no
// call number then); printed above the next attempt's reply once that one
// writes; printed above the message that says so when the turn is stopped
// (the message's own copy when it has one) or its call failed for good.
func TestTrackerKeepsACutReply(t *testing.T) {
	running := client.StateChanged{State: api.State{AgentID: "main", Status: api.StatusRunning}}
	const text = "Reading the logs now"
	tests := []struct {
		name    string
		then    []client.Event
		shown   bool // the stream still shows text
		cut     bool
		printed string // what the last event printed, joined
	}{
		{"still writing", nil, true, false, ""},
		{"a new attempt, nothing written yet", []client.Event{client.StreamChanged{Running: true, Call: 3}}, true, true, ""},
		{"no worker runs the call", []client.Event{client.StreamChanged{Running: true}}, true, true, ""},
		{"the stream goes on", []client.Event{client.StreamChanged{Running: true, Call: 3, Attempt: 1, Text: text + " and"}}, true, false, ""},
		{"the next attempt writes", []client.Event{client.StreamChanged{Running: true, Call: 3, Attempt: 2}, client.StreamChanged{Running: true, Call: 3, Attempt: 2, Text: "Looking"}},
			true, false, text + "|" + cutNote},
		{"the next attempt writes at once", []client.Event{client.StreamChanged{Running: true, Call: 3, Attempt: 2, Text: "Looking"}}, true, false, text + "|" + cutNote},
		{"the next attempt writes the same reply", []client.Event{client.StreamChanged{Running: true, Call: 3, Attempt: 2, Text: "Read"}}, true, false, ""},
		{"the next attempt writes the same reply further", []client.Event{client.StreamChanged{Running: true, Call: 3, Attempt: 2, Text: text + " and more"}}, true, false, ""},
		{"the turn stopped", []client.Event{client.StreamChanged{}, client.NewMessage{Message: model.Message{Role: model.RoleAssistant, Name: api.NameInterrupted, Content: "Stopped."}}},
			false, false, text + "|" + cutNote + "|Stopped."},
		{"the turn stopped, its reply kept", []client.Event{client.StreamChanged{}, client.NewMessage{Message: model.Message{Role: model.RoleAssistant, Name: api.NameInterrupted,
			Content: text + " and more" + api.InterruptedCut + "Stopped."}}},
			false, false, text + " and more|" + cutNote + "|Stopped."},
		{"the call failed for good", []client.Event{client.StreamChanged{}, client.NewMessage{Message: model.Message{Role: model.RoleAssistant, Name: api.NameModelError, Content: "The model call failed."}}},
			false, false, text + "|" + cutNote + "|The model call failed."},
		{"the reply came", []client.Event{client.StreamChanged{}, client.NewMessage{Message: model.Message{Role: model.RoleAssistant, Content: text + " and more."}}},
			false, false, text + " and more."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tr tracker
			tr.apply(running)
			tr.apply(client.StreamChanged{Running: true, Call: 3, Attempt: 1, Text: text})
			var printed []entry
			for _, ev := range tt.then {
				printed = tr.apply(ev)
			}
			if shown := tr.stream != nil && tr.stream.Text != ""; shown != tt.shown {
				t.Errorf("the reply shows: %v, want %v", shown, tt.shown)
			}
			if got := tr.streamCut(); got != tt.cut {
				t.Errorf("marked cut: %v, want %v", got, tt.cut)
			}
			var texts []string
			for _, e := range printed {
				texts = append(texts, e.text)
			}
			if got := strings.Join(texts, "|"); got != tt.printed {
				t.Errorf("printed %q, want %q", got, tt.printed)
			}
		})
	}
}

// A stall the client can name stands in for the status; another problem
// does not.
func TestTrackerStall(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&client.NoWorkerError{TaskQueue: "todoflow"}, "no worker polls `todoflow` (start one: go run ./worker)"},
		{fmt.Errorf("look: %w", &client.ServerDownError{Address: "h:1"}), "look: the Temporal server at h:1 does not answer"},
		{errors.New("query failed: the workflow panicked"), ""},
		{nil, ""},
	}
	for _, tt := range tests {
		var tr tracker
		tr.apply(client.Problem{Err: tt.err})
		if got := tr.stall(); got != tt.want {
			t.Errorf("stall with %v: %q, want %q", tt.err, got, tt.want)
		}
	}
	// A subagent's wait: in place of the status while the session waits
	// on its subagents, beside "your turn" otherwise.
	sub := &client.NoWorkerError{TaskQueue: "todoflow", Agent: "coder"}
	for status, want := range map[string]string{api.StatusBlocked: sub.Error(), api.StatusWaitingUser: ""} {
		var tr tracker
		tr.apply(client.StateChanged{State: api.State{Status: status}})
		tr.apply(client.Problem{Err: sub})
		if got := tr.stall(); got != want {
			t.Errorf("a subagent's wait, the session %s: %q, want %q", status, got, want)
		}
	}
}

// Attaching prints the transcript first, then what other agents did: the
// first state's news wait for the look's messages.
func TestTrackerAttachOrder(t *testing.T) {
	var tr tracker
	st := api.State{AgentID: "main", Status: api.StatusWaitingUser,
		Subagents: map[string]api.State{"coder": {Status: api.StatusCompleted}}}
	var texts []string
	for _, ev := range []client.Event{
		client.StateChanged{State: st},
		client.NewMessage{Message: model.Message{Role: model.RoleUser, Content: "fix it"}},
		client.Looked{},
	} {
		for _, e := range tr.apply(ev) {
			texts = append(texts, e.text)
		}
	}
	if got, want := strings.Join(texts, "|"), "> fix it|◆ subagent coder: completed"; got != want {
		t.Errorf("printed %q, want %q", got, want)
	}
	// Later looks print their news as they come.
	st.Subagents = map[string]api.State{"coder": {Status: api.StatusCompleted}, "tester": {Status: api.StatusRunning}}
	if got := tr.apply(client.StateChanged{State: st}); len(got) != 1 || got[0].text != "◆ subagent tester: running" {
		t.Errorf("a later state printed %+v", got)
	}
}

// Leaving says where the session stands: going on, or waiting in the
// database of a server that stopped with the client.
func TestLeftLine(t *testing.T) {
	if got := leftLine(&session{id: "s1"}); got != "Left session s1; it goes on. Come back with: starter chat --id s1" {
		t.Errorf("a server that stays: %q", got)
	}
	if got := leftLine(&session{id: "s1", stops: true}); !strings.Contains(got, "the server stopped with this client") ||
		strings.Contains(got, "goes on") || !strings.Contains(got, "starter chat --id s1") {
		t.Errorf("the embedded server: %q", got)
	}
}

// The subagents that finish while the client watches are told once, each
// with its answer (its first lines), or why it could not be read; those
// finished before it attached are not.
func TestSubagentAnswers(t *testing.T) {
	var tr tracker
	state := func(subs map[string]string) client.StateChanged {
		st := api.State{AgentID: "main", Status: api.StatusBlocked, Subagents: map[string]api.State{}}
		for id, status := range subs {
			st.Subagents[id] = api.State{Status: status}
		}
		return client.StateChanged{State: st}
	}
	tr.apply(state(map[string]string{"old": api.StatusCompleted, "coder": api.StatusRunning, "tester": api.StatusRunning}))
	if got := tr.takeEnded(); len(got) != 0 {
		t.Errorf("on attach: %v ended, want none told", got)
	}
	tr.apply(state(map[string]string{"old": api.StatusCompleted, "coder": api.StatusCompleted, "tester": api.StatusFailed}))
	if got := strings.Join(tr.takeEnded(), " "); got != "coder tester" {
		t.Errorf("ended: %q, want coder tester", got)
	}
	tr.apply(state(map[string]string{"old": api.StatusCompleted, "coder": api.StatusCompleted, "tester": api.StatusFailed}))
	if got := tr.takeEnded(); len(got) != 0 {
		t.Errorf("told again: %v", got)
	}

	long := strings.TrimSuffix(strings.Repeat("a line\n", maxAnswerLines+4), "\n")
	tests := []struct {
		name  string
		reply string
		err   error
		want  string
	}{
		{"an answer", "Found it: the cache.", nil, "◆ subagent coder answered:|Found it: the cache."},
		{"a long one", long, nil, "◆ subagent coder answered:|" + strings.Repeat("a line\n", maxAnswerLines) + "… 4 more lines"},
		{"none", " ", nil, "◆ subagent coder ended without an answer"},
		{"failed", "", errors.New("subagent coder: workflow execution error"), "◆ subagent coder: workflow execution error"},
	}
	for _, tt := range tests {
		var texts []string
		for _, e := range subagentEntries("coder", tt.reply, tt.err) {
			texts = append(texts, e.text)
		}
		if got := strings.Join(texts, "|"); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
