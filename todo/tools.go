package todo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Names of the todo tools the model sees (CONTRACT.md).
const (
	ToolWrite = "write_todos"
	ToolRead  = "todo_read"
	ToolPause = "todo_pause"
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

// IsTool reports whether name is one of the todo tools.
func IsTool(name string) bool {
	return name == ToolWrite || name == ToolRead || name == ToolPause
}

// Tools returns the todo tools for an agent with settings s, none when the
// todo list is disabled.
func Tools(s Settings) []ToolDef {
	if !s.Enabled {
		return nil
	}
	desc := s.ToolDescription
	if desc == "" {
		desc = writeDescription
	}
	return []ToolDef{
		{Name: ToolWrite, Description: desc, Parameters: json.RawMessage(writeSchema)},
		{Name: ToolRead, Description: readDescription, Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
		{Name: ToolPause, Description: pauseDescription, Parameters: json.RawMessage(pauseSchema)},
	}
}

const writeDescription = `Replace your whole task checklist with the list you send. ` +
	`Use it for work with three or more steps, or when the user asks for a plan; skip it for a single quick task. ` +
	`Send every item each time (items you leave out are dropped). ` +
	`Keep exactly one item in_progress while work remains: mark it before you start on it and mark it completed as soon as it is done. ` +
	`Use cancelled for items that no longer apply and blocked for items waiting on something outside your control. ` +
	`Call this tool at most once per response.`

const readDescription = `Show your current task checklist, grouped by status, with counts.`

const pauseDescription = `Stop working and hand control back to the user because something outside your control blocks you ` +
	`(a missing file, credential or decision). Give the reason in 1 to 500 characters; the user sees it and can resume you.`

const writeSchema = `{"type":"object","properties":{"todos":{"type":"array","description":"The complete checklist.","items":{"type":"object","properties":{` +
	`"id":{"type":"string","description":"Stable identifier; when left out, the item's 1-based position (or the next number no other item uses)."},` +
	`"content":{"type":"string","description":"What to do, in a short sentence."},` +
	`"status":{"type":"string","enum":["pending","in_progress","completed","cancelled","blocked"]},` +
	`"priority":{"type":"string","enum":["high","medium","low"]}},` +
	`"required":["content","status"]}}},"required":["todos"]}`

const pauseSchema = `{"type":"object","properties":{"reason":{"type":"string","minLength":1,"maxLength":500,` +
	`"description":"Why you cannot go on, for the user."}},"required":["reason"]}`

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
	writes := 0
	for _, c := range calls {
		if c.Name == ToolWrite {
			writes++
		}
	}
	for i, c := range calls {
		if !s.Enabled || !IsTool(c.Name) {
			continue
		}
		var r Result
		switch c.Name {
		case ToolWrite:
			if writes > 1 {
				r = Result{IsError: true, Content: fmt.Sprintf(
					"Refused: this response calls write_todos %d times. Each call replaces the whole list, so parallel calls are ambiguous; "+
						"none was applied and the list is unchanged. Send one write_todos call with the complete list.", writes)}
			} else {
				r = write(st, c.Args, s)
			}
		case ToolRead:
			r = Result{Content: ReadView(st.Todos)}
		case ToolPause:
			r = pause(st, c.Args)
		}
		out[i] = &r
	}
	return out
}

func write(st *State, args json.RawMessage, s Settings) Result {
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

func pause(st *State, args json.RawMessage) Result {
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
