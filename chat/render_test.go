package chat

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

func TestMessageEntries(t *testing.T) {
	tests := []struct {
		name string
		m    model.Message
		want []entry
	}{
		{"system prompt", model.Message{Role: model.RoleSystem, Content: "You are..."}, nil},
		{"user", model.Message{Role: model.RoleUser, Content: "fix it"}, []entry{{kindUser, "> fix it"}}},
		{"lines", model.Message{Role: model.RoleUser, Content: "fix it:\n- a\n- b"}, []entry{{kindUser, "> fix it:\n  - a\n  - b"}}},
		{"a long paste: its first lines", model.Message{Role: model.RoleUser, Content: "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\nl11"},
			[]entry{{kindUser, "> l1\n  l2\n  l3\n  ⋯ 8 more lines"}}},
		{"task event", model.Message{Role: model.RoleUser, Name: api.NameTaskEvent, Content: "Subagent s1 completed step_2.\nDetails"}, []entry{{kindNote, "· task_event: Subagent s1 completed step_2."}}},
		{"reminder", model.Message{Role: model.RoleUser, Name: todo.NameReminder, Content: "<system_reminder>\nYour checklist\n</system_reminder>"}, []entry{{kindNote, "· the agent was reminded of its checklist"}}},
		{"summary", model.Message{Role: model.RoleUser, Name: api.NameContextSummary, Content: "Summary of the earlier conversation"}, []entry{{kindNote, "· older messages were summarised"}}},
		{"reply and calls", model.Message{Role: model.RoleAssistant, Content: "Reading.", ToolCalls: []model.ToolCall{
			{Name: "read_file", Arguments: json.RawMessage(`{"path":"a.go"}`)},
			{Name: "todo_read", Arguments: json.RawMessage(`{}`)},
			{Name: "write_todos", Arguments: json.RawMessage(`{"todos":[{"content":"a","status":"completed"},{"content":"b","status":"pending"}]}`)},
		}}, []entry{{kindReply, "Reading."}, {kindTool, `⏺ read_file {"path":"a.go"}`}, {kindTool, "⏺ todo_read"}, {kindTool, "⏺ write_todos (2 items, 1 done)"}}},
		{"failed turn", model.Message{Role: model.RoleAssistant, Name: api.NameModelError, Content: "The model call failed."}, []entry{{kindError, "The model call failed."}}},
		{"result", model.Message{Role: model.RoleTool, Content: "line one\nline two\nline three"}, []entry{{kindResult, "  ⎿ line one (+2 lines)"}}},
		{"error result", model.Message{Role: model.RoleTool, Content: "no such file", IsError: true}, []entry{{kindError, "  ⎿ no such file"}}},
	}
	for _, tt := range tests {
		got := messageEntries(tt.m)
		if len(got) != len(tt.want) {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%s: entry %d = %+v, want %+v", tt.name, i, got[i], tt.want[i])
			}
		}
	}
}

func items(statuses ...todo.Status) []todo.Item {
	out := make([]todo.Item, len(statuses))
	for i, s := range statuses {
		out[i] = todo.Item{ID: string(rune('1' + i)), Content: "item " + string(rune('a'+i)), Status: s}
	}
	return out
}

