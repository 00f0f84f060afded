package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/api"

	"github.com/todoflow/todoflow/todo"
)

// hostile is what a reply, a todo or a file read back may hold to take over
// the terminal: it sets the clipboard (OSC 52), makes a link to another
// place than it shows (OSC 8) and erases the line above (CSI). What it shows
// is hostileShown.
const (
	hostile      = "hello \x1b]52;c;aGk=\x07wor\x1b]8;;https://evil.example/\x07ld\x1b]8;;\x07\x1b[2K\x1b[1A!"
	hostileShown = "hello world!"
)

// hostileState is a run whose every part that the views show holds hostile.
func hostileState() api.State {
	return api.State{
		AgentID: "main", Status: api.StatusPaused, Paused: true, PauseReason: hostile,
		Todos:      []todo.Item{{ID: "1", Content: hostile, Status: todo.InProgress}},
		Plan:       &todo.Plan{PlanID: "plan_1", Title: hostile, Steps: []todo.Step{{StepID: "step_1", Sequence: 1, Description: hostile, Status: todo.StepPending}}},
		ModelError: &api.ModelError{Message: hostile},
		Waiting:    []api.Wait{{AgentID: hostile, Kind: api.WaitPaused, Reason: hostile}},
		Subagents:  map[string]api.State{hostile: {Status: api.StatusPaused, Paused: true, PauseReason: hostile}},
	}
}

// The text outputs print hostile text as text.
func TestTextOutputsClean(t *testing.T) {
	st := hostileState()
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		print func(w *bytes.Buffer)
		min   int // how many times the output shows hostileShown, at least
	}{
		{"state", func(w *bytes.Buffer) { printState(w, "wf-1", st) }, 8},
		{"run's progress", func(w *bytes.Buffer) { (&progressView{w: w, id: "wf-1"}).show(st, raw) }, 6},
		{"run's reply", func(w *bytes.Buffer) { _ = (&runOutput{Reply: hostile}).print(w, false) }, 1},
		{"error line", func(w *bytes.Buffer) {
			// An unknown flag's name, which the error quotes as it is; pflag ends
			// the name at "=".
			runCLI([]string{"state", "wf-1", "--" + strings.ReplaceAll(hostile, "=", "")}, new(bytes.Buffer), w)
		}, 1},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		tt.print(&out)
		for _, bad := range []string{"\x1b", "\x07", "]52;", "aGk=", "evil.example"} {
			if strings.Contains(out.String(), bad) {
				t.Errorf("%s: output holds %q:\n%q", tt.name, bad, out.String())
			}
		}
		if n := strings.Count(out.String(), hostileShown); n < tt.min {
			t.Errorf("%s: output shows %q %d times, want %d at least:\n%q", tt.name, hostileShown, n, tt.min, out.String())
		}
	}
}

// --json is JSON, written byte for byte: a reader gets back what the model
// wrote.
func TestJSONOutputKeepsText(t *testing.T) {
	var out bytes.Buffer
	if err := (&runOutput{WorkflowID: "wf-1", Reply: hostile}).print(&out, true); err != nil {
		t.Fatal(err)
	}
	var back runOutput
	if err := json.Unmarshal(out.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Reply != hostile {
		t.Errorf("reply %q, want %q", back.Reply, hostile)
	}
}

// A sequence split across writes leaves no control either.
func TestCleanWriter(t *testing.T) {
	var out bytes.Buffer
	w := cleanWriter{&out}
	for _, piece := range []string{"a\x1b]52;c;", "aGk=\x07b\x1b", "[2Kc\n"} {
		if n, err := w.Write([]byte(piece)); n != len(piece) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", piece, n, err)
		}
	}
	if got := out.String(); got != "aaGk=b[2Kc\n" {
		t.Errorf("wrote %q", got)
	}
}
