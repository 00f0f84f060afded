// Package todo is the domain of todoflow: todo items and the list, the rules
// that keep the list honest, the decisions of the guards, and the text views a
// model or a user reads.
//
// # Pure by design
//
// Everything here is plain Go with the standard library only: no workflow
// context, no clock, no I/O, no randomness, no map iteration whose order
// matters. AgentWorkflow calls these functions from deterministic workflow code,
// so a function here returns the same output for the same input on the first
// run and on every replay. That is what lets the todo tools run inside the
// workflow instead of as activities: the model's tool call that changed the list
// is already in history, so replay rebuilds the list exactly.
//
// # The seeds
//
// The rules unify five todo systems (SEEDS.md beside the project): cubepi's
// validation order and state keys, LangChain's parallel-call rule, DeerFlow's
// context-loss reminder, Gemini CLI's statuses and LLxprt's ids, priorities,
// todo_read view, pause and continuation. Where they disagree, Config holds the
// choice, with defaults that match SEEDS.md, so each seed's behaviour can be
// reproduced by settings.
//
// # Files
//
//   - item.go: items, statuses, priorities and list queries
//   - config.go: the settings of an agent's todo behaviour and their defaults
//   - validate.go: parsing and validation of write_todos
//   - tools.go: the todo tools (names, schemas, descriptions) and applying a
//     response's todo calls, the parallel rule included
//   - view.go: todo_read's markdown view, the checklist, reminders
//   - prompt.go: the todo system prompt
//   - guard.go, window.go: the end-of-turn decisions (finalization guard,
//     continuation), the stale and context-loss reminders, the context window
//   - plan.go, plan_tools.go, plan_args.go: jaato's plans and steps, their
//     tools, approval, honest reporting and progress
//   - plan_deps.go: events, subscriptions and dependencies between agents
//   - plan_view.go: the user's plan checklist and the task_event text
package todo
