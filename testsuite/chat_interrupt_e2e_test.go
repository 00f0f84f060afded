package testsuite

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"
)

// Text kept on interrupt: Esc in the middle of a reply leaves what was
// written on the screen, marked as cut, and in the transcript, as the
// worker reports it: the next model request carries it, and a client that
// attaches later shows it cut too.
func TestChatTextKeptOnInterrupt(t *testing.T) {
	words := make([]string, 60)
	for i := range words {
		words[i] = fmt.Sprintf("w%02d", i+1)
	}
	stub := newModelStub(t, assistantText(strings.Join(words, " ")))
	stub.setFinalText("Going on from the cut.")
	stub.streamSlowly(400 * time.Millisecond) // 24 s for the whole reply
	t.Setenv("OPENAI_BASE_URL", stub.baseURL())
	t.Setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
	tm := newTmux(t)
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	bin := buildStarter(t)
	const id = "chat-cut"
	env := []string{"TODOFLOW_STATE_DIR=" + t.TempDir(), "TEMPORAL_ADDRESS=", "TEMPORAL_NAMESPACE=", "TERM=xterm-256color", "NO_COLOR=1"}
	chat := []string{bin, "chat", "--address", s.srv.Address(), "--namespace", s.srv.Namespace(), "--id", id}
	const limit = 60 * time.Second

	tm.start("cut", env, append(chat, "--model", "openai:test-model")...)
	tm.waitFor("cut", limit, askFirst)
	tm.keys("cut", "tell me the words", "Enter")
	before := tm.waitFor("cut", limit, "w05", "Esc: stop the turn")
	tm.keys("cut", "Escape")
	esc := time.Now()
	screen := tm.waitFor("cut", limit, "✂ cut here", "Interrupted by the user here", "your turn")
	// The worker learns of the interrupt at the call's next heartbeat
	// (3.5 s apart), and the run waits for its answer: a few seconds.
	t.Logf("from Esc to the reply kept on screen: %v", time.Since(esc).Round(10*time.Millisecond))
	if strings.Contains(screen, "w60") {
		t.Fatalf("the whole reply was written before Esc took effect:\n%s", screen)
	}
	st, ok := queryState(context.Background(), s.c, id)
	if !ok || st.Status != api.StatusWaitingUser {
		t.Fatalf("after Esc: status %q (read: %v), want %s", st.Status, ok, api.StatusWaitingUser)
	}

	// The next request carries the reply as far as it was written, before
	// the mark and the note.
	tm.keys("cut", "go on", "Enter")
	tm.waitFor("cut", limit, "Going on from the cut.")
	reqs := stub.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	var cut string
	msgs, _ := reqs[1].body["messages"].([]any)
	for _, m := range msgs {
		m, _ := m.(map[string]any)
		if c, _ := m["content"].(string); m["role"] == "assistant" && strings.Contains(c, api.InterruptedCut) {
			cut = c
		}
	}
	kept, note := api.SplitInterrupted(cut)
	if !strings.HasPrefix(kept, "w01 w02 w03 w04 w05") || strings.Contains(kept, "w60") || !strings.HasPrefix(note, "Interrupted by the user here") {
		t.Fatalf("the next request's interrupted message is %q; want the words written before Esc, then the note", cut)
	}
	// What the user read before Esc, the model reads: the last word the
	// screen showed then is in the message.
	shown := ""
	for _, w := range words {
		if strings.Contains(before, w) {
			shown = w
		}
	}
	if !strings.Contains(kept, shown) {
		t.Errorf("the screen showed %s before Esc; the kept reply %q does not have it", shown, kept)
	}

	// A client that attaches later shows the reply cut, from the transcript.
	tm.keys("cut", "C-d")
	tm.waitExit("cut", limit)
	tm.start("again", env, chat...)
	tm.waitFor("again", limit, "attached", "w05", "✂ cut here", "Interrupted by the user here", "Going on from the cut.")
}
