package testsuite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"
	tfclient "github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/model"
)

// keysScript answers the one message of TestChatKeysEndToEnd: a list (a
// tool call, cyan on a colour terminal), then a reply.
const keysScript = `{"model": [
  {"tool_calls": [{"name": "write_todos", "arguments": {"todos": [
    {"content": "Read the four lines", "status": "completed"}]}}]},
  {"content": "Got it: four lines, one message."}
]}`

// colours is what is on the screen of session name (capture-pane -e: the
// cells' attributes as SGR sequences) in a colour: the SGR parameters that
// set one.
func (m *tmux) colours(name string) []string {
	m.t.Helper()
	screen := m.must("capture-pane", "-p", "-e", "-J", "-S", "-", "-t", name)
	var out []string
	for _, seq := range regexp.MustCompile(`\x1b\[([0-9;:]*)m`).FindAllStringSubmatch(screen, -1) {
		for _, p := range strings.FieldsFunc(seq[1], func(r rune) bool { return r == ';' || r == ':' }) {
			if (len(p) == 2 && strings.ContainsRune("349", rune(p[0])) && p != "39" && p != "49") || (len(p) == 3 && p[0] == '1' && p[1] == '0') {
				out = append(out, seq[0])
			}
		}
	}
	return out
}

// The prompt's keys, in tmux against a real server and worker: Ctrl+C
// clears a half-typed message and leaves only when pressed again within
// two seconds (the session goes on, exit 0); a bracketed paste of several
// lines and a line added with Alt+Enter are one message; Up recalls it;
// with NO_COLOR nothing on the screen is in colour.
func TestChatKeysEndToEnd(t *testing.T) {
	tm := newTmux(t)
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	bin := buildStarter(t)
	script := filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(script, []byte(keysScript), 0o644); err != nil {
		t.Fatal(err)
	}
	const id = "chat-keys"
	env := []string{"TODOFLOW_STATE_DIR=" + t.TempDir(), "TEMPORAL_ADDRESS=", "TEMPORAL_NAMESPACE=", "TERM=xterm-256color"}
	chat := []string{bin, "chat", "--address", s.srv.Address(), "--namespace", s.srv.Namespace(), "--id", id}
	const limit = 90 * time.Second
	ctx := context.Background()
	sess := tfclient.New(s.c, tfclient.Options{}).Session(id)
	userMessages := func() []string {
		msgs, err := sess.Messages(ctx, 0, 100)
		if err != nil {
			t.Fatalf("messages: %v", err)
		}
		var out []string
		for _, m := range msgs {
			if m.Role == model.RoleUser && m.Name == "" {
				out = append(out, m.Content)
			}
		}
		return out
	}

	tm.start("first", append(env, "NO_COLOR=1"), append(chat, "--model", "script:"+script)...)
	tm.waitFor("first", limit, askFirst)

	// Ctrl+C clears what was typed; the client stays.
	tm.keys("first", "half a thought")
	tm.waitFor("first", limit, "> half a thought")
	tm.keys("first", "C-c")
	tm.waitScreen("first", limit, "the prompt cleared, and how to leave", func(s string) bool {
		return !strings.Contains(s, "half a thought") && strings.Contains(s, "Ctrl+C again to leave")
	})
	// The hint goes with its two seconds, and the next Ctrl+C only clears:
	// each press is read once its hint shows, and the second comes once the
	// first's hint is gone, so the client has seen two presses further
	// apart than its window, however slow the machine.
	tm.waitScreen("first", limit, "the hint gone", func(s string) bool { return !strings.Contains(s, "Ctrl+C again") })
	for press := 1; press <= 2; press++ {
		tm.keys("first", "C-c")
		s := tm.waitScreen("first", limit, fmt.Sprintf("press %d read: its hint, or the client's end", press), func(s string) bool {
			return strings.Contains(s, "Ctrl+C again to leave") || tm.ended("first") != ""
		})
		if tm.ended("first") != "" {
			t.Fatalf("Ctrl+C presses further apart than the hint's window ended the client (press %d):\n%s", press, s)
		}
		tm.waitScreen("first", limit, "the hint gone", func(s string) bool { return !strings.Contains(s, "Ctrl+C again") })
	}

	// A bracketed paste of three lines waits at the prompt, whole; Alt+Enter
	// adds a fourth; Enter sends the four as one message.
	tm.must("set-buffer", "-b", "lines", "first line\nsecond line\nthird line")
	tm.must("paste-buffer", "-p", "-b", "lines", "-t", "first")
	tm.waitFor("first", limit, "> first line", "  second line", "  third line")
	// A paste sent early would show here or, if its start is slower than
	// this look, as a user message of its own in the check after Enter,
	// which wants exactly one.
	if _, err := sess.State(ctx); !errors.Is(err, tfclient.ErrNoSession) {
		t.Fatalf("before Enter the session exists (%v): the paste was sent", err)
	}
	tm.keys("first", "M-Enter", "typed after")
	tm.waitFor("first", limit, "  typed after")
	tm.keys("first", "Enter")
	tm.waitFor("first", limit, "Got it: four lines, one message.", "1/1 · your turn")
	want := "first line\nsecond line\nthird line\ntyped after"
	if got := userMessages(); len(got) != 1 || got[0] != want {
		t.Fatalf("the session's user messages are %q, want one: %q", got, want)
	}

	// Up recalls it, whole.
	tm.keys("first", "Up")
	tm.waitScreen("first", limit, "the message recalled", func(string) bool {
		v := tm.visible("first")
		return strings.Contains(v, "> first line\n  second line\n  third line\n  typed after")
	})

	// NO_COLOR: weights, no colours, in the transcript printed above and in
	// the view.
	if c := tm.colours("first"); len(c) > 0 {
		t.Errorf("with NO_COLOR the screen has colours %q:\n%q", c, tm.must("capture-pane", "-p", "-e", "-t", "first"))
	}

	// Two Ctrl+C: the first clears the recalled message, the second leaves.
	tm.keys("first", "C-c")
	tm.waitFor("first", limit, "Ctrl+C again to leave")
	tm.keys("first", "C-c")
	tm.waitFor("first", limit, "Left session "+id)
	tm.waitExit("first", limit)
	st, ok := queryState(ctx, s.c, id)
	if !ok || st.Status != api.StatusWaitingUser {
		t.Errorf("after the client left: status %q (read: %v), want %s", st.Status, ok, api.StatusWaitingUser)
	}

	// Without NO_COLOR the same transcript has colours: the check above
	// can see them.
	tm.start("second", env, chat...)
	tm.waitFor("second", limit, "attached", "Got it: four lines")
	if c := tm.colours("second"); len(c) == 0 {
		t.Errorf("without NO_COLOR the screen has no colour: the NO_COLOR check proves nothing:\n%q", tm.must("capture-pane", "-p", "-e", "-t", "second"))
	}
}

