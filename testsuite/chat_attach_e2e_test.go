package testsuite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	tfclient "github.com/todoflow/todoflow/client"
)

// A long transcript comes back whole on every attach: ten attaches in a
// row, each showing all of a session's 12 turns (36 lines of replies).
func TestChatReattachShowsTheWholeTranscript(t *testing.T) {
	tm := newTmux(t)
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	bin := buildStarter(t)
	const turns = 12
	var answers []string
	for i := 1; i <= turns; i++ {
		answers = append(answers, fmt.Sprintf(`{"content": "Answer %d, line one.\nAnswer %d, line two.\nAnswer %d, line three."}`, i, i, i))
	}
	script := filepath.Join(t.TempDir(), "long.json")
	if err := os.WriteFile(script, []byte(`{"model": [`+strings.Join(answers, ",")+`]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const id = "chat-long"
	sess, err := tfclient.New(s.c, tfclient.Options{}).Start(ctx, api.AgentInput{Model: "script:" + script}, tfclient.StartOptions{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= turns; i++ {
		if _, err := sess.Send(ctx, fmt.Sprintf("question %d", i)).Reply(ctx); err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
	}
	env := []string{"TODOFLOW_STATE_DIR=" + t.TempDir(), "TEMPORAL_ADDRESS=", "TEMPORAL_NAMESPACE=", "TERM=xterm-256color"}
	chat := []string{bin, "chat", "--address", s.srv.Address(), "--namespace", s.srv.Namespace(), "--id", id}
	for try := 1; try <= 10; try++ {
		name := fmt.Sprintf("attach%d", try)
		tm.start(name, env, chat...)
		// The transcript is read after the view is up: what is on screen
		// once the last reply shows, not once the prompt does.
		tm.waitFor(name, 60*time.Second, "attached", "your turn", fmt.Sprintf("Answer %d, line three.", turns))
		screen := tm.screen(name)
		for i := 1; i <= turns; i++ {
			for _, want := range []string{fmt.Sprintf("question %d", i), fmt.Sprintf("Answer %d, line one.", i), fmt.Sprintf("Answer %d, line three.", i)} {
				if !strings.Contains(screen, want) {
					t.Fatalf("attach %d lacks %q:\n%s", try, want, screen)
				}
			}
		}
		tm.keys(name, "C-d")
		tm.waitExit(name, 30*time.Second)
	}
}

// In a small window with the checklist open, the view is redrawn in place:
// it never pushes the transcript out of the scrollback with copies of
// itself.
func TestChatSmallWindowDoesNotScroll(t *testing.T) {
	tm := newTmux(t)
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	bin := buildStarter(t)
	var items []string
	for i := 1; i <= 12; i++ {
		status := map[bool]string{true: "in_progress", false: "pending"}[i == 1]
		items = append(items, fmt.Sprintf(`{"content": "Step number %d", "status": %q}`, i, status))
	}
	script := filepath.Join(t.TempDir(), "list.json")
	body := `{"model": [{"tool_calls": [{"name": "write_todos", "arguments": {"todos": [` + strings.Join(items, ",") + `]}}]},
	  {"content": "Listed, and waiting a while.", "delay_ms": 8000}]}`
	if err := os.WriteFile(script, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"TODOFLOW_STATE_DIR=" + t.TempDir(), "TEMPORAL_ADDRESS=", "TEMPORAL_NAMESPACE=", "TERM=xterm-256color"}
	tm.start("small", env, bin, "chat", "--address", s.srv.Address(), "--namespace", s.srv.Namespace(), "--id", "chat-small", "--model", "script:"+script)
	tm.must("resize-window", "-t", "small", "-x", "60", "-y", "12")
	tm.waitFor("small", 60*time.Second, askFirst)
	tm.keys("small", "make the list", "Enter")
	tm.waitFor("small", 60*time.Second, "0/12")
	tm.keys("small", "C-t")
	// The view redraws with every look until the reply, which the script
	// holds back 8 s: the turn's end, not a clock of the test's, says the
	// redraws happened.
	tm.waitFor("small", 60*time.Second, "Listed, and waiting a while.")
	screen := tm.screen("small")
	if n := strings.Count(screen, "Step number 7"); n > 2 {
		t.Fatalf("the checklist is %d times in the scrollback: its redraws scrolled the screen; the window:\n%s", n, tm.visible("small"))
	}
	if !strings.Contains(screen, "New session chat-small") {
		t.Fatalf("the transcript's start left the scrollback:\n%s", screen)
	}
}
