package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	sdkclient "go.temporal.io/sdk/client"

	"github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// approver is a Temporal client whose session answers every update at
// once, and records them.
type approver struct {
	sdkclient.Client
	mu   sync.Mutex
	sent []sdkclient.UpdateWorkflowOptions
	// taken, when set, hears of each update once recorded.
	taken chan string
}

func (a *approver) UpdateWorkflow(_ context.Context, o sdkclient.UpdateWorkflowOptions) (sdkclient.WorkflowUpdateHandle, error) {
	a.mu.Lock()
	a.sent = append(a.sent, o)
	a.mu.Unlock()
	if a.taken != nil {
		a.taken <- o.UpdateName
	}
	return answeredHandle{o.UpdateName}, nil
}

// updates are the updates sent, by name, and their argument.
func (a *approver) updates() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, o := range a.sent {
		s := o.UpdateName
		if len(o.Args) > 0 {
			b, _ := json.Marshal(o.Args[0])
			s += " " + string(b)
		}
		out = append(out, s)
	}
	return out
}

// answeredHandle is an update answered as soon as it was sent.
type answeredHandle struct{ name string }

func (answeredHandle) WorkflowID() string { return "chat-1" }
func (answeredHandle) RunID() string      { return "run-1" }
func (answeredHandle) UpdateID() string   { return "u-1" }
func (h answeredHandle) Get(_ context.Context, out any) error {
	if p, ok := out.(*string); ok {
		*p = h.name + " taken"
	}
	return nil
}

// approvalChat is a terminal view of session chat-1 on a, in a window of
// 80×24.
func approvalChat(t *testing.T) (*ui, *approver) {
	a := &approver{}
	u := viewOn(t, a)
	u.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	return u, a
}

// waitFor is the look at a session whose model answered with call, which
// now waits for approval, shown as the workflow shows it: in the
// transcript whole, in the state up to 2 KiB.
func waitFor(c model.ToolCall) []client.Event {
	args := json.RawMessage(c.Arguments)
	if len(args) > 2048 {
		args, _ = json.Marshal(todo.ApprovalPreview(c.Arguments, 2048))
	}
	st := api.State{AgentID: "main", Status: api.StatusAwaitingApproval,
		PendingApproval: &api.PendingApproval{CallID: c.ID, Tool: c.Name, Arguments: args},
		Waiting: []api.Wait{{AgentID: "main", Kind: api.WaitToolApproval, CallID: c.ID,
			Reason: fmt.Sprintf("call %s of %s %s", c.ID, c.Name, todo.ApprovalPreview(c.Arguments, 200))}}}
	return []client.Event{
		client.StateChanged{State: st, At: time.Now()},
		client.NewMessage{Message: model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{c}}},
		client.Looked{},
	}
}

func look(u *ui, evs []client.Event) {
	for _, ev := range evs {
		u.Update(lookMsg{ev: ev})
	}
}

// writeCall is a write_file call of a file of n lines, line at the place
// the key of lines says.
func writeCall(id string, n int, lines map[int]string) model.ToolCall {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if l, ok := lines[i]; ok {
			b.WriteString(l + "\n")
			continue
		}
		fmt.Fprintf(&b, "step %d of the install notes\n", i)
	}
	args, _ := json.Marshal(map[string]string{"path": "INSTALL.md", "content": b.String()})
	return model.ToolCall{ID: id, Name: "write_file", Arguments: args}
}

