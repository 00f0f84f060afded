package testsuite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// streamScript is one reply written over three seconds: the worker
// heartbeats it as it streams, and the SDK logs a heartbeat that the
// call's end cut short.
const streamScript = `{"model": [
  {"content": "A reply written over three seconds, in pieces, while the worker heartbeats what it has so far.", "delay_ms": 3000}
]}`

// `starter chat` with no address, in tmux: the embedded server and the
// in-process worker log to <state>/chat.log, which the intro names, and
// nothing of theirs reaches the screen; with no model configured a new
// session plays the scripted demo, said before anything is typed, and
// answers every message typed after it.
func TestChatEmbeddedEndToEnd(t *testing.T) {
	tm := newTmux(t)
	if testing.Short() {
		t.Skip("end-to-end test with the embedded Temporal server; skipped with -short")
	}
	bin := buildStarter(t)
	state := t.TempDir()
	script := filepath.Join(t.TempDir(), "stream.json")
	if err := os.WriteFile(script, []byte(streamScript), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(state, "chat.log")
	env := []string{"TODOFLOW_STATE_DIR=" + state, "TEMPORAL_ADDRESS=", "TEMPORAL_NAMESPACE=", "TERM=xterm-256color",
		"OPENAI_API_KEY=", "OPENAI_BASE_URL=", "TODOFLOW_MODEL="}
	const limit = 2 * time.Minute
	leave := func(name string) {
		t.Helper()
		tm.keys(name, "C-c")
		tm.waitFor(name, limit, "Ctrl+C again to leave")
		tm.keys(name, "C-c")
		tm.waitFor(name, limit, "Left session", "the server stopped with this client")
		tm.waitExit(name, limit)
	}
	// What the SDK's and the server's logs look like (slog's text handler,
	// the server's JSON lines), and the warning the issue saw.
	logLike := []string{"level=", `"level":`, "RecordActivityHeartbeat", "context canceled", "Failed to poll"}

	tm.start("stream", env, bin, "chat", "--model", "script:"+script)
	tm.waitFor("stream", limit, "Embedded server at", "log: "+logPath, askFirst)
	tm.keys("stream", "stream a reply", "Enter")
	tm.waitFor("stream", limit, "while the worker heartbeats what it has so far.", "your turn")
	time.Sleep(time.Second) // what the worker logs once the call is over
	leave("stream")
	screen := tm.screen("stream")
	for _, l := range logLike {
		if strings.Contains(screen, l) {
			t.Errorf("the screen shows %q, a log's:\n%s", l, screen)
		}
	}
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatalf("the chat's log: %v", err)
	}
	log := string(data)
	// The process's own, the in-process worker's (through slog), the dev
	// server's progress: all in the file.
	for _, want := range []string{`msg="starter chat"`, "Serving script: models", "Temporal dev server:"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
	t.Logf("the chat's log:\n%s", log)

	// No model configured: the demo, said before anything is typed.
	tm.start("demo", env, bin, "chat")
	tm.waitFor("demo", limit, "No model is configured", "plays the demo", "NOTES.md is in the workspace", "3/3 · your turn")
	const demoEnd = "This session is the scripted demo, so no model reads what you type."
	tm.keys("demo", "what is in NOTES.md?", "Enter")
	tm.waitFor("demo", limit, demoEnd)
	// The second message is answered too, not with an empty reply.
	tm.keys("demo", "and now?", "Enter")
	tm.waitScreen("demo", limit, "the demo's second reply", func(s string) bool {
		return strings.Count(s, demoEnd) == 2
	})
	leave("demo")
}
