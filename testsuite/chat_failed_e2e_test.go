package testsuite

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// A session that fails while the client shows it: the client says why (a
// worker that cannot serve the session's model fails it at the first
// message) and exits 1, not 0.
func TestChatFailedSessionEndToEnd(t *testing.T) {
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	bin := buildStarter(t)
	const id = "chat-failed"
	// Not a model reference the worker knows: it wants openai:NAME.
	out, err := chatLines(t, s, bin, id, "gpt-4o", "hello\n")
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
	if !strings.Contains(text, `want openai:<model name> or script:<scenario file>`) || strings.Contains(text, "runID") {
		t.Errorf("the output does not say why the session failed, plainly")
	}
}