// escScript makes a list, then takes a minute to answer: long enough for
// Esc to stop it.
const escScript = `{"model": [
  {"tool_calls": [{"name": "write_todos", "arguments": {"todos": [
    {"content": "Think it over", "status": "in_progress"}]}}]},
  {"content": "A minute later.", "delay_ms": 60000}
]}`

// Esc stops the running turn: the model call is cancelled, the turn ends
// with the interrupted note, the list stays, and the prompt is free again.
func TestChatEscStopsTheTurn(t *testing.T) {
	tm := newTmux(t)
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	bin := buildStarter(t)
	script := filepath.Join(t.TempDir(), "esc.json")
	if err := os.WriteFile(script, []byte(escScript), 0o644); err != nil {
		t.Fatal(err)
	}
	const id = "chat-esc"
	env := []string{"TODOFLOW_STATE_DIR=" + t.TempDir(), "TEMPORAL_ADDRESS=", "TEMPORAL_NAMESPACE=", "TERM=xterm-256color"}
	const limit = 40 * time.Second
	tm.start("esc", env, bin, "chat", "--address", s.srv.Address(), "--namespace", s.srv.Namespace(), "--id", id, "--model", "script:"+script)
	tm.waitFor("esc", limit, askFirst)
	tm.keys("esc", "think it over", "Enter")
	tm.waitFor("esc", limit, "Think it over", "Esc: stop the turn")
	tm.keys("esc", "Escape")
	tm.waitFor("esc", limit, "Interrupted by the user", "your turn")
	// The model call was cancelled, as history says: asked to stop, and
	// never completed (its reply comes only after a minute).
	calls, cancelled, completed := map[int64]bool{}, 0, 0
	for _, ev := range historyOf(t, s.c, id) {
		switch {
		case ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == api.ModelCallActivity:
			calls[ev.GetEventId()] = true
		case calls[ev.GetActivityTaskCancelRequestedEventAttributes().GetScheduledEventId()]:
			cancelled++
		case calls[ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()]:
			completed++
		}
	}
	if len(calls) != 2 || cancelled != 1 || completed != 1 {
		t.Errorf("model calls: %d scheduled, %d cancelled, %d completed; want the second cancelled by Esc", len(calls), cancelled, completed)
	}
	st, ok := queryState(context.Background(), s.c, id)
	if !ok || st.Status != api.StatusWaitingUser || len(st.Todos) != 1 {
		t.Errorf("after Esc: status %q, list %+v (read: %v); want the session waiting with its list", st.Status, st.Todos, ok)
	}
}

