package todo

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// step is one tool result fed to NoteResult.
type step struct {
	name  string
	args  string
	err   bool
	stuck int // the "N times in a row" count the result must carry; 0: none
}

func TestNoteResultRepeatedRefusal(t *testing.T) {
	const (
		honest  = `{"step_id":"step_1","status":"completed","result":"could not reach the server"}`
		honest2 = `{ "result": "could not reach the server", "status": "completed",  "step_id": "step_1" }`
		other   = `{"step_id":"step_2","status":"completed","result":"could not reach the server"}`
	)
	sss := ToolSetStepStatus
	tests := []struct {
		name     string
		disabled bool
		steps    []step
		advice   string // in the last stuck result
	}{
		{"setStepStatus refused three times, key order and spacing ignored", false, []step{
			{sss, honest, true, 0}, {sss, honest2, true, 0}, {sss, honest, true, 3}, {sss, honest2, true, 4},
		}, "report it with setStepStatus, status failed"},
		{"success of the same call resets", false, []step{
			{sss, honest, true, 0}, {sss, honest, true, 0}, {sss, honest, false, 0}, {sss, honest, true, 0}, {sss, honest, true, 0},
		}, ""},
		{"refusal of a different call resets", false, []step{
			{sss, honest, true, 0}, {sss, honest, true, 0}, {sss, other, true, 0}, {sss, honest, true, 0}, {sss, honest, true, 0},
		}, ""},
		{"success of a different call does not reset", false, []step{
			{sss, honest, true, 0}, {"read_file", `{"path":"a"}`, false, 0}, {sss, honest, true, 0},
			{sss, `{"step_id":"step_2","status":"in_progress"}`, false, 0}, {sss, honest, true, 3},
		}, "todo_pause"},
		{"same call twice in one response counts twice, in call order", false, []step{
			{"read_file", `{"path":"x"}`, true, 0}, {"read_file", `{"path":"x"}`, true, 0},
			{"read_file", `{"path":"x"}`, true, 3},
		}, "Change the arguments, do something else, or call todo_pause"},
		{"same arguments, other tool: a different call", false, []step{
			{"read_file", `{"path":"x"}`, true, 0}, {"read_file", `{"path":"x"}`, true, 0}, {"write_file", `{"path":"x"}`, true, 0},
		}, ""},
		{"completeStepWithOutput gets the step advice", false, []step{
			{ToolCompleteStepWithOutput, other, true, 0}, {ToolCompleteStepWithOutput, other, true, 0}, {ToolCompleteStepWithOutput, other, true, 3},
		}, "status failed and the reason as error"},
		{"todo_pause gets its own advice", false, []step{
			{ToolPause, `{}`, true, 0}, {ToolPause, `{}`, true, 0}, {ToolPause, `{}`, true, 3},
		}, "Give a reason of 1 to 500 characters"},
		{"invalid JSON compares as trimmed bytes", false, []step{
			{"mcp__db__query", `{"q":`, true, 0}, {"mcp__db__query", ` {"q":` + "\n", true, 0}, {"mcp__db__query", `{"q":`, true, 3},
		}, "Change the arguments"},
		{"invalid JSON differing in bytes is a different call", false, []step{
			{"mcp__db__query", `{"q":`, true, 0}, {"mcp__db__query", `{"q":`, true, 0}, {"mcp__db__query", `{"q" :`, true, 0},
		}, ""},
		{"large numbers are not rounded together", false, []step{
			{"mcp__orders__get", `{"id":12345678901234567890}`, true, 0}, {"mcp__orders__get", `{"id":12345678901234567890}`, true, 0},
			{"mcp__orders__get", `{"id":12345678901234567891}`, true, 0},
		}, ""},
		{"write_todos is left to Apply while the list is enabled", false, []step{
			{ToolWrite, `{"todos":[]}`, true, 0}, {ToolWrite, `{"todos":[]}`, true, 0}, {ToolWrite, `{"todos":[]}`, true, 0},
		}, ""},
		{"disabled list: write_todos is an unknown tool, no todo_pause advised", true, []step{
			{ToolWrite, `{"todos":[]}`, true, 0}, {ToolWrite, `{"todos":[]}`, true, 0}, {ToolWrite, `{"todos":[]}`, true, 3},
		}, "stop calling tools and tell the user"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := defaults()
			s.Enabled = !tt.disabled
			st := &State{}
			var last string
			for i, c := range tt.steps {
				const content = "Refused: something is wrong."
				res := &Result{Content: content, IsError: c.err}
				if !c.err {
					res.Content = "ok"
				}
				NoteResult(st, s, c.name, json.RawMessage(c.args), res)
				stuck := strings.Contains(res.Content, "in a row")
				if want := fmt.Sprintf("%d times in a row", c.stuck); stuck != (c.stuck > 0) || (c.stuck > 0 && !strings.Contains(res.Content, want)) {
					t.Errorf("step %d: %q, want stuck count %d", i+1, res.Content, c.stuck)
				}
				if c.stuck > 0 {
					if !strings.HasPrefix(res.Content, content+" You have made this same "+c.name+" call") {
						t.Errorf("step %d: the sentence is not appended to the result: %q", i+1, res.Content)
					}
					last = res.Content
				}
			}
			if tt.advice != "" && !strings.Contains(last, tt.advice) {
				t.Errorf("advice %q missing from %q", tt.advice, last)
			}
			if tt.disabled && strings.Contains(last, "todo_pause") {
				t.Errorf("todo_pause advised with the todo list disabled: %q", last)
			}
		})
	}
}

func TestNoteResultIgnoresNil(t *testing.T) {
	st := &State{}
	NoteResult(st, defaults(), "read_file", nil, nil)
	if st.Refusals != 0 {
		t.Errorf("a nil result counted: %+v", st)
	}
}

