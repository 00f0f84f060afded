package testsuite

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	enumspb "go.temporal.io/api/enums/v1"
)

// chatScript is the scripted model of the chat tests: a list of three, a
// reply that streams over 8 s (the guard then asks about the unfinished
// list), a plan that waits for approval, the list done, a last reply.
const chatScript = `{"model": [
  {"tool_calls": [{"name": "write_todos", "arguments": {"todos": [
    {"content": "Read the failing test", "status": "in_progress"},
    {"content": "Fix the token check", "status": "pending"},
    {"content": "Run the tests", "status": "pending"}]}}]},
  {"content": "I read the failing test: the token check runs after the session lookup, so expired tokens pass. Next I will fix the order.", "delay_ms": 8000},
  {"tool_calls": [{"name": "createPlan", "arguments": {"title": "Fix auth", "steps": ["Move the check", "Run the tests"]}}]},
  {"tool_calls": [{"name": "startPlan", "arguments": {"message": "Ready?"}}]},
  {"tool_calls": [{"name": "write_todos", "arguments": {"todos": [
    {"content": "Read the failing test", "status": "completed"},
    {"content": "Fix the token check", "status": "completed"},
    {"content": "Run the tests", "status": "completed"}]}}]},
  {"content": "All three done: the check moved and the tests pass."}
]}`

// askFirst is what the status line of a new chat session says until its
// first message starts it: nothing exists on the server before.
const askFirst = "type your first message"

// buildStarter builds ../starter into t's temporary folder.
func buildStarter(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "starter")
	cmd := exec.Command("go", "build", "-o", bin, "./starter")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./starter: %v\n%s", err, out)
	}
	return bin
}

