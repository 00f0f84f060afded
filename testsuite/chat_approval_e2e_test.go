package testsuite

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/api"
	tfclient "github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// approvalScript writes notes.txt, then rewrites it again and again, each
// write waiting for approval: the first is answered Enter, the second n
// with a line of feedback, the third Esc (a turn of its own), the fourth a
// (always), so that the fifth waits for nothing.
const approvalScript = `{"model": [
  {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": "one\ntwo\nthree\n"}}]},
  {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": "one\n2\nthree\n"}}]},
  {"content": "Kept two."},
  {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": "one\ntwo\nthree\nfour\n"}}]},
  {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": "one\ntwo\nthree\nfive\n"}}]},
  {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": "one\ntwo\nthree\nfive\nsix\n"}}]},
  {"content": "All written."}
]}`

// The approval prompt in tmux, against a real server and worker: a
// write_file that waits shows the diff it would make, worked out by the
// worker before the wait (a new file's size, then each change's lines),
// and each choice answers it: Enter approves (the file is written), n
// takes a line of feedback and refuses (the model reads it, the file
// stays), Esc refuses the wait and stops the turn, a approves the tool
// for the rest of the session (the next write waits for nothing).
func TestChatApprovalPromptShowsTheDiff(t *testing.T) {
	tm := newTmux(t)
	s := startServer(t)
	stateDir := t.TempDir()
	s.startWorker(t, stateDir)
	bin := buildStarter(t)
	const id = "chat-approval"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	zero, off := 0, false
	sess, err := tfclient.New(s.c, tfclient.Options{}).Start(ctx, api.AgentInput{
		Prompt: "write the notes", Model: writeScenario(t, approvalScript).RunInput().Model, IdleTimeoutS: 3600,
		Approval: todo.ToolApproval{"write_file": todo.ApprovalRequired},
		Todo:     todo.Config{FinalizationMaxCorrections: &zero, Continuation: &off},
	}, tfclient.StartOptions{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"TODOFLOW_STATE_DIR=" + t.TempDir(), "TEMPORAL_ADDRESS=", "TEMPORAL_NAMESPACE=", "TERM=xterm-256color"}
	tm.start("chat", env, bin, "chat", "--address", s.srv.Address(), "--namespace", s.srv.Namespace(), "--id", id)
	const limit = 90 * time.Second
	// notesAre checks what notes.txt holds after an answer.
	notesAre := func(after, want string) {
		t.Helper()
		st, ok := queryState(ctx, s.c, id)
		if !ok {
			t.Fatal("no state")
		}
		if b, _ := os.ReadFile(filepath.Join(stateDir, "sessions", st.Session, "notes.txt")); string(b) != want {
			t.Errorf("after %s, notes.txt = %q, want %q", after, b, want)
		}
	}

	// Enter: yes. A new file shows its size; the whole file follows.
	tm.waitFor("chat", limit, "✋ write_file · call call_1_0", "diff: a new file of 3 lines", "content (3 lines): the new file, whole:", "Enter/y yes")
	tm.keys("chat", "Enter")
	tm.waitFor("chat", limit, "approved", "✋ write_file · call call_2_0")
	notesAre("Enter", "one\ntwo\nthree\n")

	// n: the diff of the change shows, coloured; the refusal takes a line.
	screen := tm.waitFor("chat", limit, "diff: what the call would change, +1 −1 lines:", "    @@ -1,3 +1,3 @@", "    -two", "    +2")
	if !strings.Contains(screen, "content (3 lines): the new file, whole:") {
		t.Errorf("the whole new file does not follow the diff:\n%s", screen)
	}
	colours := tm.colours("chat")
	for _, want := range []string{"\x1b[31m", "\x1b[32m"} {
		if !slices.Contains(colours, want) {
			t.Errorf("no %q among the prompt's colours %q", want, colours)
		}
	}
	tm.keys("chat", "n")
	tm.waitFor("chat", limit, "n: type why below")
	tm.keys("chat", "keep two as a word", "Enter")
	tm.waitFor("chat", limit, "Kept two.", "your turn")
	notesAre("n", "one\ntwo\nthree\n")

	// Esc: the wait is refused, the turn stops.
	tm.keys("chat", "try again", "Enter")
	tm.waitFor("chat", limit, "✋ write_file · call call_4_0", "    +four")
	tm.keys("chat", "Escape")
	tm.waitFor("chat", limit, "Interrupted by the user", "your turn")
	notesAre("Esc", "one\ntwo\nthree\n")

	// a: always; the next write runs unasked.
	tm.keys("chat", "once more", "Enter")
	tm.waitFor("chat", limit, "✋ write_file · call call_5_0", "    +five")
	tm.keys("chat", "a")
	tm.waitFor("chat", limit, "All written.", "your turn")
	notesAre("a", "one\ntwo\nthree\nfive\nsix\n")

	msgs, err := sess.Messages(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	answers := map[string]string{}
	for _, m := range msgs {
		if m.Role == model.RoleTool {
			answers[m.ToolCallID] = m.Content
		}
	}
	for call, want := range map[string]string{
		"call_1_0": "wrote 14 bytes to notes.txt",
		"call_2_0": "Not run: the user rejected this call of write_file. Their feedback: keep two as a word",
		"call_4_0": "Not run: the user interrupted the turn before this call was approved.",
		"call_5_0": "wrote 19 bytes to notes.txt",
		"call_6_0": "wrote 23 bytes to notes.txt",
	} {
		if got := answers[call]; !strings.Contains(got, want) {
			t.Errorf("%s answered %q, want %q", call, got, want)
		}
	}
	// Each wait's diff came from the workspace's host, asked once before
	// the wait: four previews, on the host's queue.
	st, _ := queryState(ctx, s.c, id)
	previews := 0
	for _, ev := range historyOf(t, s.c, id) {
		if a := ev.GetActivityTaskScheduledEventAttributes(); a.GetActivityType().GetName() == activities.PreviewToolName {
			previews++
			if st.Workspace == nil || a.GetTaskQueue().GetName() != st.Workspace.HostQueue {
				t.Errorf("a preview went to queue %q, not the host's (%+v)", a.GetTaskQueue().GetName(), st.Workspace)
			}
		}
	}
	if previews != 4 {
		t.Errorf("%d previews in history, want 4 (one per wait)", previews)
	}
	// The diffs were the user's: none reached the model.
	for _, m := range msgs {
		if strings.Contains(m.Content, "@@ -1,3 +1,3 @@") {
			t.Errorf("a diff reached the model's messages: %+v", m)
		}
	}
}