// /clear starts a new session in place: the next message goes to it, with
// the model /model chose, and the previous session goes on, unchanged.
func TestChatClearStartsANewSession(t *testing.T) {
	tm := newTmux(t)
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	bin := buildStarter(t)
	dir := t.TempDir()
	first, second := filepath.Join(dir, "first.json"), filepath.Join(dir, "second.json")
	for path, reply := range map[string]string{first: "From the first session.", second: "From the second session."} {
		if err := os.WriteFile(path, []byte(`{"model": [{"content": "`+reply+`"}]}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const id = "chat-clear"
	env := []string{"TODOFLOW_STATE_DIR=" + t.TempDir(), "TEMPORAL_ADDRESS=", "TEMPORAL_NAMESPACE=", "TERM=xterm-256color"}
	const limit = 60 * time.Second
	tm.start("clear", env, bin, "chat", "--address", s.srv.Address(), "--namespace", s.srv.Namespace(), "--id", id, "--model", "script:"+first)
	tm.waitFor("clear", limit, askFirst)
	tm.keys("clear", "hello", "Enter")
	tm.waitFor("clear", limit, "From the first session.")
	tm.keys("clear", "/model script:"+second, "Enter")
	tm.waitFor("clear", limit, "sessions that /clear starts will use script:"+second)
	tm.keys("clear", "/clear", "Enter")
	tm.waitFor("clear", limit, "the previous one, "+id+", goes on", askFirst)
	// The new session starts with its first message, and its id shows then.
	tm.keys("clear", "hello again", "Enter")
	screen := tm.waitFor("clear", limit, "From the second session.")
	newID := regexp.MustCompile(`New session (chat-[0-9a-f-]{36}); it outlives`).FindStringSubmatch(screen)
	if newID == nil {
		t.Fatalf("no new session id on the screen:\n%s", screen)
	}
	ctx := context.Background()
	c := tfclient.New(s.c, tfclient.Options{})
	for sid, want := range map[string]string{id: "From the first session.", newID[1]: "From the second session."} {
		msgs, err := c.Session(sid).Messages(ctx, 0, 100)
		if err != nil {
			t.Fatalf("%s: %v", sid, err)
		}
		var replies []string
		for _, m := range msgs {
			if m.Role == model.RoleAssistant && m.Content != "" {
				replies = append(replies, m.Content)
			}
		}
		if len(replies) != 1 || replies[0] != want {
			t.Errorf("session %s replied %q, want only %q", sid, replies, want)
		}
	}
}
