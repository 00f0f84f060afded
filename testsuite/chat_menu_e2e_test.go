package testsuite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tfclient "github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/model"
)

// The prompt's aids, in tmux against a real server and worker: "/" lists
// the commands with their help and Tab completes them; a paste of 200
// lines shows as one marker, is sent whole, and shows in the transcript by
// its first lines; Tab opens a collapsed paste; Ctrl+R finds an earlier
// line.
func TestChatMenuEndToEnd(t *testing.T) {
	tm := newTmux(t)
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	bin := buildStarter(t)
	script := filepath.Join(t.TempDir(), "menu.json")
	if err := os.WriteFile(script, []byte(`{"model": [{"content": "Read all 200 lines."}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	const id = "chat-menu"
	env := []string{"TODOFLOW_STATE_DIR=" + t.TempDir(), "TEMPORAL_ADDRESS=", "TEMPORAL_NAMESPACE=", "TERM=xterm-256color"}
	const limit = 90 * time.Second
	tm.start("menu", env, bin, "chat", "--address", s.srv.Address(), "--namespace", s.srv.Namespace(), "--id", id, "--model", "script:"+script)
	tm.waitFor("menu", limit, askFirst)

	// "/" lists every command with its help, /exit too.
	tm.keys("menu", "/")
	tm.waitFor("menu", limit, "/plan", "show the plan checklist", "more (Tab goes through them)")
	tm.keys("menu", "c")
	tm.waitScreen("menu", limit, "the menu narrowed to /c…", func(string) bool {
		v := tm.visible("menu")
		return strings.Contains(v, "/continuation on|off") && strings.Contains(v, "/compact") && strings.Contains(v, "/clear") &&
			!strings.Contains(v, "show the plan checklist")
	})
	tm.keys("menu", "Tab")
	tm.waitFor("menu", limit, "› /continuation on|off", "> /continuation")
	tm.keys("menu", "Tab")
	tm.waitFor("menu", limit, "› /compact", "> /compact")
	tm.keys("menu", "C-c")
	tm.waitScreen("menu", limit, "the menu gone with the line", func(string) bool { return !strings.Contains(tm.visible("menu"), "/compact") })
	tm.keys("menu", "/ex", "Tab")
	tm.waitFor("menu", limit, "> /exit", "the same as /quit")
	tm.keys("menu", "C-c")

	// A paste of 200 lines: one marker at the prompt, the message whole.
	var lines []string
	for i := 1; i <= 200; i++ {
		lines = append(lines, fmt.Sprintf("log line %d", i))
	}
	paste := strings.Join(lines, "\n")
	tm.must("set-buffer", "-b", "log", paste)
	tm.must("paste-buffer", "-p", "-b", "log", "-t", "menu")
	tm.waitFor("menu", limit, "> [pasted 200 lines]")
	if screen := tm.screen("menu"); strings.Contains(screen, "log line 150") {
		t.Fatalf("the paste shows whole at the prompt:\n%s", screen)
	}
	tm.keys("menu", " what fails here?", "Enter")
	tm.waitFor("menu", limit, "> log line 1", "⋯ 197 more lines", "Read all 200 lines.")
	if screen := tm.screen("menu"); strings.Contains(screen, "log line 150") {
		t.Errorf("the transcript shows the paste whole:\n%s", screen)
	}
	msgs, err := tfclient.New(s.c, tfclient.Options{}).Session(id).Messages(context.Background(), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		if m.Role == model.RoleUser && m.Name == "" {
			got = append(got, m.Content)
		}
	}
	if want := paste + " what fails here?"; len(got) != 1 || got[0] != want {
		t.Fatalf("the session's user messages: %d, want one of the paste whole and the words after it", len(got))
	}

	// Tab opens a collapsed paste for editing.
	tm.must("paste-buffer", "-p", "-b", "log", "-t", "menu")
	tm.waitFor("menu", limit, "> [pasted 200 lines]")
	tm.keys("menu", "Tab")
	tm.waitScreen("menu", limit, "the paste opened", func(string) bool {
		v := tm.visible("menu")
		return strings.Contains(v, "log line 200") && !strings.Contains(v, "[pasted 200 lines]")
	})
	tm.keys("menu", "C-c")

	// Ctrl+R finds the earlier message by a word of it.
	tm.keys("menu", "C-r", "fails")
	tm.waitFor("menu", limit, `↶ search earlier lines: "fails"`)
	tm.keys("menu", "Enter")
	tm.waitScreen("menu", limit, "the line found in the prompt", func(string) bool {
		v := tm.visible("menu")
		return strings.Contains(v, "log line 200 what fails here?") && !strings.Contains(v, "↶ search")
	})
}
