package testsuite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"

	tfclient "github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/model"
)

// A new chat session starts with its first message, in tmux against a real
// server and worker: a chat left before it leaves no run on the server;
// one that sends it starts the session then, with that message as the
// run's prompt and static summary (what the Web UI's run list shows), and
// the lines typed right after it reach the session after it, in order.
func TestChatSessionStartsWithItsFirstMessage(t *testing.T) {
	tm := newTmux(t)
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	bin := buildStarter(t)
	script := filepath.Join(t.TempDir(), "start.json")
	if err := os.WriteFile(script, []byte(`{"model": [{"content": "Reply one."}, {"content": "Reply two."}, {"content": "Reply three."}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	env := []string{"TODOFLOW_STATE_DIR=" + t.TempDir(), "TEMPORAL_ADDRESS=", "TEMPORAL_NAMESPACE=", "TERM=xterm-256color"}
	chat := []string{bin, "chat", "--address", s.srv.Address(), "--namespace", s.srv.Namespace(), "--model", "script:" + script}
	const limit = 60 * time.Second
	runs := func() int {
		resp, err := s.c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: s.srv.Namespace()})
		if err != nil {
			t.Fatalf("list the runs: %v", err)
		}
		return len(resp.GetExecutions())
	}

	// Opened and left with two Ctrl+C before anything was sent: no run.
	tm.start("left", env, chat...)
	tm.waitFor("left", limit, askFirst)
	time.Sleep(time.Second)
	tm.keys("left", "C-c")
	tm.waitFor("left", limit, "Ctrl+C again to leave")
	tm.keys("left", "C-c")
	tm.waitFor("left", limit, "nothing was sent, so no session was started")
	tm.waitExit("left", limit)
	if n := runs(); n != 0 {
		t.Fatalf("a chat left before its first message left %d runs on the server", n)
	}

	const id = "chat-summary"
	tm.start("first", env, append(chat, "--id", id)...)
	tm.waitFor("first", limit, askFirst)
	if _, err := s.c.DescribeWorkflowExecution(ctx, id, ""); !errors.As(err, new(*serviceerror.NotFound)) {
		t.Fatalf("before its first message the session is on the server (%v)", err)
	}
	// Three lines in one burst: the second and third are typed while the
	// first starts the session.
	const first = "list the open auth bugs"
	tm.keys("first", first, "Enter", "then the billing ones", "Enter", "and the rest", "Enter")
	tm.waitFor("first", limit, "New session "+id, "Reply one.", "Reply two.")

	desc, err := s.c.DescribeWorkflow(ctx, id, "")
	if err != nil {
		t.Fatal(err)
	}
	if summary, err := desc.GetStaticSummary(); err != nil || summary != first {
		t.Errorf("the run's static summary is %q (%v), want the first message %q", summary, err, first)
	}
	want := []string{first, "then the billing ones", "and the rest"}
	sess := tfclient.New(s.c, tfclient.Options{}).Session(id)
	var got []string
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		msgs, err := sess.Messages(ctx, 0, 100)
		if err != nil {
			t.Fatalf("messages: %v", err)
		}
		got = got[:0]
		for _, m := range msgs {
			if m.Role == model.RoleUser && m.Name == "" {
				got = append(got, m.Content)
			}
		}
		if len(got) >= len(want) {
			break
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("the session's user messages are %q, want %q, in that order", got, want)
	}

	// The server goes away before the first message: the start fails, says
	// so, and the message waits at the prompt to be sent again.
	tm.start("down", env, chat...)
	tm.waitFor("down", limit, askFirst)
	if err := s.srv.Stop(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	tm.keys("down", "are you there", "Enter")
	// The notice is printed above the view, which is drawn on the next
	// frame: the prompt is read once it shows the message again.
	tm.waitFor("down", limit, "The session did not start: the Temporal server did not answer", "back at the prompt", "> are you there")
	v := tm.visible("down")
	t.Logf("the failed start was shown %s after Enter:\n%s", time.Since(start).Round(100*time.Millisecond), v)
	if !strings.Contains(v, "> are you there") || !strings.Contains(v, askFirst) {
		t.Errorf("after the failed start the prompt lost the message, or the status changed:\n%s", v)
	}
}
