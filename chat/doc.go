// Package chat is todoflow's terminal client (`starter chat`): a chat with a
// durable agent session, its checklist live above the prompt and its replies
// streamed as the model writes them. What the user types and sees (keys,
// commands, the screen, streaming) is in docs/chat.md; this package owns how
// the client gets it there.
//
// The session is an AgentWorkflow; the client only watches it and sends it
// messages, so closing or killing the terminal leaves the session where it
// is, and `starter chat --id ID` comes back to it.
//
// # Starting a session
//
// A new session is started by the user's first message, not when the chat
// opens (chat.go, newSession): that message is the run's prompt, so the
// run's summary in the Web UI (client.Start makes it of the prompt's first
// line) tells the session from the others, and a chat left before anything
// was sent leaves nothing on the server. Lines typed while the start is
// under way are sent after the first, in order, once the session exists
// (tui_session.go); a start that fails puts them back at the prompt.
//
// # Watching a session
//
// The client learns everything from client.Session.Watch, every
// DefaultPoll: a DescribeWorkflowExecution, which the server answers alone,
// and only when the history has grown (or the last query failed) the state
// and messages queries. A quiet session costs one cheap RPC per look and
// nothing on the worker. The tracker (tracker.go) turns the watch's events
// into what is printed once and what changes in place; both views use it.
//
// A reply's text comes from the worker that runs the model call (package
// internal/replystream, through the watch), never through the Temporal
// server, so streaming costs no billable action; when the call completes,
// the reply enters history once and the client prints that message in place
// of the stream. A stream that stops mid-reply stays on the screen, marked
// as cut: the user keeps what they read.
//
// # The two views
//
// The terminal view (tui.go, bubbletea) prints what is final above the
// program, into the terminal's scrollback, and keeps what changes at the
// bottom, in place. The view always fits the window: a view taller than the
// window scrolls the terminal at each redraw, pushing the transcript out of
// the scrollback. A reply shows as markdown (markdown.go) wrapped here, at
// the view's width, so that the view counts its lines right.
//
// When the input or output is not a terminal, the line mode (plain.go)
// prints the same transcript as plain lines and reads a line at a time, each
// once the session has answered the previous one, so that `starter chat <
// script.txt` plays a conversation.
//
// Most of what either view prints is text that a model, a tool or a file
// wrote, so both clean it of terminal controls (internal/termtext) before
// styling it: a reply cannot set the clipboard, make a link or erase the
// lines above it. Colours follow the terminal's profile, NO_COLOR included.
//
// # Answers and commands
//
// A tool call waiting for approval is answered only once it is shown whole
// (approval.go), and every answer names the call shown, so an answer never
// reaches a call that came to wait after the user looked. A line that
// starts with "/" is a command for the client (commands.go); everything
// else is a send_message update. Both go through the session's queue
// (package client), which delivers them in the order typed, each accepted
// before the next is sent. A session that ends other than completed is told
// with the reason the server keeps (ended.go), and Run returns an
// *EndedError.
package chat
