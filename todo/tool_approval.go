package todo

import (
	"fmt"
	"path"
	"strings"
)

// ToolApproval is the input's `approval` setting: which tool calls wait for
// a human's approve_tool before they run. Keys are tool names or patterns
// (path.Match syntax: `mcp__orders__*`, `*`), values ApprovalRequired or
// ApprovalAuto. The most specific key decides: a tool's own name before any
// pattern, then the longest pattern (the one that says the most about the
// name), then the first in byte order, so that the decision never depends
// on a map's order.
type ToolApproval map[string]string

// Validate checks every key's pattern and every value, naming the first
// wrong key (in byte order, so that the message is the same every time).
func (p ToolApproval) Validate() error {
	for _, key := range p.keys() {
		if key == "" {
			return fmt.Errorf("approval: a tool name or pattern is empty")
		}
		if _, err := path.Match(key, ""); err != nil {
			return fmt.Errorf("approval %q: not a valid pattern (%v); write a tool name, or a pattern such as mcp__orders__* or *", key, err)
		}
		switch v := p[key]; v {
		case ApprovalRequired, ApprovalAuto:
		default:
			return fmt.Errorf("approval %q is %q: want %q or %q", key, v, ApprovalRequired, ApprovalAuto)
		}
	}
	return nil
}

// Required reports whether a call of tool waits for approval.
func (p ToolApproval) Required(tool string) bool {
	if v, ok := p[tool]; ok {
		return v == ApprovalRequired
	}
	best := ""
	for _, key := range p.keys() {
		if ok, _ := path.Match(key, tool); ok && len(key) > len(best) {
			best = key
		}
	}
	return best != "" && p[best] == ApprovalRequired
}

func (p ToolApproval) keys() []string { return sortedKeys(p) }

// ApprovalPreview is a tool call's arguments as a human reads them in a
// wait's reason: compact, and cut at max bytes (between runes) with a
// marker, since a write_file call may carry a whole file.
func ApprovalPreview(args []byte, max int) string {
	s := strings.TrimSpace(string(args))
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d more bytes)", s[:cut], len(s)-cut)
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