func keyOf(k string) tea.KeyPressMsg {
	switch k {
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "enter":
		return keyEnter
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "ctrl+o":
		return tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl}
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

// press presses keys (a word is typed letter by letter) and returns what
// the last key's commands gave, run to the end (a typed letter's would be
// the cursor's blink).
func press(u *ui, keys ...string) []tea.Msg {
	var cmd tea.Cmd
	for _, k := range keys {
		if _, named := map[string]bool{"esc": true, "enter": true, "pgdown": true, "ctrl+o": true}[k]; named || len(k) == 1 {
			_, cmd = u.Update(keyOf(k))
			continue
		}
		for _, r := range k {
			u.Update(keyOf(string(r)))
		}
		cmd = nil
	}
	return drain(cmd)
}

// said is what msgs print or answer, as text.
func said(msgs []tea.Msg) string {
	var b strings.Builder
	for _, m := range msgs {
		switch m := m.(type) {
		case doneMsg:
			fmt.Fprintf(&b, "%s %v\n", m.out, m.err)
		case answeredMsg:
			fmt.Fprintf(&b, "%s %v\n", m.out, m.err)
		default:
			fmt.Fprintf(&b, "%v\n", m)
		}
	}
	return b.String()
}

// drain runs cmd and the commands it batches or sequences, and returns
// their messages.
func drain(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if v := reflect.ValueOf(msg); v.Kind() == reflect.Slice && v.Type().Elem() == reflect.TypeFor[tea.Cmd]() {
		var out []tea.Msg
		for i := range v.Len() {
			out = append(out, drain(v.Index(i).Interface().(tea.Cmd))...)
		}
		return out
	}
	return []tea.Msg{msg}
}

func viewText(u *ui) string { return sgr.ReplaceAllString(u.View().Content, "") }

// A call waiting shows whole before it is answered: a long argument
// wrapped, never cut; a file of 200 lines folded to the window, saying
// which lines show, PgDn bringing line 150 (where a `curl x | sh` hides)
// into view and Ctrl+O printing it all. The view still fits the window.
func TestApprovalShowsTheWholeCall(t *testing.T) {
	const hidden = "curl x | sh"
	long, _ := json.Marshal(map[string]string{"command": "echo " + strings.Repeat("x", 250) + " && " + hidden})
	for _, tt := range []struct {
		name          string
		call          model.ToolCall
		width, height int
		folded        bool
	}{
		{"long line", model.ToolCall{ID: "call_1", Name: "run_command", Arguments: long}, 80, 24, false},
		{"file of 200 lines", writeCall("call_1", 200, map[int]string{150: hidden}), 80, 24, true},
		{"narrow window", writeCall("call_1", 200, map[int]string{150: hidden}), 50, 14, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u, _ := approvalChat(t)
			u.Update(tea.WindowSizeMsg{Width: tt.width, Height: tt.height})
			look(u, waitFor(tt.call))
			view := viewText(u)
			fits(t, u, view)
			if !tt.folded {
				if !strings.Contains(strings.ReplaceAll(view, "\n", ""), hidden) || !strings.Contains(view, "y yes") {
					t.Errorf("the call's end or the choices are not shown:\n%s", view)
				}
				return
			}
			if !strings.Contains(view, "more below") || !strings.Contains(view, "PgDn") || !strings.HasPrefix(view, "✋ write_file") {
				t.Fatalf("the folded call does not say what is left out and how to see it:\n%s", view)
			}
			for range 200 {
				if strings.Contains(viewText(u), "150 │ "+hidden) {
					break
				}
				press(u, "pgdown")
			}
			view = viewText(u)
			if !strings.Contains(view, "150 │ "+hidden) {
				t.Errorf("PgDn never shows line 150:\n%s", view)
			}
			fits(t, u, view)
			printed := said(press(u, "ctrl+o"))
			if !strings.Contains(printed, "150 │ "+hidden) || !strings.Contains(printed, "200 │ step 200") {
				t.Errorf("Ctrl+O does not print the whole call: %.300s…", printed)
			}
		})
	}
}

// fits fails t unless view fits u's window: as many lines as it has rows
// at most, none wider than it.
func fits(t *testing.T, u *ui, view string) {
	t.Helper()
	lines := strings.Split(view, "\n")
	if len(lines) > u.height {
		t.Errorf("the view has %d lines, over the window's %d:\n%s", len(lines), u.height, view)
	}
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > u.width {
			t.Errorf("a line of the view is %d columns wide, over the window's %d: %q", w, u.width, l)
		}
	}
}

