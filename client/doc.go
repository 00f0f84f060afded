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
// The session's messages are the public contract (package api,
// docs/protocol.md): the updates send_message, approve_plan, approve_tool,
// set_continuation, retry_turn, compact_context and turn_reply (which
// Sent.Result sends by itself to follow a turn handed over to a later
// run), the signals resume and
// end_session, the queries state, plan and messages. Their argument and
// answer types are those of package api (api.State,
// api.AgentInput, api.CompactResult, …), used as they are: the
// types the workflow decodes strictly are the contract, and a second name
// for each would be a second thing to keep in step. The client imports
// nothing else of the worker's, except what carries a streamed reply: the
// stream the worker serves (internal/replystream) and the heartbeat
// details that preview it (api.ReplyStream), which Watch turns into
// StreamChanged (stream.go), and a running tool's progress
// (api.ToolProgress), which it turns into ToolsChanged.
//
// # In order, once
//
// What a process asks of one session (Send, Approve, Reject, Resume,
// Retry, Compact, SetContinuation, End) goes through that session's queue:
// one sender goroutine delivers one request at a time, in the order they
// were asked, and waits until the session has taken each (an update
// accepted or refused, a signal recorded) before it sends the next. Four
// lines typed fast reach the transcript as typed, and an end_session
// asked after a message is delivered after it. Client.Session gives the
// same *Session for the same id, so one process has one queue per session.
//
// Every update carries an id. The server runs an update id once per run:
// a request sent again after its answer was lost (the server restarted, a
// connection dropped) is answered once, with the first answer, never with
// a second turn. SendWithID takes the id from the caller, for a retry
// across processes.
//
// # Accepted is not answered
//
// Send returns at once; sent.Accepted waits until the session has taken
// the message, sent.Reply until the turn it started has ended, which may
// be minutes later, after the worker that ran it restarted. An accepted
// update is durable: a wait for its answer that times out, or that a
// restart cut, is asked again under the same update id until the caller's
// context ends, and is never reported as a message that was not sent.
// Errors say which: "not sent" (never delivered), a *RefusedError (the
// workflow's own refusal, in its words), "accepted, not answered yet".
//
// # Answers name what was shown
//
// Approve and Reject take an Answer that names the tool call by the
// call_id the caller showed its user, or no call for a plan: if another
// call has taken the first one's place meanwhile, the workflow refuses the
// answer instead of approving a call nobody saw. WaitingCalls lists the
// calls waiting in a state, ReadWhole reads their arguments whole from
// their agents' transcripts (the state keeps only the first 2 KiB), and
// WaitingCall.Answer answers the one shown (waiting.go).
//
// # Watching
//
// Watch is one stream of typed events from polling: the state (status,
// list, plan, waits, model errors, other agents' plan events), the
// transcript's new messages (tool calls and results among them, a result
// with the diff its call showed the user: diffs.go), the reply
// being written and the tools running with their progress (heartbeat
// details, never history),
// the end of the session, and a Problem when a look fails, with its cause;
// Looked closes the events of one look. It asks the worker's queries only
// when the run's history has grown. See Session.Watch.
//
// A Problem names what is wrong when the client can see it (stall.go): a
// *ServerDownError when the server does not answer, a *NoWorkerError when
// the session's work (a workflow task, an activity due) waits longer than
// a few seconds for a worker, or a query times out, with the last poll the
// task queue's pollers show (DescribeTaskQueue, asked only then). A model
// call being retried comes with the provider's HTTP status and the next
// attempt's time (ModelErrorChanged.Retry), read from the pending
// activity's last failure, whose details CallModel writes as (attempt,
// status).
//
// # Not here yet
//
// Rewinding a session to an earlier turn (`starter rewind`) is a later part
// of this package. The bench (testsuite/bench) drives the sessions of its
// cluster phase through this package, those of its other phases still
// through the SDK.
package client
