// Package tools holds what a model may call on a worker: the Tool, the
// Registry that offers a worker's tools, the built-in tools (list_files,
// read_file, write_file, bounded by Env.OutputMax) and the Workspace they
// are confined to. The RunTool activity of package activities runs a call's
// tool; the MCP servers' tools of package activities/mcp are a Source of the
// registry.
//
// # The registry and what a tool says of itself
//
// A Registry holds Go tools registered by name (the built-ins, a user's own
// with New) and Sources of tools found at run time, each owning the names
// that start with its prefix (the MCP servers, as mcp__<server>__<tool>). A
// tool may declare Hints and mark its errors Retryable or Unsent: RunTool
// decides from them whether a call is sent again or held for approval.
//
// # Decided on the resolved file
//
// A path's text says little: a checkout may carry a link notes -> .git,
// and a folder may be swapped for a link while a call runs. RunTool
// therefore opens the workspace once per call, as an os.Root reached from
// its root's own handle (Roots.Open, workspace.go), and every tool of the
// call goes through that handle, never the folder's path again.
// write_file follows a path one element at a time through it, links
// included (resolve.go), and refuses version control metadata by where the
// path leads, then checks once the file is open that it is the file the
// path leads to. Roots themselves must be the worker's own and apart from
// its state folder (roots.go, rootperm_unix.go).
package tools
