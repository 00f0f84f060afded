package testsuite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// stallScript is one reply written over 40 s: long enough for its worker
// to be lost while it streams.
const stallScript = `{"model": [
  {"content": "Reading the logs now, one service after another, and the slow one first because it fails most; then the queue, the cache and the database, each in turn, until the cause shows.", "delay_ms": 40000}
]}`

// The chat says what is wrong, by name, in tmux against a real server: its
// worker lost mid-reply, the status line names the queue no worker polls
// (not "working"), and the text streamed so far stays, marked as cut; the
// server gone, it
// names the server that does not answer.
func TestChatStallEndToEnd(t *testing.T) {
	tm := newTmux(t)
	s := startServer(t)
	stopWorker := s.startWorker(t, t.TempDir())
	bin := buildStarter(t)
	script := filepath.Join(t.TempDir(), "stall.json")
	if err := os.WriteFile(script, []byte(stallScript), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"TODOFLOW_STATE_DIR=" + t.TempDir(), "TEMPORAL_ADDRESS=", "TEMPORAL_NAMESPACE=", "TERM=xterm-256color"}
	const limit = 90 * time.Second
	tm.start("stall", env, bin, "chat", "--address", s.srv.Address(), "--namespace", s.srv.Namespace(), "--model", "script:"+script)
	tm.waitFor("stall", limit, askFirst)
	tm.keys("stall", "why is it slow?", "Enter")
	const part = "● Reading the logs now"
	tm.waitFor("stall", limit, part, "working")

	stopWorker()
	screen := tm.waitFor("stall", limit, "no worker polls `todoflow` since ", "(start one: go run ./worker --address "+s.srv.Address()+")",
		"✂ cut here: the model call stopped")
	visible := tm.visible("stall")
	if strings.Contains(visible, "working") {
		t.Errorf("with no worker the screen still says working:\n%s", visible)
	}
	if !strings.Contains(screen, part) {
		t.Errorf("the reply streamed so far is gone:\n%s", screen)
	}

	if err := s.srv.Stop(); err != nil {
		t.Logf("stop the server: %v", err)
	}
	tm.waitFor("stall", limit, "the Temporal server at "+s.srv.Address()+" does not answer")
}
