// Package todo is the domain of todoflow: todo items and the list, the rules
// that keep the list honest, the decisions of the guards, and the text views a
// model or a user reads.
//
// # Pure by design
//
// Everything here is plain Go with the standard library only, and
// internal/text: the project's string helpers (cuts between runes, one-line
// forms, sorted keys), written once, are themselves the standard library only
// and pure, so importing them keeps this package free of dependencies. No
// workflow context, no clock, no I/O, no randomness, no map iteration whose
// order matters. AgentWorkflow calls these functions from deterministic workflow code,
// so a function here returns the same output for the same input on the first
// run and on every replay. That is what lets the todo tools run inside the
// workflow instead of as activities: the model's tool call that changed the list
// is already in history, so replay rebuilds the list exactly.
//
// # The seeds
//
// The rules unify five todo systems: cubepi's validation order and state keys,
// LangChain's parallel-call rule, DeerFlow's context-loss reminder, Gemini
// CLI's statuses and LLxprt's ids, priorities, todo_read view, pause and
// continuation. Where they disagree, Config holds the choice, with the defaults
// told in docs/operations.md (Settings), so each seed's behaviour can be
// reproduced by settings.
//
// # The list's rules
//
// Under the default in-progress policy, exactly_one, exactly one item is
// in_progress while an item can be worked on, that is while any item is
// pending or in_progress. Blocked items wait on something outside the
// agent's control and cannot be worked on, so a list whose unfinished items
// are all blocked may have none in progress; a single pending item makes the
// rule apply again, and two in_progress items are refused whatever else the
// list holds. An item written without an id gets its 1-based position, or
// the next number no item of the same list uses, so a filled-in id never
// collides with an explicit one.
//
// # Repeated refusals
//
// A model can retry the same refused call forever (strict validation is the
// seeds' users' first complaint). The workflow hands every tool result of a
// response, in call order, to NoteResult; write_todos is counted by Apply.
// A call is its tool name and the canonical JSON of its arguments; after
// three refusals in a row of the same call, and on every further one, the
// error says so and what to do instead. A success of that call, or a refusal
// of another call, starts the count again. The streak is part of State, so
// it survives continue-as-new.
//
// # Turns
//
// A turn runs from a user message (NewUserMessage) until the model answers
// and EndOfTurn lets it end, a todo_pause succeeds, or the workflow ends it
// otherwise (TurnEnded). The guards' caps count per user message;
// todo_finalization_correction is true only from a completion reminder to
// the end of its turn, and null otherwise.
//
// # Files
//
//   - item.go: items, statuses, priorities and list queries
//   - config.go: the settings of an agent's todo behaviour and their defaults
//   - validate.go: parsing and validation of write_todos, ids filled in
//   - table.go: the table of the workflow's own tools (todo, plan, agent):
//     names, kinds, argument structs, examples and what runs each; their
//     descriptions are tools/<name>.txt, their schemas tools/schemas.json,
//     generated from the argument structs by `go generate ./todo`
//   - tools.go: applying a response's todo calls, the parallel rule included
//   - refusals.go: the same call refused again and again, for every tool
//   - view.go: todo_read's markdown view, the checklist, reminders
//   - prompt.go: the todo system prompt
//   - guard.go, window.go: the end-of-turn decisions (finalization guard,
//     continuation), the stale and context-loss reminders, the context window
//   - plan.go, plan_tools.go, plan_args.go: jaato's plans and steps, their
//     tools, approval, honest reporting and progress
//   - plan_deps.go: events and dependencies between agents
//   - plan_subscriptions.go: subscriptions, the model's notifications and
//     getTaskEvents
//   - plan_bind.go: a dependency bound to its producer's plan
//   - broker.go: the run tree's routing table, held by its root (who is
//     in the tree, who wants whose events, who is told of an end)
//   - plan_prune.go: the events a continuation keeps, and their data thinned
//     when they pass a budget
//   - plan_budget.go: caps on what a model writes into a plan (steps, texts,
//     outputs, dependencies, subscriptions, the plan's bytes)
//   - batches.go: events split or cut to a budget of bytes
//   - plan_view.go: the user's plan checklist and the task_event text
//   - state.go: an agent's todo state and the state keys it shows
//   - tool_policy.go: the input's "tools" and "approval", both patterns
//     over tool names
//   - limits.go: caps on what one agent's model may ask for (tool calls per
//     response, running subagents, tree depth, list length), and on what
//     whoever starts or talks to a run hands it (messages, the queue)
//   - context_limit.go: the context budget a provider's overflow teaches
package todo
