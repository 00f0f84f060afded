package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/todoflow/todoflow/internal/text"
)

// Tool names the model sees are mcp__<server>__<tool> (docs/tools.md), made of
// what every provider accepts: 1 to 64 letters, digits, '_' and '-'. Server
// and tool names may hold anything (dots, slashes, spaces, any script), so
// each character outside that set becomes '_', and a name too long is cut
// and ends with a hash of the tool's own name, which keeps it distinct. Two
// names that still come out the same are a clash: for servers the
// configuration is refused, for tools of one server the second is left out
// with an error in the worker's log.

// maxToolName is the longest tool name providers accept.
const maxToolName = 64

// sanitize replaces each character a tool name cannot hold with '_'.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || text.IsAlnum(r) {
			return r
		}
		return '_'
	}, s)
}

// prefix starts the names of the tools of server.
func prefix(server string) string {
	return "mcp__" + sanitize(server) + "__"
}

// toolName is the name the model sees for tool of the server whose prefix
// is p.
func toolName(p, tool string) string {
	name := p + sanitize(tool)
	if len(name) <= maxToolName {
		return name
	}
	sum := sha256.Sum256([]byte(tool))
	tag := "_" + hex.EncodeToString(sum[:4])
	return name[:maxToolName-len(tag)] + tag
}