func TestProgressLine(t *testing.T) {
	plan := &todo.Plan{Title: "Fix", Steps: []todo.Step{{StepID: "step_1", Description: "Move the check", Status: todo.StepCompleted}, {StepID: "step_2", Description: "Run tests", Status: todo.StepInProgress}}}
	tests := []struct {
		name   string
		st     *api.State
		closed string
		stall  string
		want   string
	}{
		{"no state", nil, "", "", "connecting…"},
		{"empty", &api.State{Status: api.StatusWaitingUser}, "", "", "your turn"},
		{"in progress", &api.State{Status: api.StatusRunning, Todos: items(todo.Completed, todo.InProgress, todo.Pending)}, "", "", "▶ item b · 1/3 · working"},
		{"none in progress", &api.State{Status: api.StatusWaitingUser, Todos: items(todo.Completed, todo.Completed, todo.Completed)}, "", "", "3/3 · your turn"},
		{"plan only", &api.State{Status: api.StatusAwaitingApproval, Plan: plan}, "", "", "▶ Run tests · plan 1/2 · awaiting your approval"},
		{"ended", &api.State{Status: api.StatusCompleted}, "completed", "", "session completed"},
		{"no worker", &api.State{Status: api.StatusRunning, Todos: items(todo.Completed, todo.InProgress, todo.Pending)}, "", "no worker polls `q`",
			"▶ item b · 1/3 · no worker polls `q`"},
		{"no server, no state yet", nil, "", "the Temporal server does not answer", "the Temporal server does not answer"},
		{"ended: the end, not the stall", &api.State{Status: api.StatusCompleted}, "completed", "no worker polls `q`", "session completed"},
	}
	for _, tt := range tests {
		if got := progressLine(tt.st, tt.closed, tt.stall); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestAttention(t *testing.T) {
	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)
	retrying := api.State{Status: api.StatusRunning, ModelError: &api.ModelError{Message: "429 Too Many Requests", Attempts: 2, Since: since, Retryable: true}}
	tests := []struct {
		name  string
		st    api.State
		retry client.Retry
		want  []string // substrings, one per line
	}{
		{"nothing", api.State{Status: api.StatusRunning}, client.Retry{}, nil},
		{"paused", api.State{AgentID: "main", Paused: true, PauseReason: "no key", Waiting: []api.Wait{{AgentID: "main", Kind: api.WaitPaused, Reason: "no key"}}}, client.Retry{},
			[]string{"paused: no key — /resume"}},
		{"plan", api.State{AgentID: "main", AwaitingApproval: true, Plan: &todo.Plan{Title: "Fix auth", Steps: make([]todo.Step, 2)},
			Waiting: []api.Wait{{AgentID: "main", Kind: api.WaitPlanApproval}}}, client.Retry{}, []string{`plan "Fix auth" (2 steps) awaits approval — /approve`}},
		{"subagent's plan", api.State{AgentID: "main", Waiting: []api.Wait{{AgentID: "coder", Kind: api.WaitPlanApproval}}}, client.Retry{}, []string{"coder: plan awaits approval"}},
		// A tool call is shown whole by each view, not in a line (approval.go).
		{"tool", api.State{AgentID: "main", PendingApproval: &api.PendingApproval{Tool: "write_file", Arguments: json.RawMessage(`{"path":"a"}`)},
			Waiting: []api.Wait{{AgentID: "main", Kind: api.WaitToolApproval}}}, client.Retry{}, nil},
		{"retrying", api.State{Status: api.StatusRunning, ModelError: &api.ModelError{Message: "503 Service Unavailable", Attempts: 3, Since: since, Retryable: true}}, client.Retry{},
			[]string{"the model is failing, retrying (attempt 3, since 03:04:05): 503 Service Unavailable"}},
		{"failed turn", api.State{Status: api.StatusWaitingUser, ModelError: &api.ModelError{Message: "401 Unauthorized"}}, client.Retry{}, []string{"the last turn failed on the model: 401"}},
		{"the provider's status and the next attempt", retrying, client.Retry{Status: 429, Next: since.Add(time.Minute)},
			[]string{"↻ the model provider answers 429; retrying at 03:05:05 (attempt 2, since 03:04:05): 429 Too Many Requests"}},
		{"no status: a transport error", retrying, client.Retry{Next: since.Add(time.Minute)}, []string{"↻ the model is failing; retrying at 03:05:05 (attempt 2"}},
		{"the attempt under way", retrying, client.Retry{Status: 503}, []string{"↻ the model provider answers 503, retrying (attempt 2"}},
	}
	for _, tt := range tests {
		got := attention(&tt.st, tt.retry)
		if len(got) != len(tt.want) {
			t.Errorf("%s: %q, want %d lines", tt.name, got, len(tt.want))
			continue
		}
		for i, w := range tt.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: line %q lacks %q", tt.name, got[i], w)
			}
		}
	}
}

