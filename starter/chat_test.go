package main

import (
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/model/script"
)

// With no model the chat plays the demo of `starter run`, then answers
// every later message with one reply that says it is a demo; the file is a
// script the worker reads.
func TestChatDemo(t *testing.T) {
	state := t.TempDir()
	t.Setenv("TODOFLOW_STATE_DIR", state)
	d, err := writeChatDemo()
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(d.path) != filepath.Join(state, "demo") {
		t.Errorf("the demo is at %s, want in %s/demo (the folder the worker serves)", d.path, state)
	}
	data, err := os.ReadFile(d.path)
	if err != nil {
		t.Fatal(err)
	}
	chatScript, err := script.Parse(data, "")
	if err != nil {
		t.Fatalf("the chat demo is not a script: %v", err)
	}
	runScript, err := script.Parse(demo, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(chatScript.Steps), len(runScript.Steps); got != want {
		t.Fatalf("the chat demo has %d steps, want the run demo's %d", got, want)
	}
	// Every message after the demo's is answered, the second as the first.
	for _, call := range []int{len(runScript.Steps) + 1, len(runScript.Steps) + 2, len(runScript.Steps) + 30} {
		if got := chatScript.At(call).Response.Content; got != demoEnd {
			t.Errorf("call %d is answered %q, want demoEnd", call, got)
		}
	}
	if !strings.Contains(d.prompt, "NOTES.md") {
		t.Errorf("the demo's first message is %q, want the run demo's prompt", d.prompt)
	}
}

// The chat's log is in the state folder, private, started afresh past
// chatLogMax; while the chat runs the process's logs go there.
func TestChatLog(t *testing.T) {
	state := t.TempDir()
	t.Setenv("TODOFLOW_STATE_DIR", state)
	path := filepath.Join(state, "chat.log")
	if err := os.WriteFile(path, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, chatLogMax+1); err != nil {
		t.Fatal(err)
	}
	f, got, err := openChatLog()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got != path {
		t.Errorf("the log is %s, want %s", got, path)
	}
	if fi, err := os.Stat(path + ".1"); err != nil || fi.Size() != chatLogMax+1 {
		t.Errorf("the log before is not kept as chat.log.1: %v", err)
	}
	if fi, err := f.Stat(); err != nil || fi.Size() != 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("the new log: %v, %v", fi, err)
	}

	restore := logTo(f)
	slog.Info("from slog")
	log.Print("from log")
	restore()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`msg="starter chat"`, "from slog", "from log"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the log lacks %q:\n%s", want, data)
		}
	}
	if log.Writer() != os.Stderr {
		t.Errorf("log's output is not put back")
	}
}

// A malformed --model is a bad argument (exit 2) with a separate worker
// too, said before the server is dialled (none answers here).
func TestChatRefusesMalformedModel(t *testing.T) {
	t.Setenv("TODOFLOW_STATE_DIR", t.TempDir())
	var stdout, stderr strings.Builder
	if code := runCLI([]string{"chat", "--address", "127.0.0.1:1", "--model", "gpt-4o"}, &stdout, &stderr); code != 2 {
		t.Errorf("exit %d, want 2; stderr:\n%s", code, stderr.String())
	}
	if want := "--model gpt-4o: "; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
}

// With the in-process worker, a --model it cannot serve is refused before
// the chat starts (exit 2, saying why), not at the session's first message.
func TestChatRefusesModelItCannotServe(t *testing.T) {
	realBinary(t)
	t.Setenv("TODOFLOW_STATE_DIR", t.TempDir())
	t.Setenv("TEMPORAL_ADDRESS", "")
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	for _, tt := range []struct{ model, want string }{
		{"gpt-4o", "--model gpt-4o: model \"gpt-4o\": want openai:<model name> or script:<scenario file>"},
		{"openai:gpt-4o-mini", "--model openai:gpt-4o-mini: openai: no API key"},
	} {
		var stdout, stderr strings.Builder
		if code := runCLI([]string{"chat", "--model", tt.model}, &stdout, &stderr); code != 2 {
			t.Errorf("%s: exit %d, want 2; stderr:\n%s", tt.model, code, stderr.String())
		}
		if !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%s: stderr %q, want %q", tt.model, stderr.String(), tt.want)
		}
	}
}
