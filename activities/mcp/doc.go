// Package mcp offers the tools of MCP (Model Context Protocol) servers to
// todoflow's agents, through the official Go SDK
// (github.com/modelcontextprotocol/go-sdk). What an operator writes and
// sees (the configuration file, tool names, errors, hints, progress) is in
// docs/tools.md, "Adding tools"; this says where the package keeps it.
//
// # Configuration
//
// config.go reads the file other MCP clients read (Load, Config.Validate)
// and refuses a bad one with one line naming the file and the server, so
// that the worker refuses to start rather than fail its first call.
// ${NAME} references (expand.go) are replaced only when a server starts
// (transport.go), in memory: secrets stay in the worker's environment,
// never in the file, a run's input or its history, and error texts get the
// references back in place of their values (server.hide).
//
// # Tools
//
// Each server is a tools.Source (server.go): its tools join the worker's
// tools.Registry as mcp__<server>__<tool> (names.go), so the workflow needs
// no change for them. A tool's annotations are its tools.Hints, with MCP's
// defaults where the server says nothing, which RunTool reads to decide
// whether an interrupted call may be sent again and whether a call is held
// for approval.
//
// # Life of a server
//
// Nothing starts with the worker: a server is started, and its tools
// listed, when they are first needed, and again by the next call after its
// process exited or its connection broke; the model is offered the tools
// it knows meanwhile. Servers.Close stops them with the worker. A stdio
// server gets only the few variables a program needs of the worker's
// environment (env.go).
//
// # Calls and their errors
//
// A call runs inside RunTool, which heartbeats, with the server's progress
// notifications. What the model can act on (isError, a refused call) is an
// error tool message; a server that cannot be reached is tools.Unsent, and
// RunTool's retry policy starts it again. Whether a broken call may have
// reached the server, which the SDK's errors do not say, is the wire's
// (wire.go): a call that may have arrived is sent again only if the tool is
// read-only or idempotent. Content that is not text is described in
// brackets (content.go).
package mcp
