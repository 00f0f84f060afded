package todo

import (
	"fmt"
	"strings"

	"github.com/todoflow/todoflow/internal/text"
)

// groups is the order of todo_read's sections: what is being done first, then
// what is left, then what is over (LLxprt's order, with todoflow's two extra
// statuses placed where a reader looks for them).
var groups = []struct {
	status Status
	title  string
}{
	{InProgress, "In progress"},
	{Pending, "Pending"},
	{Blocked, "Blocked"},
	{Completed, "Completed"},
	{Cancelled, "Cancelled"},
}

// ReadView is todo_read's answer: the list grouped by status, with counts.
func ReadView(items []Item) string {
	if len(items) == 0 {
		return "The todo list is empty."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Todo list (%s)\n", Summary(items))
	for _, g := range groups {
		n := CountStatus(items, g.status)
		if n == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n## %s (%d)\n", g.title, n)
		for _, it := range items {
			if it.Status != g.status {
				continue
			}
			fmt.Fprintf(&b, "- %s. %s", it.ID, text.OneLine(it.Content))
			if it.Priority != "" {
				fmt.Fprintf(&b, " [%s]", it.Priority)
			}
			b.WriteByte('\n')
		}
	}
	if p := prioritySummary(items); p != "" {
		fmt.Fprintf(&b, "\nBy priority: %s\n", p)
	}
	return strings.TrimRight(b.String(), "\n")
}

// Summary counts a list in one phrase: "3 items: 1 in progress, 2 pending".
func Summary(items []Item) string {
	if len(items) == 0 {
		return "no items"
	}
	parts := make([]string, 0, len(groups))
	for _, g := range groups {
		if n := CountStatus(items, g.status); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, strings.ToLower(g.title)))
		}
	}
	noun := "items"
	if len(items) == 1 {
		noun = "item"
	}
	return fmt.Sprintf("%d %s: %s", len(items), noun, strings.Join(parts, ", "))
}

func prioritySummary(items []Item) string {
	var parts []string
	for _, p := range []Priority{High, Medium, Low} {
		n := 0
		for _, it := range items {
			if it.Priority == p {
				n++
			}
		}
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, p))
		}
	}
	return strings.Join(parts, ", ")
}

// marks are the checklist's status markers, the same family as the plan
// checklist's (stepMarks).
var marks = map[Status]string{
	Completed:  "[x]",
	InProgress: "[>]",
	Pending:    "[ ]",
	Cancelled:  "[-]",
	Blocked:    "[~]",
}

// Checklist renders the list as markdown lines for people: the Web UI's
// current details and the starter's live progress.
func Checklist(items []Item) string {
	if len(items) == 0 {
		return "(no todo items)"
	}
	return ChecklistItems(items) + fmt.Sprintf("\nDone: %d/%d", CountStatus(items, Completed), len(items))
}

// ChecklistItems is the checklist without its count: one markdown line per
// item, each ending in a newline.
func ChecklistItems(items []Item) string {
	var b strings.Builder
	for _, it := range items {
		fmt.Fprintf(&b, "- %s %s\n", marks[it.Status], text.OneLine(it.Content))
	}
	return b.String()
}

// statusLines renders items as "- [status] content" lines, DeerFlow's format
// for the reminders the model reads.
func statusLines(items []Item) string {
	var b strings.Builder
	for _, it := range items {
		fmt.Fprintf(&b, "- [%s] %s\n", it.Status, text.OneLine(it.Content))
	}
	return strings.TrimRight(b.String(), "\n")
}
