// Package script implements model.Client with answers read from a scenario
// file, so that runs, tests and demos reproduce every behaviour of the agent
// loop without a language model or a network.
//
// # References
//
// A request's Model is a reference of the form
//
//	<path to scenario file>[#<agent_id>]
//
// Without an agent id the answers are the scenario's top-level "model" list
// (the root agent); with one they are "agents"[agent_id] (a subagent). The
// last '#' separates the agent id. The top-level "summary" (see Summaries)
// serves both. Everything else in the file (name, input, user, ...)
// belongs to the scenario runner and is ignored here.
//
// # One folder
//
// A Client reads only inside the folder it was made with (New): a
// reference's path is relative to it, or absolute inside it, and must be a
// regular file of at most MaxFileBytes. The reference comes from whoever
// started the run, or from the model (a subagent's model), so it must not
// make the worker read /dev/zero, a named pipe or another user's files.
// Workers serve script: models only when their operator names that folder
// (worker --script-dir); tests, the demo and `starter run --scenario` do.
//
// # Determinism
//
// Call N (model.Request.Call, 1-based) is answered with response N of the
// list, and once the list has run out with the scenario's optional "then"
// response (the root agent's only: a chat that goes on after its script, as
// the chat demo does, answers every later message), else with an empty
// final text. The answer depends on nothing but the file and the call
// number (for a summary, on the file alone): a call that Temporal retries, or that a workflow replays
// after a crash or continue-as-new, gets exactly the same answer. For the
// same reason a tool call without an "id" in the file gets a derived one,
// call_<N>_<i> (i its index in the response), never a random one.
//
// A response's delay_ms makes the call take that long, for crash and load
// tests (at most MaxDelay, 10 minutes: a model call's attempt is cut after
// that); the wait ends early when the context is cancelled. Heartbeating is
// the activity's business, not this package's.
//
// # Summaries
//
// A summarising call (model.Request.Summarize: the agent compacts its
// context) is not one of the agent's turns, so it takes no numbered
// response: it is answered with the file's top-level "summary" string, or
// DefaultSummary when there is none, as a final text without tool calls,
// delay or streaming, whatever its Call. When compaction happens depends on
// the transcript's estimated size, not on the scenario, and a summary that
// used up a response would shift every step after it; this way a scenario
// plays the same whether its run compacts never, once or ten times. An
// empty "summary" is used as it is: the agent then drops its older messages
// without a summary.
//
// There is one summary per file, shared by the root agent and every
// subagent: a summary's text only has to stand in for the conversation, and
// a per-agent one would be one more place to look for what a scenario says.
//
// # Streaming
//
// A request with a Stream callback gets the response's text in pieces
// (Chunks: up to StreamChunks, cut after spaces) spread evenly over delay_ms,
// the last one at its end, as a model writes its reply; without a delay they
// come at once. The Response is the same either way, so a run answers alike
// whether or not anyone watches it stream.
//
// # Errors
//
// A scenario that cannot be read or makes no sense (missing file, broken
// JSON, unknown agent id, a tool call without a name, arguments that are not
// an object, ...) is a mistake no retry can fix, so it comes back as a
// non-retryable *model.Error naming the file and the position, such as
//
//	script: scenario file demo.json: model[3].tool_calls[0]: name is missing
//
// # Caching
//
// A long scenario is parsed once, not on every model call: files are cached
// by path and reloaded when their modification time or size changes, so that
// editing a scenario between runs takes effect without restarting the worker.
package script
