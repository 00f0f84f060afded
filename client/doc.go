// Package client is the one typed way to start, drive and watch a todoflow
// session from Go: what `starter`, `starter chat`, the scenario player and
// a program that embeds todoflow all go through. A session is an
// AgentWorkflow run (and its continuations) on a Temporal server, served by
// todoflow workers; the client holds no state of its own, so a session
// outlives every client that talks to it.
//
//	c := client.New(temporalClient, client.Options{})
//	s, err := c.Start(ctx, api.AgentInput{}, client.StartOptions{ID: "fix-auth"})
//	reply, err := s.Send(ctx, "fix the failing auth test").Reply(ctx)
//
// The caller dials Temporal (agentworker.DialWith does it as the starter
// does: environment configuration, TLS, the payload codec) and hands the
// connection over; New adds no connection of its own.
//
// # What it speaks
//
// The session's updates, signals and queries are the public contract
// (docs/protocol.md). Their argument and answer types are package api's,
// used as they are: the types the workflow decodes strictly are the
// contract, and a second name for each would be a second thing to keep in
// step. The client imports nothing else of the worker's, except what
// carries a streamed reply: the stream the worker serves
// (internal/replystream) and the heartbeat details that preview it
// (api.ReplyStream, stream.go), and a running tool's progress
// (api.ToolProgress).
//
// # In order, once
//
// What a process asks of one session goes through that session's queue
// (send.go): one sender goroutine delivers one request at a time, in the
// order they were asked, and waits until the session has taken each (an
// update accepted or refused, a signal recorded) before it sends the next.
// Four lines typed fast reach the transcript as typed, and an end_session
// asked after a message is delivered after it. Client.Session gives the
// same *Session for the same id, so one process has one queue per session.
//
// Every update carries an id, which the server runs once per run: a request
// sent again after its answer was lost is answered once, with the first
// answer, never with a second turn. SendWithID takes the id from the
// caller, for a retry across processes.
//
// # Accepted is not answered
//
// Send returns at once; Sent.Accepted waits until the session has taken
// the message, Sent.Reply until the turn it started has ended, which may
// be minutes later, after the worker that ran it restarted. An accepted
// update is durable: a wait for its answer that times out, or that a
// restart cut, is asked again under the same update id until the caller's
// context ends, and a turn handed over to a later run is followed there
// (turn_reply). Errors say which: "not sent", a *RefusedError (the
// workflow's own refusal, in its words), "accepted, not answered yet".
//
// # Answers name what was shown
//
// Approve and Reject take an Answer that names the tool call by the
// call_id the caller showed its user: if another call has taken its place
// meanwhile, the workflow refuses the answer instead of approving a call
// nobody saw (waiting.go).
//
// # Watching
//
// Watch is one stream of typed events from polling (watch.go, events.go):
// it asks the worker's queries only when the run's history has grown, and
// follows a reply being written from the worker that writes it
// (stream.go). A Problem names what is wrong when the client can see it
// (stall.go): a server that does not answer, work that no worker takes. A
// model call being retried is read from the pending activity
// (modelerror.go).
//
// # Rewinding
//
// Rewind takes a session back to before a turn with Temporal's reset
// (rewind.go).
package client
