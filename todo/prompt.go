package todo

import "strings"

// systemPrompt is appended to the agent's system prompt on every model call
// (a dropped todo prompt is a known regression of one seed; tests pin it).
const systemPrompt = `## Keeping a checklist

You have a checklist tool, write_todos. Use it whenever a task takes three or more steps, when the user gives you several things to do, or when they ask for a plan. Skip it for a single quick task or a plain question.

How to keep it honest:
- Write the list before you start. Send the complete list on every call; it replaces the old one.
- Keep exactly one item in_progress while work remains. Mark an item in_progress before you work on it and completed as soon as it is done, not in a batch at the end.
- Use cancelled for items that no longer apply and blocked for items that wait on something outside your control.
- Call write_todos at most once per response.
- Before your final answer, make sure the list reflects reality: nothing left in_progress or pending that you have finished.
- todo_read shows the list. If something outside your control stops you, call todo_pause with the reason instead of guessing.`

// SystemPrompt returns the agent's system prompt: base with the todo prompt
// appended (or the user's replacement of it) when the todo list is enabled.
func SystemPrompt(base string, s Settings) string {
	if !s.Enabled {
		return base
	}
	add := systemPrompt
	if s.SystemPrompt != "" {
		add = s.SystemPrompt
	}
	if strings.TrimSpace(base) == "" {
		return add
	}
	return strings.TrimRight(base, "\n") + "\n\n" + add
}

// DefaultSystemPrompt is the base prompt of an agent whose input names none.
const DefaultSystemPrompt = "You are a careful assistant that works through tasks step by step with the tools you have, and reports plainly what you did."