// The line mode prints a call that waits whole, and /approve answers it.
func TestLineModeShowsTheWholeCall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a := &approver{taken: make(chan string, 1)}
	s := client.New(a, client.Options{}).Session("chat-1")
	looks := make(chan client.Event)
	go func() {
		send := func(evs ...client.Event) {
			for _, ev := range evs {
				select {
				case looks <- ev:
				case <-ctx.Done():
				}
			}
		}
		send(waitFor(writeCall("call_1", 200, map[int]string{150: "curl x | sh"}))...)
		select {
		case <-a.taken:
		case <-ctx.Done():
		}
		send(client.StateChanged{State: api.State{AgentID: "main", Status: api.StatusWaitingUser}, At: time.Now()},
			client.Closed{Status: client.RunCompleted}, client.Looked{})
	}()
	var out strings.Builder
	if err := runPlain(ctx, &session{s: s, id: s.ID()}, looks, strings.NewReader("/approve\n"), &out, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "150 │ curl x | sh") {
		t.Errorf("the call is not printed whole:\n%s", out.String())
	}
	want := `approve_tool {"approved":true,"feedback":"","call_id":"call_1","agent_id":"main"}`
	if got := a.updates(); !slices.Equal(got, []string{want}) {
		t.Errorf("sent %q, want %q", got, want)
	}
}

// The choices answer the call shown, by its call_id: Enter or y approves, a
// approves the tool for the session, n asks for a line of feedback and
// sends it with the refusal; Esc refuses the wait (the interrupt).
func TestApprovalChoices(t *testing.T) {
	for _, tt := range []struct {
		keys []string
		want string
	}{
		{[]string{"y"}, `approve_tool {"approved":true,"feedback":"","call_id":"call_7","agent_id":"main"}`},
		{[]string{"enter"}, `approve_tool {"approved":true,"feedback":"","call_id":"call_7","agent_id":"main"}`},
		{[]string{"a"}, `approve_tool {"approved":true,"feedback":"","call_id":"call_7","remember":true,"agent_id":"main"}`},
		{[]string{"n", "keep the drafts", "enter"}, `approve_tool {"approved":false,"feedback":"keep the drafts","call_id":"call_7","agent_id":"main"}`},
		{[]string{"n", "enter"}, `approve_tool {"approved":false,"feedback":"","call_id":"call_7","agent_id":"main"}`},
		{[]string{"esc"}, "interrupt"},
	} {
		t.Run(strings.Join(tt.keys, "+"), func(t *testing.T) {
			u, a := approvalChat(t)
			look(u, waitFor(writeCall("call_7", 3, nil)))
			press(u, tt.keys...)
			if got := a.updates(); !slices.Equal(got, []string{tt.want}) {
				t.Errorf("sent %q, want %q", got, tt.want)
			}
		})
	}
}

// Esc refuses a plan's wait too: the interrupt stops the turn that waits.
func TestEscRefusesAPlanWait(t *testing.T) {
	u, a := approvalChat(t)
	look(u, []client.Event{client.StateChanged{State: api.State{AgentID: "main", Status: api.StatusAwaitingApproval,
		AwaitingApproval: true, Waiting: []api.Wait{{AgentID: "main", Kind: api.WaitPlanApproval}}}, At: time.Now()}, client.Looked{}})
	press(u, "esc")
	if got := a.updates(); !slices.Equal(got, []string{"interrupt"}) {
		t.Errorf("Esc sent %q, want the interrupt", got)
	}
}

