// Package mcp offers the tools of MCP (Model Context Protocol) servers to
// todoflow's agents, through the official Go SDK
// (github.com/modelcontextprotocol/go-sdk).
//
// # Configuration
//
// The worker reads the file other MCP clients read (docs/tools.md):
//
//	{"mcpServers": {
//	  "orders":  {"command": "orders-mcp", "args": ["--db", "${ORDERS_DB}"], "env": {"LOG": "warn"}, "cwd": "/srv/orders"},
//	  "billing": {"url": "https://billing.internal/mcp", "headers": {"Authorization": "Bearer ${BILLING_TOKEN}"}}
//	}}
//
// named by TODOFLOW_MCP_CONFIG or `worker --mcp-config FILE`. A server with
// "command" is run as a child process and spoken to on its standard input
// and output (stdio); a server with "url" is a Streamable HTTP endpoint.
// ${NAME} and ${NAME:-default} refer to the worker's environment and are
// replaced when a server is started, in memory only: secrets stay in the
// worker's environment, never in the file, the workflow's input or its
// history. Load and Config.Validate refuse a bad file (unreadable, not JSON,
// a server with neither command nor url, a reference to a variable that is
// not set) with one line naming the file and the server, so that the worker
// refuses to start rather than fail its first call.
//
// # Tools
//
// Each server is a tools.Source: its tools join the worker's
// tools.Registry as mcp__<server>__<tool>, with the description and
// input schema the server gives. The workflow needs no change for them:
// CallModel offers Registry.Specs (filtered by the run's "tools" names and
// patterns) and RunTool finds a call's tool with Registry.Find. Names are
// made fit for every provider (1 to 64 of [a-zA-Z0-9_-], see names.go); two
// servers whose names would clash are refused when the configuration is
// checked, two tools of one server that would clash are logged and the
// second is left out.
//
// # Life of a server
//
// Nothing starts with the worker. A server is started (and its tools
// listed) the first time they are needed: the first model call that may
// offer them, or the first call of one of them. Its tool list is kept, and
// listed again when the server announces a change. When its process exits or
// its connection breaks, the server is started again by the next call that
// needs it; meanwhile the model is still offered the tools it knows. When the
// worker stops, Servers.Close stops every server that runs.
//
// A server's tools that must run as tasks (MCP tasks: execution.taskSupport
// "required") are not offered, since todoflow calls tools directly; one log
// line per listing names them.
//
// # Hints
//
// A tool's annotations are its tools.Hints, with MCP's defaults
// where the server says nothing (not read-only, destructive, not
// idempotent): RunTool reads them to decide whether a call that was
// interrupted may be sent again, and whether a run that asks for approval
// of destructive calls must hold it.
//
// # Calls and their errors
//
// A call runs inside the RunTool activity, which heartbeats while it waits;
// it carries a progress token, and the server's progress notifications for
// it go out with the activity's heartbeat (activities.ToolProgress), where a
// client watching the session shows them. What went wrong reaches the model
// as an error tool message and the run goes on: a result with isError (its
// text), a call the server refused (a JSON-RPC error), arguments that do not
// fit the schema. A server that cannot be reached (or that answers an HTTP
// client error, as for a session it forgot) is a passing problem: the tool
// returns a tools.Unsent error, RunTool's retry policy tries
// again (starting the server again), and after the policy's last attempt the
// workflow answers the model with the error. A server that broke off after
// the request may have reached it (wire.go tells, since the SDK's errors do
// not) may have acted: the call is sent again only if the tool says it is
// read-only or idempotent; otherwise the model reads that it may or may not
// have taken effect, and checks before it calls again. Error texts carry
// the configured references, not the values they gave, since they enter
// history.
//
// Content that is not text (images, audio, binary resources) is described in
// brackets, "[image: image/png, 12.0 KiB, not shown]", so that the model
// knows it was there; embedded text resources are given with their URI.
package mcp