func TestNews(t *testing.T) {
	prev := &api.State{AgentID: "main", Events: []todo.Event{{EventID: 1, AgentID: "main", Type: "plan_created"}},
		Subagents: map[string]api.State{"coder": {Status: api.StatusRunning}}}
	cur := &api.State{AgentID: "main", Events: []todo.Event{
		{EventID: 1, AgentID: "main", Type: "plan_created"},
		{EventID: 2, AgentID: "main", Type: "plan_started"},
		{EventID: 3, AgentID: "coder", Type: "step_completed", StepID: "step_1"},
	}, Subagents: map[string]api.State{"coder": {Status: api.StatusCompleted}, "tester": {Status: api.StatusRunning}}}
	var got []string
	entries, ended := news(prev, cur)
	if !slices.Equal(ended, []string{"coder"}) {
		t.Errorf("news: ended %q, want [coder]", ended)
	}
	for _, e := range entries {
		got = append(got, e.text)
	}
	want := []string{"◆ coder: step completed step_1", "◆ subagent coder completed", "◆ subagent tester: running"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("news = %q, want %q", got, want)
	}
}

func TestStreamText(t *testing.T) {
	for _, tt := range []struct {
		lines    []string
		cut, max int
		want     string
	}{
		{[]string{"● one", "  two"}, 0, 3, "● one\n  two"},
		{[]string{"● one", "  two", "  three", "  four"}, 0, 3, "● …\n  three\n  four"},
		{[]string{"● one", "  two", "  three"}, 0, 3, "● one\n  two\n  three"},
		// The stream itself was cut: the marker, the lines that fit.
		{[]string{"● short"}, 5, 3, "● …\n  short"},
	} {
		if got := streamText(tt.lines, tt.cut, tt.max); got != tt.want {
			t.Errorf("streamText(%q, %d, %d) = %q, want %q", tt.lines, tt.cut, tt.max, got, tt.want)
		}
	}
	if got := clip("héllo wörld", 6); got != "héllo…" {
		t.Errorf("clip: %q", got)
	}
}

// The tracker keeps a finished call's text until its message is in the
// transcript, and clears it then.
func TestTrackerStream(t *testing.T) {
	running := api.State{Status: api.StatusRunning}
	at := time.Now()
	reply := model.Message{Role: model.RoleAssistant, Content: "The fix is in."}
	var tr tracker
	steps := []struct {
		evs   []client.Event
		want  string // the stream's text, "-" for none
		print string // what is printed, "" for nothing
	}{
		{[]client.Event{client.StateChanged{State: running, At: at}, client.StreamChanged{Running: true, Call: 2}}, "", ""},
		{[]client.Event{client.StreamChanged{Running: true, Call: 2, Text: "The fix "}}, "The fix ", ""},
		{[]client.Event{client.StreamChanged{Running: true, Call: 2, Text: ""}}, "The fix ", ""}, // a retry that wrote nothing yet
		{[]client.Event{client.StreamChanged{}}, "The fix ", ""},                                 // completed, not yet in the transcript
		{[]client.Event{client.StateChanged{State: running, At: at.Add(time.Second)}, client.NewMessage{Message: reply}}, "-", "The fix is in."},
		// The next call, and in one look its reply and its end.
		{[]client.Event{client.StreamChanged{Running: true, Call: 3, Text: "Tests "}}, "Tests ", ""},
		{[]client.Event{client.NewMessage{Message: model.Message{Role: model.RoleAssistant, Content: "Tests pass."}}, client.StreamChanged{}}, "-", "Tests pass."},
	}
	for i, s := range steps {
		var printed []string
		for _, e := range tr.applyAll(s.evs) {
			printed = append(printed, e.text)
		}
		got := "-"
		if tr.stream != nil {
			got = tr.stream.Text
		}
		if got != s.want {
			t.Errorf("step %d: stream %q, want %q", i, got, s.want)
		}
		if p := strings.Join(printed, "|"); p != s.print {
			t.Errorf("step %d printed %q, want %q", i, p, s.print)
		}
	}
}

