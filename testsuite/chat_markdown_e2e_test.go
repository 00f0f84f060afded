package testsuite

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// markdownReply is what a model writes: a heading, emphasis, a nested
// list, a fenced code block with a tab.
const markdownReply = "# Fixing the check\n\n" +
	"The check ran **after** the lookup.\n\n" +
	"- moved `checkToken`\n" +
	"- added a test\n" +
	"  - for *expired* tokens\n\n" +
	"```go\nfunc check(t Token) error {\n\treturn verify(t) // **kept**\n}\n```\n\n" +
	"Done."

// A reply's markdown on the terminal, in tmux against a real server and
// worker: streamed, then printed, with its markup turned into styles and
// its code kept as written; with NO_COLOR, the same reply without a single
// escape sequence.
func TestChatMarkdownEndToEnd(t *testing.T) {
	tm := newTmux(t)
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	bin := buildStarter(t)
	content, err := json.Marshal(markdownReply)
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "markdown.json")
	if err := os.WriteFile(script, []byte(`{"model": [{"content": `+string(content)+`, "delay_ms": 3000}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	const id = "chat-markdown"
	env := []string{"TODOFLOW_STATE_DIR=" + t.TempDir(), "TEMPORAL_ADDRESS=", "TEMPORAL_NAMESPACE=", "TERM=xterm-256color"}
	chat := []string{bin, "chat", "--address", s.srv.Address(), "--namespace", s.srv.Namespace(), "--id", id}
	const limit = 90 * time.Second

	tm.start("colour", env, append(chat, "--model", "script:"+script)...)
	tm.waitFor("colour", limit, askFirst)
	tm.keys("colour", "fix the check", "Enter")
	tm.waitFor("colour", limit, "New session "+id)
	screen := tm.waitFor("colour", limit, "Done.", "your turn")
	for _, want := range []string{
		"● Fixing the check\n",
		"  The check ran after the lookup.",
		"  • moved checkToken",
		"  • added a test",
		"    ◦ for expired tokens",
		"      func check(t Token) error {",
		"          return verify(t) // **kept**",
		"      }",
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen has no %q:\n%s", want, screen)
		}
	}
	// No markup left but the code's own; the reply printed once.
	outside := strings.Replace(screen, "// **kept**", "", 1)
	for _, markup := range []string{"**", "```", "# Fixing", "`checkToken`"} {
		if strings.Contains(outside, markup) {
			t.Errorf("%q is on the screen:\n%s", markup, screen)
		}
	}
	if n := strings.Count(screen, "Fixing the check"); n != 1 {
		t.Errorf("the reply shows %d times, want once:\n%s", n, screen)
	}

	// NO_COLOR: the same reply, the # and the backticks that say what
	// colour said, and no escape sequence in any of its lines.
	tm.start("plain", append(env, "NO_COLOR=1"), chat...)
	tm.waitFor("plain", limit, "attached", "Done.")
	raw := tm.must("capture-pane", "-p", "-e", "-J", "-S", "-", "-t", "plain")
	start, end := strings.Index(raw, "Fixing the check"), strings.Index(raw, "Done.")
	if start < 0 || end < start {
		t.Fatalf("the reply is not on the screen:\n%q", raw)
	}
	reply := raw[strings.LastIndex(raw[:start], "\n")+1 : end]
	// tmux writes resets (0, 39, 49) where a line follows a styled one;
	// anything else would be the reply's.
	for _, seq := range regexp.MustCompile(`\x1b\[([0-9;:]*)m`).FindAllStringSubmatch(reply, -1) {
		for _, p := range strings.FieldsFunc(seq[1], func(r rune) bool { return r == ';' || r == ':' }) {
			if p != "0" && p != "39" && p != "49" {
				t.Errorf("with NO_COLOR the reply is styled (%q):\n%q", seq[0], reply)
			}
		}
	}
	if plain := regexp.MustCompile(`\x1b\[[0-9;:]*m`).ReplaceAllString(reply, ""); strings.Contains(plain, "\x1b") {
		t.Errorf("with NO_COLOR the reply has escape sequences:\n%q", reply)
	}
	reply = regexp.MustCompile(`\x1b\[[0-9;:]*m`).ReplaceAllString(reply, "")
	for _, want := range []string{"● # Fixing the check", "  • moved `checkToken`", "    ◦ for expired tokens", "          return verify(t) // **kept**"} {
		if !strings.Contains(reply, want) {
			t.Errorf("with NO_COLOR, no %q:\n%s", want, reply)
		}
	}
}
