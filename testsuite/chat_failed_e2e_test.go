package testsuite

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/client"
)

// A model no session can run is refused when the chat opens, before a
// session starts, as a bad argument (exit 2, as with the embedded worker);
// a session that fails while the client shows it (one started elsewhere,
// with the same bad model) is said to have failed, and why (exit 1).
func TestChatFailedSessionEndToEnd(t *testing.T) {
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	bin := buildStarter(t)
	const why = `model "gpt-4o": want openai:<model name> or script:<scenario file>`

	t.Run("refused at the start", func(t *testing.T) {
		out, err := chatLines(t, s, bin, "chat-refused", "gpt-4o", "hello\n")
		t.Logf("the client's output:\n%s", out)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("starter chat: %v, want exit status 2", err)
		}
		if !strings.Contains(string(out), why) {
			t.Errorf("the output does not say why the model is refused")
		}
		if _, err := s.c.DescribeWorkflowExecution(context.Background(), "chat-refused", ""); err == nil {
			t.Error("a session was started with the refused model")
		}
	})

	t.Run("failed while shown", func(t *testing.T) {
		const id = "chat-failed"
		// Started as `temporal workflow start` would, which checks nothing.
		if _, err := s.c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: id, TaskQueue: api.TaskQueue},
			api.WorkflowName, api.AgentInput{Model: "gpt-4o"}); err != nil {
			t.Fatal(err)
		}
		out, err := chatLines(t, s, bin, id, "", "hello\n")
		t.Logf("the client's output:\n%s", out)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("starter chat: %v, want exit status 1", err)
		}
		text := string(out)
		if want := "The session has ended (failed): "; !strings.Contains(text, want) {
			t.Fatalf("the output lacks %q", want)
		}
		// The reason, in the worker's words, without the wrappers' run ids.
		if !strings.Contains(text, why) || strings.Contains(text, "runID") {
			t.Errorf("the output does not say why the session failed, plainly")
		}
	})
}
