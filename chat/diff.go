package chat

import (
	"cmp"
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/todoflow/todoflow/internal/callview"
)

// What a tool call changed: the diff a write_file call shows the user
// (client.NewMessage.Diff), under the call's result line, collapsed; Ctrl+O
// prints the latest whole. Its colours are the only mark a view's profile
// may drop: the lines still read as "+"/"-" text.

// diffCollapsed is how many lines of a diff show under its result.
const diffCollapsed = 8

var (
	styleDiffAdd  = lipgloss.NewStyle().Foreground(lipgloss.Green)
	styleDiffDel  = lipgloss.NewStyle().Foreground(lipgloss.Red)
	styleDiffMeta = lipgloss.NewStyle().Faint(true)
)

// diffEntries are the lines of diff, at most limit of them (0: all), the
// last then saying how many more Ctrl+O shows.
func diffEntries(diff string, limit int) []entry {
	if diff == "" {
		return nil
	}
	lines := strings.Split(strings.TrimRight(diff, "\n"), "\n")
	more := 0
	if limit > 0 && len(lines) > limit {
		more = len(lines) - (limit - 1)
		lines = lines[:limit-1]
	}
	out := make([]entry, 0, len(lines)+1)
	for _, l := range lines {
		out = append(out, entry{kindDiff, callview.DiffIndent + l})
	}
	if more > 0 {
		out = append(out, entry{kindDiff, callview.DiffIndent + fmt.Sprintf("… %d more lines of the diff (Ctrl+O shows it whole)", more)})
	}
	return out
}

// latestDiffEntries are Ctrl+O's diff: the latest one whole, named by its
// call when that is not the latest result's (printed just above it).
func latestDiffEntries(t *tracker) []entry {
	if t.diff == "" {
		return nil
	}
	var out []entry
	if t.result == nil || t.result.ToolCallID != t.diffCall {
		out = append(out, entry{kindNote, "the latest diff (" + cmp.Or(t.diffOf, t.diffCall) + "), whole:"})
	}
	return append(out, diffEntries(t.diff, 0)...)
}

// diffStyle is the colour of a diff's line: by the character after the
// indent.
func diffStyle(line string) lipgloss.Style {
	body := strings.TrimPrefix(line, callview.DiffIndent)
	switch {
	case strings.HasPrefix(body, "+"):
		return styleDiffAdd
	case strings.HasPrefix(body, "-"):
		return styleDiffDel
	case strings.HasPrefix(body, "@"), strings.HasPrefix(body, "\\"), strings.HasPrefix(body, "…"):
		return styleDiffMeta
	}
	return styleResult
}
