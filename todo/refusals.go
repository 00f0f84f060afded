package todo

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// repeatLimit is how many refusals in a row of the same call (tool name and
// arguments) make its error say that the model is stuck and how to get out.
const repeatLimit = 3

// NoteResult records the final result of one tool call of a model response,
// so that a call the model keeps repeating against the same refusal ends
// with advice instead of looping until max_turns (one failing validation,
// repeated, is the seeds' users' first complaint). When the same call has
// now been refused repeatLimit times in a row, or more, it appends a sentence
// to res.Content that says so and what to do instead.
//
// The workflow calls it for every tool result of a response, in call order,
// once the result is final (a rejected approval, an activity failure, an
// unknown tool included) and before the result goes into the transcript.
//
// A call is its tool name plus its arguments in canonical JSON (key order and
// spacing do not matter; arguments that are not valid JSON compare as their
// trimmed bytes). A result with IsError counts as a refusal of that call; a
// success of the same call, or a refusal of a different call, starts the
// count again; a success of a different call changes nothing (a model that
// reads a file between two identical refused calls is still stuck). Calls of
// one response count one by one in call order, so the same refused call twice
// in one response counts two.
//
// write_todos is counted by Apply when it runs (its refusal carries the
// sentence of its own), so NoteResult ignores it while the todo list is
// enabled; with the list disabled write_todos is an unknown tool like any
// other and is counted here.
func NoteResult(st *State, s Settings, name string, args json.RawMessage, res *Result) {
	if res == nil || (name == ToolWrite && s.Enabled) {
		return
	}
	if !res.IsError {
		if st.streakTool() == name && st.LastRefused == canonical(args) {
			st.clearRefusals()
		}
		return
	}
	if n := noteRefusal(st, name, args); n >= repeatLimit {
		res.Content = appendSentence(res.Content, repeatAdvice(name, n, s.Enabled))
	}
}

// noteRefusal counts a refusal of the call (tool, args) and returns how many
// times in a row it has been refused.
func noteRefusal(st *State, tool string, args json.RawMessage) int {
	key := canonical(args)
	if st.streakTool() == tool && st.LastRefused == key {
		st.Refusals++
	} else {
		st.RefusedTool, st.LastRefused, st.Refusals = tool, key, 1
	}
	return st.Refusals
}

// refusedTool is the tool of the current streak of refusals, "" when there is
// none. A state carried from before refused_tool existed tracked write_todos
// only, so a streak without a tool is write_todos'.
func (st *State) streakTool() string {
	if st.Refusals == 0 {
		return ""
	}
	if st.RefusedTool == "" {
		return ToolWrite
	}
	return st.RefusedTool
}

func (st *State) clearRefusals() {
	st.RefusedTool, st.LastRefused, st.Refusals = "", "", 0
}

// repeatAdvice is the sentence added to the n-th refusal in a row of the
// same call of tool: what to do instead, worded for the tool. todo names
// whether the todo tools (todo_pause, the plan tools) are offered.
func repeatAdvice(tool string, n int, todo bool) string {
	head := fmt.Sprintf("You have made this same %s call %d times in a row and it failed each time; making it again will not work. ", tool, n)
	switch {
	case !todo:
		return head + "Change the arguments, do something else, or stop calling tools and tell the user what stops you."
	case tool == ToolSetStepStatus || tool == ToolCompleteStepWithOutput:
		return head + "If the step did not fully succeed, report it with setStepStatus, status failed and the reason as error; " +
			"if the arguments are wrong, correct them; if something outside your control stops you, call todo_pause with the reason."
	case tool == ToolPause:
		return head + "Give a reason of 1 to 500 characters, or stop calling tools and explain to the user in plain words why you cannot go on."
	default:
		return head + "Change the arguments, do something else, or call todo_pause with the reason if something outside your control stops you."
	}
}

// appendSentence adds s to a tool result: after a space on a one-line
// result, after a blank line on a longer one.
func appendSentence(content, s string) string {
	switch t := strings.TrimRight(content, " \t\r\n"); {
	case t == "":
		return s
	case strings.Contains(t, "\n"):
		return t + "\n\n" + s
	default:
		return t + " " + s
	}
}

// canonical returns a comparable form of a call's JSON arguments, so that the
// same arguments sent with different spacing or key order count as the same
// call. Numbers keep their digits (no float64 rounding that would make two
// different large ids equal). Arguments that are not one valid JSON value
// compare as their trimmed bytes.
func canonical(args json.RawMessage) string {
	t := bytes.TrimSpace(args)
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) == nil {
		if _, err := dec.Token(); err == io.EOF { // no trailing data after the value
			if b, err := json.Marshal(v); err == nil { // maps marshal with sorted keys
				t = b
			}
		}
	}
	return digestLong(string(t))
}

// digestLong keeps a long key as its digest: the key is in the state, so in
// every carry and state query, and a refused call may be as long as a
// model's answer.
func digestLong(key string) string {
	if len(key) <= maxRefusalKey {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// maxRefusalKey is the longest key kept as it is.
const maxRefusalKey = 256
