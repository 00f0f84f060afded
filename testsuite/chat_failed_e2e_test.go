package testsuite

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
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
	cmd := exec.Command(bin, "chat", "--address", s.srv.Address(), "--namespace", s.srv.Namespace(), "--id", id, "--model", "gpt-4o")
	cmd.Env = append(os.Environ(), "TODOFLOW_STATE_DIR="+t.TempDir(), "TEMPORAL_ADDRESS=", "TEMPORAL_NAMESPACE=")
	cmd.Stdin = strings.NewReader("hello\n")
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