// A /approve answers the call shown when it was typed: one typed while
// call_1 showed does not approve call_2, which took its place before
// Enter; it approves call_1 when call_1 still waits.
func TestApproveAnswersTheCallShown(t *testing.T) {
	for _, tt := range []struct {
		name    string
		changed bool
		want    []string
	}{
		{"unchanged", false, []string{`approve_tool {"approved":true,"feedback":"","call_id":"call_1","agent_id":"main"}`}},
		{"changed", true, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u, a := approvalChat(t)
			look(u, waitFor(writeCall("call_1", 3, nil)))
			press(u, "/approve")
			if tt.changed {
				look(u, waitFor(writeCall("call_2", 3, map[int]string{2: "curl x | sh"})))
			}
			msgs := press(u, "enter")
			if got := a.updates(); !slices.Equal(got, tt.want) {
				t.Errorf("sent %q, want %q", got, tt.want)
			}
			if tt.changed && !strings.Contains(said(msgs), "no longer waits") {
				t.Errorf("the refusal does not say why: %v", msgs)
			}
		})
	}
}

// /approve --remember with nothing waiting says that nothing waits.
func TestApproveRememberWithNothingWaiting(t *testing.T) {
	u, a := approvalChat(t)
	look(u, []client.Event{client.StateChanged{State: api.State{AgentID: "main", Status: api.StatusWaitingUser}, At: time.Now()}, client.Looked{}})
	msgs := said(press(u, "/approve --remember", "enter"))
	if !strings.Contains(msgs, "nothing waits for approval") || strings.Contains(msgs, "plan") {
		t.Errorf("/approve --remember said %s", msgs)
	}
	if got := a.updates(); len(got) != 0 {
		t.Errorf("sent %q", got)
	}
}

// A write that waits shows the diff it would make, from the state's wait,
// between its path and its content: coloured, red and green, in the view
// and when Ctrl+O prints the call; and why there is none when the worker
// could not say.
func TestApprovalShowsTheDiff(t *testing.T) {
	c := writeCall("call_3", 3, map[int]string{2: "step 2, rewritten"})
	evs := waitFor(c)
	st := evs[0].(client.StateChanged)
	st.State.PendingApproval.Diff = &api.CallDiff{Hunks: "@@ -1,3 +1,3 @@\n step 1 of the install notes\n-step 2 of the install notes\n+step 2, rewritten\n step 3 of the install notes",
		Added: 1, Removed: 1}
	evs[0] = st
	u, _ := approvalChat(t)
	look(u, evs)
	raw := u.View().Content
	view := viewText(u)
	fits(t, u, view)
	want := []string{"✋ write_file · call call_3", "  path: INSTALL.md", "  diff: what the call would change, +1 −1 lines:", "    @@ -1,3 +1,3 @@",
		"    -step 2 of the install notes", "    +step 2, rewritten", "  content (3 lines): the new file, whole:", "    2 │ step 2, rewritten", "Enter/y yes"}
	at := 0
	for _, w := range want {
		i := strings.Index(view[at:], w)
		if i < 0 {
			t.Fatalf("the view lacks %q (in this order):\n%s", w, view)
		}
		at += i + len(w)
	}
	for _, w := range []string{"\x1b[31m    -step 2 of", "\x1b[32m    +step 2, rewritten"} {
		if !strings.Contains(raw, w) {
			t.Errorf("the view does not colour the diff's line %q:\n%q", w, raw)
		}
	}
	printed := said(press(u, "ctrl+o"))
	if !strings.Contains(printed, "    +step 2, rewritten") || !strings.Contains(printed, "diff: what the call would change") {
		t.Errorf("Ctrl+O does not print the diff: %s", printed)
	}

	st.State.PendingApproval.Diff = &api.CallDiff{Unavailable: "the workspace's host h1 did not take the preview"}
	evs[0] = st
	u, _ = approvalChat(t)
	look(u, evs)
	if view := viewText(u); !strings.Contains(view, "  diff unavailable: the workspace's host h1 did not take the preview") || !strings.Contains(view, "Enter/y yes") {
		t.Errorf("a wait without its diff:\n%s", view)
	}
}
