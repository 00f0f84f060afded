package todo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxPauseReason is the longest todo_pause reason accepted, in characters.
const MaxPauseReason = 500

// ToolDef describes a tool in provider-neutral terms; the workflow turns it
// into a model.ToolSpec (this package imports no model package: see the package doc).
type ToolDef struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// Call is a model's tool call as this package sees it.
type Call struct {
	ID   string
	Name string
	Args json.RawMessage
}

// Result answers one tool call.
type Result struct {
	Content string
	IsError bool
}

// Apply runs the todo tool calls of one model response against st, in order,
// and returns a result for each call whose name is a todo tool (others are
// left to the caller: their entries are nil).
//
// The parallel rule (LangChain, cubepi): write_todos replaces the whole list,
// so two of them in one response are ambiguous. Every write_todos of such a
// response is refused and the list stays as it was before the response; the
// other tools still run.
func Apply(st *State, calls []Call, s Settings) []*Result {
	out := make([]*Result, len(calls))
	if !s.Enabled {
		return out
	}
	same := make(map[string]int) // lookups only: order never matters
	for _, c := range calls {
		same[c.Name]++
	}
	for i, c := range calls {
		if t, _ := lookup(c.Name); t.Kind == KindList {
			r := t.list(st, c.Args, s, same[c.Name])
			out[i] = &r
		}
	}
	return out
}

// writeTool is write_todos; same counts the write_todos of the response.
func writeTool(st *State, args json.RawMessage, s Settings, same int) Result {
	if same > 1 {
		return Result{IsError: true, Content: fmt.Sprintf(
			"Refused: this response calls write_todos %d times. Each call replaces the whole list, so parallel calls are ambiguous; "+
				"none was applied and the list is unchanged. Send one write_todos call with the complete list.", same)}
	}
	items, err := ParseWrite(args)
	if err == nil {
		items, err = Validate(st.Todos, items, s)
	}
	if err != nil {
		return refuse(st, args, err)
	}
	if st.streakTool() == ToolWrite {
		st.clearRefusals() // any accepted list ends a write_todos streak
	}
	st.Todos = items
	msg := "Todo list updated: " + Summary(items) + "."
	if len(items) >= 3 && CountStatus(items, Completed) == len(items) {
		msg += " Every item is completed: do a quick final check that the work really is done before you answer."
	}
	return Result{Content: msg}
}

// refuse builds the error for a refused write_todos and notices when the same
// payload keeps coming back, which would otherwise loop until max_turns. It
// shares the streak of NoteResult (refusals.go): a refusal of another call in
// between starts the count again.
func refuse(st *State, args json.RawMessage, err error) Result {
	n := noteRefusal(st, ToolWrite, args)
	msg := "Refused: " + err.Error() + ". The list is unchanged."
	if n >= repeatLimit {
		msg += fmt.Sprintf(" You have sent this same list %d times in a row and it was refused each time; sending it again will not work. "+
			"Change the list so that it passes the rule above, or stop calling write_todos and answer the user, "+
			"or call todo_pause if something outside your control stops you.", n)
	}
	return Result{Content: msg, IsError: true}
}

func pauseTool(st *State, args json.RawMessage, _ Settings, _ int) Result {
	var p struct {
		Reason *string `json:"reason"`
	}
	if t := bytes.TrimSpace(args); len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &p) != nil {
		return Result{IsError: true, Content: `Refused: todo_pause takes {"reason": "..."}.`}
	}
	if p.Reason == nil || strings.TrimSpace(*p.Reason) == "" {
		return Result{IsError: true, Content: "Refused: todo_pause needs a reason of 1 to 500 characters."}
	}
	if n := utf8.RuneCountInString(*p.Reason); n > MaxPauseReason {
		return Result{IsError: true, Content: fmt.Sprintf("Refused: the reason is %d characters long; keep it to %d.", n, MaxPauseReason)}
	}
	st.Paused, st.PauseReason = true, *p.Reason
	TurnEnded(st) // a successful pause ends the turn at once
	return Result{Content: "Paused. The user sees your reason and will resume you when the blocker is gone."}
}