// The terminal client end to end, in tmux against a real server and worker:
// the indicator, Ctrl+T, a streamed reply, /approve, a killed client, a
// client that comes back, /end.
func TestChatTerminalEndToEnd(t *testing.T) {
	tm := newTmux(t)
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	bin := buildStarter(t)
	// The last reply takes 6 s, so that the client can be killed while the
	// turn is still under way.
	const lastReply = `{"content": "All three done: the check moved and the tests pass."}`
	script := filepath.Join(t.TempDir(), "chat.json")
	if err := os.WriteFile(script, []byte(strings.Replace(chatScript, lastReply, lastReply[:len(lastReply)-1]+`, "delay_ms": 6000}`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	const id = "chat-e2e"
	env := []string{"TODOFLOW_STATE_DIR=" + t.TempDir(), "TEMPORAL_ADDRESS=", "TEMPORAL_NAMESPACE=", "TERM=xterm-256color"}
	chat := []string{bin, "chat", "--address", s.srv.Address(), "--namespace", s.srv.Namespace(), "--id", id}
	const limit = 90 * time.Second

	tm.start("first", env, append(chat, "--model", "script:"+script)...)
	tm.waitFor("first", limit, askFirst)
	tm.keys("first", "fix the auth test", "Enter")
	tm.waitFor("first", limit, "New session "+id)

	// The indicator: the item in progress and done/total.
	tm.waitFor("first", limit, "▶ Read the failing test · 0/3")

	// The reply streams in: a part of it is on the screen before the rest.
	// (Its last word: the client wraps a reply at the window's width, so
	// a phrase of it may be on two lines.)
	const last = "order."
	tm.waitScreen("first", limit, "a part of the reply, before its end", func(s string) bool {
		return strings.Contains(s, "● I read the failing test") && !strings.Contains(s, last)
	})

	// Ctrl+T shows every item (and hides them again).
	tm.keys("first", "C-t")
	tm.waitFor("first", limit, "[>] Read the failing test", "[ ] Fix the token check", "[ ] Run the tests", "Done: 0/3")
	tm.keys("first", "C-t")
	tm.waitScreen("first", limit, "the checklist closed", func(s string) bool { return !strings.Contains(s, "Done: 0/3") })

	// The whole reply, printed once, and then the plan that waits.
	screen := tm.waitFor("first", limit, last, "awaits approval")
	if n := strings.Count(screen, last); n != 1 {
		t.Errorf("the reply's end shows %d times, want once:\n%s", n, screen)
	}
	tm.keys("first", "/approve", "Enter")

	// Killing the client while the turn's last model call is under way
	// leaves the turn to finish without it: the session reaches the user's
	// turn after the client is gone, which it could not if it needed it.
	tm.waitFor("first", limit, "3/3 · working")
	pid := tm.pid("first")
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, limit, "the killed client to be gone", func() bool { return !processRuns(pid) })
	if st, ok := queryState(context.Background(), s.c, id); !ok || st.Status != api.StatusRunning {
		t.Fatalf("when the client was gone: status %q (read: %v), want the turn still %s", st.Status, ok, api.StatusRunning)
	}
	waitFor(t, limit, "the turn to end without its client", func() bool {
		st, ok := queryState(context.Background(), s.c, id)
		return ok && st.Status == api.StatusWaitingUser
	})

	// Coming back shows the transcript and the list done.
	tm.start("second", env, chat...)
	screen = tm.waitFor("second", limit, "attached", "> fix the auth test", "All three done", "3/3 · your turn")
	if n := strings.Count(screen, last); n != 1 {
		t.Errorf("the transcript shows the reply %d times, want once:\n%s", n, screen)
	}

	// /end completes the session.
	tm.keys("second", "/end", "Enter")
	tm.waitFor("second", limit, "The session has ended (completed).")
	d, err := s.c.DescribeWorkflowExecution(context.Background(), id, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := d.GetWorkflowExecutionInfo().GetStatus(); got != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Errorf("workflow status %v, want completed", got)
	}
}

// The line mode: `starter chat < script` plays a conversation through a
// pipe, each line once the previous one is answered, and leaves the
// session waiting for the user.
func TestChatLineModeEndToEnd(t *testing.T) {
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	bin := buildStarter(t)
	script := filepath.Join(t.TempDir(), "chat.json")
	if err := os.WriteFile(script, []byte(strings.Replace(chatScript, `"delay_ms": 8000`, `"delay_ms": 300`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	const id = "chat-lines"
	out, err := chatLines(t, s, bin, id, "script:"+script, "fix the auth test\n/todos\n/bogus\n/approve\n/plan\n")
	if err != nil {
		t.Fatalf("starter chat: %v\n%s", err, out)
	}
	text := string(out)
	t.Logf("the client's output:\n%s", text)
	// In this order: each line is taken once the previous one is answered.
	want := []string{
		"New session " + id,
		"> fix the auth test",
		"Next I will fix the order.",
		"awaits approval",
		"/todos", "- [>] Read the failing test", "Done: 0/3",
		"unknown command /bogus",
		"/approve",
		"All three done",
		"/plan", "Current Plan: Fix auth",
		"Left session " + id,
	}
	at := 0
	for _, w := range want {
		i := strings.Index(text[at:], w)
		if i < 0 {
			t.Fatalf("the output lacks %q after byte %d:\n%s", w, at, text)
		}
		at += i + len(w)
	}
	if strings.Contains(text, "\x1b[") {
		t.Errorf("the line mode wrote terminal escapes:\n%q", text)
	}
	st, ok := queryState(context.Background(), s.c, id)
	if !ok || st.Status != api.StatusWaitingUser {
		t.Errorf("after the client left: status %q, want %s", st.Status, api.StatusWaitingUser)
	}
}

// chatLines runs `starter chat` in line mode on s's server with model ref,
// typing input, and returns what it printed once it has left (failing the
// test if it does not leave within two minutes).
func chatLines(t *testing.T, s *server, bin, id, ref, input string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command(bin, "chat", "--address", s.srv.Address(), "--namespace", s.srv.Namespace(), "--id", id, "--model", ref)
	cmd.Env = append(os.Environ(), "TODOFLOW_STATE_DIR="+t.TempDir(), "TEMPORAL_ADDRESS=", "TEMPORAL_NAMESPACE=")
	cmd.Stdin = strings.NewReader(input)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("the client did not leave within 2 minutes; its output:\n%s", out)
	}
	return out, err
}
