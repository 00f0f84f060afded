// Package callview writes a tool call that waits for approval as a human
// reads it before answering: the tool, then every argument whole. A text
// of several lines (a write_file's content, a script) shows as numbered
// lines, so that a line far down counts as much as the first and the count
// says how long the text is. A call that shows the diff it would make (a
// write_file's, worked out before it runs: client.WaitingCall.Diff) has it
// between its arguments of one line and its texts: what the write would
// change comes before the whole new file. Nothing is cut here: a view
// without room for all of it (the chat's) folds it itself, and says what
// it folded.
//
// The lines are not cleaned of terminal controls: whoever prints them
// cleans them (package termtext), as everything a model wrote.
package callview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/client"
)

// NoDiff is what a write_file's content is headed with when the session
// shows no diff of it (a session an older build started): the file the
// call would write, not how it differs from the file there now, which only
// the worker on the workspace's host can read.
const NoDiff = "the new file, whole (no diff: its current text is not shown)"

// Line is a line of a call as shown: Diff marks a line of its diff's
// hunks, which a view may colour by its first character after the
// indent.
type Line struct {
	Text string
	Diff bool
}

// DiffIndent puts a diff's lines under its heading.
const DiffIndent = "    "

// Header is the call's first line: its tool, its id and its agent.
func Header(c client.WaitingCall) string {
	tool := c.Tool
	if tool == "" {
		tool = "a tool call"
	}
	return fmt.Sprintf("%s · call %s · agent %s", tool, c.CallID, c.AgentID)
}

// Lines are the call's arguments, one or more lines each, indented under
// the header: those of one line first (a path stays in sight above a long
// content), then the texts of several lines, each group in the order the
// model wrote them. For a call not read whole, what is known of it, said
// to be cut.
func Lines(c client.WaitingCall) []Line {
	if !c.Whole {
		return plain([]string{"  only the start of this call is known (the whole call could not be read): " + c.Cut})
	}
	fields, ok := objectFields(c.Arguments)
	if !ok {
		return append(diffLines(c.Diff), plain(value("arguments", c.Arguments, c.Tool, c.Diff))...)
	}
	if len(fields) == 0 {
		return append(diffLines(c.Diff), Line{Text: "  (no arguments)"})
	}
	var short, long []string
	for _, f := range fields {
		if v := value(f.name, f.raw, c.Tool, c.Diff); len(v) == 1 {
			short = append(short, v...)
		} else {
			long = append(long, v...)
		}
	}
	return slices.Concat(plain(short), diffLines(c.Diff), plain(long))
}

// Text is the call's lines as text (Lines without their kinds).
func Text(c client.WaitingCall) []string {
	var out []string
	for _, l := range Lines(c) {
		out = append(out, l.Text)
	}
	return out
}

func plain(lines []string) []Line {
	out := make([]Line, len(lines))
	for i, l := range lines {
		out[i] = Line{Text: l}
	}
	return out
}

// diffLines are a call's diff: a heading that counts the lines it adds
// and removes, then its hunks, or why there is none. A new file's hunks
// would repeat its content, which follows whole: the heading says so
// instead.
func diffLines(d *api.CallDiff) []Line {
	switch {
	case d == nil:
		return nil
	case d.Unavailable != "":
		return []Line{{Text: "  diff unavailable: " + d.Unavailable}}
	case strings.HasPrefix(d.Hunks, `\ `) && !strings.Contains(d.Hunks, "\n"):
		// Only a note: no change, or the texts were not compared.
		return []Line{{Text: "  diff: " + strings.TrimPrefix(d.Hunks, `\ `)}}
	case d.New:
		return []Line{{Text: fmt.Sprintf("  diff: a new file of %s (its content below is the whole file)", count(d.Added))}}
	}
	out := []Line{{Text: fmt.Sprintf("  diff: what the call would change, +%d −%d lines:", d.Added, d.Removed)}}
	for _, l := range strings.Split(strings.TrimRight(d.Hunks, "\n"), "\n") {
		out = append(out, Line{Text: DiffIndent + l, Diff: true})
	}
	return out
}

type field struct {
	name string
	raw  json.RawMessage
}

// objectFields are the members of a JSON object in the order written: a
// model's arguments read best as it wrote them (a path before a content).
func objectFields(raw json.RawMessage) ([]field, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var out []field
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		name, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		out = append(out, field{name, v})
	}
	return out, true
}

// value is one argument: "name: value" for a value of one line, else a
// heading and the text's lines, numbered.
func value(name string, raw json.RawMessage, tool string, diff *api.CallDiff) []string {
	var text string
	if json.Unmarshal(raw, &text) != nil {
		var b bytes.Buffer
		if json.Compact(&b, raw) != nil {
			return []string{"  " + name + ": " + string(raw)}
		}
		return []string{"  " + name + ": " + b.String()}
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if tool == "write_file" && name == "content" {
		head := NoDiff
		if diff != nil {
			head = "the new file, whole"
		}
		return append([]string{fmt.Sprintf("  %s (%s): %s:", name, count(len(lines)), head)}, numbered(lines)...)
	}
	if len(lines) == 1 {
		return []string{"  " + name + ": " + text}
	}
	return append([]string{fmt.Sprintf("  %s (%s):", name, count(len(lines)))}, numbered(lines)...)
}

func count(n int) string {
	if n == 1 {
		return "1 line"
	}
	return fmt.Sprintf("%d lines", n)
}

// numbered are lines with their numbers, aligned.
func numbered(lines []string) []string {
	w := len(fmt.Sprint(len(lines)))
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = fmt.Sprintf("    %*d │ %s", w, i+1, l)
	}
	return out
}
