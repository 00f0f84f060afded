// Package chat is todoflow's terminal client (`starter chat`): a chat with a
// durable agent session, with its checklist live above the prompt and its
// replies streamed as the model writes them. The session is an
// AgentWorkflow; the client only watches it and sends it messages, so
// closing or killing the terminal leaves the session where it is, and
// `starter chat --id ID` comes back to it with its transcript and checklist.
//
// # Starting a session
//
// A new session is started by the user's first message, not when the
// chat opens (chat.go, newSession): that message is the run's prompt, so
// the run's summary in the Web UI (client.Start makes it of the prompt's
// first line, shortened) tells the session from the others, and its first
// turn answers it as it would a message sent. Until then the chat shows
// its usual screen, the status line asks for the first message, and
// nothing exists on the server: leaving first leaves nothing behind.
// Lines typed while the start is under way are queued and sent after the
// first, in order, once the session exists; then its id is printed. A
// start that fails is shown, and what was typed goes back to the prompt.
// The scripted demo (Options.Prompt) starts at once, with its own first
// message; attaching to an existing session (an --id the server has)
// starts nothing.
//
// # Watching a session
//
// The client learns everything from client.Session.Watch, every
// DefaultPoll: a DescribeWorkflowExecution, which the server answers alone
// (the run's status, its history length, the running CallModel and the
// worker that serves its reply), and only when the history has grown (or the
// last query failed) the state query and the messages query from the
// first message not yet seen. The tracker (tracker.go) turns the watch's
// events into what is printed once and what changes in place.
//
// A quiet session costs one cheap RPC per look and nothing on the worker;
// a busy one adds two queries per workflow task. After continue-as-new the
// transcript is compacted, so the watch finds its place again by the last
// message it had reported.
//
// # Streaming
//
// A reply's text comes from the worker that runs the model call, which
// serves it as it is written (package internal/replystream, through
// client.Session.Watch): never through the Temporal server, so it costs no
// billable action. A client that cannot reach that worker shows the
// preview in the call's heartbeat details, every few seconds. A client
// that attaches mid-reply sees the text so far; when the call completes,
// the reply enters history once, as the assistant message, and the client
// prints that message in place of the preview. A worker that dies
// mid-stream loses only the preview: the call's next attempt streams again,
// from its own worker.
// Only the root agent's reply is streamed; a subagent's work shows as its
// events and status lines (its model calls run in its own workflow, which
// the client does not poll).
//
// # What the user sees
//
// The terminal view (tui.go, bubbletea) prints what is final above the
// program, into the terminal's scrollback: the transcript (the user's
// messages, replies, tool calls with the first line of their results),
// other agents' plan events, command output. What the loop injects to
// steer the model (the guards' reminders, the summary of older messages)
// is written for the model: it shows as a dim one-line marker, never as
// if the user had typed it.
// At the bottom, in place: the reply being written, running tools (with
// the progress a tool reports: count, total, message), what
// waits for the user (a paused agent, a plan or a tool call to approve, a
// model that is being retried), the messages sent but not yet taken (as
// queued), the whole checklist and plan when Ctrl+T has opened them, the
// progress line (the item in progress and done/total, like Gemini CLI's
// indicator, and the tokens used, priced by the user's table: cost.go) and
// the prompt. The view always fits the window, the checklist giving way
// first: a view taller than the window scrolls the terminal at each
// redraw, pushing the transcript out of the scrollback.
//
// A reply shows as markdown (markdown.go): the markup a model writes
// becomes styles, code stays as written (coloured by token when its fence
// names a language: highlight.go), tables are aligned (table.go), every
// word stays on the screen, and every line is wrapped at the view's width, so that the view
// counts its lines right, the reply being written too (its latest
// rendering is kept: the view redraws it at every key). Without colours
// there is no escape sequence at all. The line mode prints a reply as the
// model wrote it: a pipe or a log has no width to wrap at, and markdown is
// already the plain text form of what it says.
//
// Most of it is text that a model, a tool or a file wrote, so both views
// clean what they print of terminal controls (internal/termtext) before
// wrapping it in their own styles: a reply cannot set the clipboard, make a
// link or erase the lines above it.
//
// Colours follow the terminal's profile, NO_COLOR included: the program
// downsamples its view, and the view does the same to what it prints above
// (tea.Println writes it as it is).
//
// When the session makes no progress for a reason the client can name
// (client.NoWorkerError, client.ServerDownError), the progress line says
// it in place of "working"; a model call being retried says what the
// provider answers and when the next attempt is. A reply whose call
// stopped (its attempt failed, its worker is gone, the turn was stopped)
// stays on the screen, marked as cut: the user keeps what they read.
//
// A session that ends other than completed (a worker that cannot serve
// its model fails it) is told with the reason the server keeps, read once
// (ended.go), and Run returns an *EndedError: `starter chat` exits 1.
//
// When the input or output is not a terminal, the line mode (plain.go)
// prints the same transcript and notices as plain lines and reads its input
// a line at a time, each once the session has answered the previous one, so
// that `starter chat < script.txt` plays a conversation.
//
// # Keys
//
// The prompt (input.go) is a text area: Enter sends, Alt+Enter (Ctrl+J,
// or a "\" before Enter where the terminal sends no Alt+Enter) starts a
// new line, and a bracketed paste arrives whole, as one message, however
// many lines it has. Up and Down on its first and last row recall earlier
// lines (history.go): those typed here and the user's messages of the
// transcript, once each; Ctrl+R searches them (search.go). Typing "/"
// lists the commands that match above the prompt, and Tab completes them
// (menu.go). A paste longer than 10 lines shows as one marker, "[pasted
// 200 lines]", and is sent whole; Tab opens it (paste.go), and the
// transcript shows a long message by its first lines. Ctrl+C clears what
// is typed, and leaves only when
// pressed again within two seconds: a key pressed to stop something must
// not lose a half-typed message, and leaving never ends the session. Esc
// stops the running turn (the interrupt update), refusing a tool call or a
// plan that waits for approval; Ctrl+O prints the latest tool result whole,
// and the latest diff (diff.go: what a write_file call changed, shown
// collapsed under its line).
//
// # Approvals
//
// A tool call waiting for approval is shown whole before it is answered
// (approval.go): every argument, read from the transcript of the agent
// that made it (the state holds only the start of long ones), folded to
// the window with a line that says what is folded, PgDn/PgUp to scroll
// and Ctrl+O to print it whole. y approves it, a approves its tool for the
// session, n refuses it with a line of feedback, Esc refuses the wait.
// Every answer names the call shown (approve_tool's call_id), so an answer
// never reaches a call that came to wait after the user looked.
//
// # Commands
//
// A line that starts with "/" is a command for the client and never reaches
// the model (commands.go): /plan, /todos, /approve [--remember], /reject
// FEEDBACK, /resume [TEXT], /continuation on|off, /agents, /stop, /retry,
// /compact, /rewind N, /clear, /model [NAME], /end, /help, /quit (or
// /exit). /clear
// makes a new session in place, started by its first message, and watches
// it instead (the previous one goes on); /model NAME is the model of the
// sessions /clear makes (and of this one before its first message).
// Everything else is a send_message update; the client does not wait
// for its reply before taking the next line. Messages and commands go
// through the session's queue (package client), which delivers them in the
// order typed, each accepted before the next is sent: lines pasted at once
// reach the transcript in their order. A message whose turn outlasts a
// worker's restart is still answered; the client reports a message as not
// sent only when the session never took it.
package chat