// write_todos (counted by Apply) and the other tools (counted by NoteResult)
// share one streak: each resets the other as any different call does, but an
// accepted write_todos does not end another tool's streak.
func TestWriteTodosSharesTheStreak(t *testing.T) {
	s := defaults()
	bad := writeCall(`{"todos":[{"content":"a","status":"pending"}]}`)
	good := writeCall(`{"todos":[{"content":"a","status":"in_progress"}]}`)
	stuckCall := `{"step_id":"step_1","status":"completed","result":"unable to build"}`
	note := func(st *State) string {
		r := &Result{Content: "Refused: dishonest.", IsError: true}
		NoteResult(st, s, ToolSetStepStatus, json.RawMessage(stuckCall), r)
		return r.Content
	}

	st := &State{}
	Apply(st, []Call{bad}, s)
	Apply(st, []Call{bad}, s)
	note(st) // a different call: the write_todos count starts again
	if r := Apply(st, []Call{bad}, s)[0]; strings.Contains(r.Content, "in a row") {
		t.Errorf("write_todos count survived another refused call: %s", r.Content)
	}

	st = &State{}
	note(st)
	note(st)
	Apply(st, []Call{good}, s) // an accepted list is not a success of setStepStatus
	if got := note(st); !strings.Contains(got, "3 times in a row") {
		t.Errorf("an accepted write_todos ended a setStepStatus streak: %s", got)
	}
	// NoteResult ignores the write_todos result the workflow hands it too.
	before := *st
	NoteResult(st, s, ToolWrite, good.Args, &Result{Content: "Todo list updated."})
	NoteResult(st, s, ToolWrite, bad.Args, &Result{Content: "Refused.", IsError: true})
	if st.RefusedTool != before.RefusedTool || st.LastRefused != before.LastRefused || st.Refusals != before.Refusals {
		t.Errorf("NoteResult counted write_todos: %+v", st)
	}
}

// A state carried through continue-as-new by a version that tracked only
// write_todos (last_refused, refusals, no refused_tool) goes on counting.
func TestCarriedRefusals(t *testing.T) {
	s := defaults()
	bad := `{"todos":[{"content":"a","status":"pending"}]}`
	old, _ := json.Marshal(map[string]any{"todos": nil, "last_refused": canonical(json.RawMessage(bad)), "refusals": 2})
	var st State
	if err := json.Unmarshal(old, &st); err != nil {
		t.Fatal(err)
	}
	if r := Apply(&st, []Call{writeCall(bad)}, s)[0]; !strings.Contains(r.Content, "3 times in a row") {
		t.Errorf("old carry not continued: %s", r.Content)
	}

	// A new carry keeps the tool of the streak.
	cur := State{}
	for range 2 {
		NoteResult(&cur, s, "read_file", json.RawMessage(`{"path":"x"}`), &Result{IsError: true})
	}
	b, err := json.Marshal(cur)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"refused_tool":"read_file"`) {
		t.Errorf("carry lacks refused_tool: %s", b)
	}
	var back State
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	r := &Result{Content: "no such file", IsError: true}
	NoteResult(&back, s, "read_file", json.RawMessage(`{"path":"x"}`), r)
	if !strings.Contains(r.Content, "3 times in a row") {
		t.Errorf("carried streak lost: %s", r.Content)
	}
	// An empty state writes none of the refusal keys.
	b, _ = json.Marshal(State{})
	for _, k := range []string{"refused_tool", "last_refused", "refusals"} {
		if strings.Contains(string(b), k) {
			t.Errorf("empty state writes %s: %s", k, b)
		}
	}
}

func TestCanonical(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		same bool
	}{
		{"key order", `{"a":1,"b":[1,2]}`, `{"b":[1,2],"a":1}`, true},
		{"spacing", `{"a": {"x": "y"}}`, "\n{\"a\":{\"x\":\"y\"}}\t", true},
		{"array order matters", `{"a":[1,2]}`, `{"a":[2,1]}`, false},
		{"values differ", `{"a":"x"}`, `{"a":"y"}`, false},
		{"large numbers keep their digits", `{"n":9007199254740993}`, `{"n":9007199254740992}`, false},
		{"invalid JSON: trimmed bytes", ` {"a": `, `{"a": `, true},
		{"trailing data is not the same value", `{"a":1} x`, `{"a":1}`, false},
		{"empty and null differ", ``, `null`, false},
		{"long: the same by digest", `{"c":"` + strings.Repeat("x", 1<<20) + `","d":1}`, `{"d":1, "c":"` + strings.Repeat("x", 1<<20) + `"}`, true},
		{"long: different by digest", `{"c":"` + strings.Repeat("x", 1<<20) + `"}`, `{"c":"` + strings.Repeat("x", 1<<20-1) + `y"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := canonical(json.RawMessage(tt.a)), canonical(json.RawMessage(tt.b))
			if (a == b) != tt.same {
				t.Errorf("canonical(%.40q) = %.40q, canonical(%.40q) = %.40q, same = %v, want %v", tt.a, a, tt.b, b, a == b, tt.same)
			}
			if len(a) > maxRefusalKey || len(b) > maxRefusalKey {
				t.Errorf("a key of %d and %d bytes is kept in the state; want at most %d", len(a), len(b), maxRefusalKey)
			}
		})
	}
}

func TestAppendSentence(t *testing.T) {
	tests := []struct{ content, want string }{
		{"", "S."},
		{"Refused: x. ", "Refused: x. S."},
		{"line 1\nline 2\n", "line 1\nline 2\n\nS."},
	}
	for _, tt := range tests {
		if got := appendSentence(tt.content, "S."); got != tt.want {
			t.Errorf("appendSentence(%q) = %q, want %q", tt.content, got, tt.want)
		}
	}
}
