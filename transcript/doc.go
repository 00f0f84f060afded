// Package transcript carries a run's transcript forward, from AgentWorkflow
// to the activities that need it, and reads it back for them: the wire
// types (spans, call references, new messages, digests, the messages
// query's pages) and one Reader, which looks in the worker's Cache, then in
// the run's history. Why, and what it costs: docs/architecture.md
// (Performance).
//
// # What a model call carries
//
// A model call's input names the messages the model receives (Spans) and
// carries those added since the previous call (NewMessages). A large
// content, and a tool call's arguments, stand as their digests: the value
// entered history already where it was made (a tool's result, the user's
// message, the model's answer, the run's input). A field of the workflow's
// own making (a guard's note, a message cut to fit, a summary) has no such
// place: the workflow records it in a marker before the call that leaves
// it out (Heard, NewMessages.Unheard). A tool call carries its arguments up
// to HeldOver; larger ones are read by CallRef, checked against its digest.
//
// # The cache
//
// A worker's Cache holds, per run, what the workflow holds: a continued
// run's first call names the messages its input carries by digest
// (Carried), found in the run before; a turn run again that takes a message
// back counts a new epoch, which drops the copy; and the copy is cut at
// NewMessages.From before the new messages are added, so a retried call
// leaves nothing stale. A model's answer (Cache.Answer) and a tool's large
// result (Cache.Remember) wait apart for the next call, which finds them by
// digest; a tool call is read from a cached answer only when its digest
// matches, so an answer the workflow did not take is never run.
//
// # Reading back
//
// What the cache lacks is read from the run's history events (history.go),
// which the server serves without a workflow worker: nothing here queries a
// workflow (TestNothingQueries). A message that neither tells (a call an
// older build scheduled, which left a field of the workflow's making for a
// query) fails the call with ErrTypeHole, not retried.
package transcript
