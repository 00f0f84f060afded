// Package transcript carries a run's transcript forward, from AgentWorkflow
// to the activities that need it, and reads it back for them: the wire
// types (spans, call references, new messages, digests, the messages
// query's pages) and one Reader, which looks in the worker's cache, then in
// the run's history.
//
// # What a model call carries
//
// The transcript lives in the workflow. A model call's input names the
// messages the model receives (Spans) and carries the messages added since
// the previous call (NewMessages), so that a worker keeps the transcript
// without reading it back. A large content (a tool's result, a long
// message), and a tool call's arguments, are left out and stand as their
// digests: the value already entered history once, where it was made (the
// tool's result, the user's message, the model's answer, the run's input),
// and a reader finds it there, or in its cache, by the digest. A field of the workflow's own making (a guard's
// note on a tool's result, a message cut to fit, a summary) has no such
// place: the workflow records it in a marker before the call that leaves it
// out (Heard, NewMessages.Unheard). Each message so enters history at most
// twice, and its large fields once, and history grows with the
// conversation, not its square.
//
// A tool call carries its arguments up to HeldOver; larger ones are read
// by reference (CallRef), from the model's answer, checked against the
// call's digest.
//
// # Reading back
//
// The Reader takes what the worker's Cache holds, and reads the rest from
// the run's history events (history.go), which the server
// serves without a workflow worker. Nothing here queries a workflow
// (TestNothingQueries): a model call depends on the server, never on a live
// workflow worker. A message that neither tells (a call an older build
// scheduled, which left a field of the workflow's making for a query) fails
// the call with ErrTypeHole, not retried.
package transcript