// What the loop injects to steer the model is written for the model: the
// transcript shows a one-line marker for it, dim (a note), never its text
// as if the user had typed it.
func TestRemindersShowAsMarkers(t *testing.T) {
	for _, name := range []string{"todo_reminder", "todo_completion_reminder", "todo_stale_reminder",
		"todo_continuation", "todo_blocked", "context_summary"} {
		got := messageEntries(model.Message{Role: model.RoleUser, Name: name,
			Content: "<system_reminder>\nYour checklist:\n- [ ] a\n</system_reminder>"})
		if len(got) != 1 || got[0].kind != kindNote || strings.Contains(got[0].text, "\n") ||
			strings.Contains(got[0].text, "system_reminder") || strings.Contains(got[0].text, "checklist:") {
			t.Errorf("%s shows as %+v, want one note without the message's text", name, got)
		}
	}
}

func TestResultEntries(t *testing.T) {
	long := strings.Repeat("line\n", maxResultLines+5)
	tests := []struct {
		m    *model.Message
		kind kind
		want string
	}{
		{nil, kindNote, "no tool has answered yet"},
		{&model.Message{Role: model.RoleTool, ToolCallID: "c1", Content: "one\ntwo\n"}, kindResult, "one\ntwo"},
		{&model.Message{Role: model.RoleTool, ToolCallID: "c2", Content: "failed", IsError: true}, kindError, "failed"},
		{&model.Message{Role: model.RoleTool, ToolCallID: "c3", Content: long}, kindResult, "… 5 more lines"},
	}
	for _, tt := range tests {
		got := resultEntries(tt.m, "")
		last := got[len(got)-1]
		if last.kind != tt.kind || !strings.Contains(last.text, tt.want) {
			t.Errorf("resultEntries(%+v) ends with %+v, want a %v containing %q", tt.m, last, tt.kind, tt.want)
		}
		if tt.m != nil && strings.Count(last.text, "\n") > maxResultLines {
			t.Errorf("%d lines printed, over %d", strings.Count(last.text, "\n"), maxResultLines)
		}
	}
}

// The status line is cut at a word's end with "…", never mid-word.
func TestFit(t *testing.T) {
	const line = "▶ Read the failing test · 0/3 · working · Esc: stop the turn"
	tests := []struct {
		width int
		want  string
	}{
		{80, line},
		{0, line}, // no width known yet
		{50, "▶ Read the failing test · 0/3 · working · Esc:…"},
		{40, "▶ Read the failing test · 0/3 · working…"},
		{30, "▶ Read the failing test · 0/3…"},
		{27, "▶ Read the failing test…"}, // not "test ·…"
		{5, "▶…"},
		{3, "▶…"},
		{2, "▶…"},
	}
	for _, tt := range tests {
		got := fit(line, tt.width)
		if got != tt.want {
			t.Errorf("fit(%d) = %q, want %q", tt.width, got, tt.want)
		}
		if tt.width > 0 && len([]rune(got)) > tt.width {
			t.Errorf("fit(%d) is %d wide", tt.width, len([]rune(got)))
		}
	}
	if got := fit("Supercalifragilistic", 8); got != "Superca…" {
		t.Errorf("one long word: %q", got)
	}
}

// /agents names each agent's model, a running subagent's too (from its
// live counters), when the state has it.
func TestAgentTreeShowsTheModels(t *testing.T) {
	st := api.State{AgentID: "main", Status: api.StatusRunning, Model: "openai:gpt-4o", ModelCalls: 3, Subagents: map[string]api.State{
		"kid": {AgentID: "kid", Status: api.StatusRunning, Model: "gpt-4o-mini", ModelCalls: 1, Live: &api.Brief{TodosTotal: 2, TodosCompleted: 1}},
		"old": {AgentID: "old", Status: api.StatusCompleted, ModelCalls: 2},
	}}
	want := "s1 (main): running, openai:gpt-4o, 3 model calls, todos 0/0\n" +
		"├─ kid: running, gpt-4o-mini, 1 model calls, todos 1/2\n" +
		"└─ old: completed, 2 model calls, todos 0/0"
	if got := agentTree("s1", st); got != want {
		t.Errorf("agentTree =\n%s\nwant\n%s", got, want)
	}
}
