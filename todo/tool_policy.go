package todo

// The two policies of a run's input over tools, both written as tool names
// and path.Match patterns: "tools" (which of the worker's tools the run is
// offered and may call: Allowed) and "approval" (which calls wait for a
// human: ToolApproval). One file, so that a pattern means the same in both.

import (
	"fmt"
	"path"
	"strings"

	"github.com/todoflow/todoflow/internal/text"
)

// ToolApproval is the input's `approval` setting: which tool calls wait for
// a human's approve_tool before they run. Keys are tool names or patterns
// (path.Match syntax: `mcp__orders__*`, `*`), values ApprovalRequired,
// ApprovalAuto or ApprovalDestructive. The most specific key decides: a
// tool's own name before any pattern, then the longest pattern (the one
// that says the most about the name), then the first in byte order, so
// that the decision never depends on a map's order.
type ToolApproval map[string]string

// ApprovalDestructive, as a value of ToolApproval, makes the calls of the
// matching tools wait for approval when the tool may destroy or overwrite:
// its hints say so (MCP's destructiveHint, which a tool that says nothing
// of itself has, unless it is read-only). Only the worker knows a tool's
// hints, so such a call is sent to it marked, and the worker holds it
// rather than running it; the wait then comes from that recorded answer.
// `{"*": "destructive"}` asks for every such call.
const ApprovalDestructive = "destructive"

// Validate checks every key's pattern and every value, naming the first
// wrong key (in byte order, so that the message is the same every time).
func (p ToolApproval) Validate() error {
	for _, key := range text.SortedKeys(p) {
		if key == "" {
			return fmt.Errorf("approval: a tool name or pattern is empty")
		}
		if _, err := path.Match(key, ""); err != nil {
			return fmt.Errorf("approval %q: not a valid pattern (%v); write a tool name, or a pattern such as mcp__orders__* or *", key, err)
		}
		switch v := p[key]; v {
		case ApprovalRequired, ApprovalAuto, ApprovalDestructive:
		default:
			return fmt.Errorf("approval %q is %q: want %q, %q or %q", key, v, ApprovalRequired, ApprovalAuto, ApprovalDestructive)
		}
	}
	return nil
}

// Required reports whether a call of tool waits for approval.
func (p ToolApproval) Required(tool string) bool { return p.decide(tool) == ApprovalRequired }

// Destructive reports whether a call of tool waits for approval if the
// tool may destroy (ApprovalDestructive).
func (p ToolApproval) Destructive(tool string) bool { return p.decide(tool) == ApprovalDestructive }

// decide returns the value of the most specific key that matches tool; ""
// when none does.
func (p ToolApproval) decide(tool string) string {
	if v, ok := p[tool]; ok {
		return v
	}
	best := ""
	for _, key := range text.SortedKeys(p) {
		if ok, _ := path.Match(key, tool); ok && len(key) > len(best) {
			best = key
		}
	}
	if best == "" {
		return ""
	}
	return p[best]
}

// ApprovalPreview is a tool call's arguments as a human reads them in a
// wait's reason: compact, and cut at max bytes (between runes) with a
// marker, since a write_file call may carry a whole file.
func ApprovalPreview(args []byte, max int) string {
	s := strings.TrimSpace(string(args))
	if len(s) <= max {
		return s
	}
	head := text.Cut(s, max)
	return fmt.Sprintf("%s… (%d more bytes)", head, len(s)-len(head))
}

// A run's input may restrict the worker's tools it is offered and may call
// (the input's "tools"): a list of names and patterns in the syntax of
// path.Match, e.g. "read_file", "mcp__orders__*", "*". The todo, plan and
// subagent tools are the workflow's own and are never restricted.
//
// A nil list allows every tool; an empty one allows none.

// Allowed reports whether the tool called name is allowed by allow. A
// malformed pattern allows nothing (CheckToolPatterns refuses it earlier,
// where the user sees the error).
func Allowed(allow []string, name string) bool {
	if allow == nil {
		return true
	}
	for _, p := range allow {
		if ok, err := path.Match(p, name); ok && err == nil {
			return true
		}
	}
	return false
}

// CheckToolPatterns checks a list of tool names and patterns, and names the
// first bad one.
func CheckToolPatterns(allow []string) error {
	for i, p := range allow {
		if p == "" {
			return fmt.Errorf("tools[%d] is empty: want a tool name or a pattern such as mcp__orders__*", i)
		}
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("tools[%d] %q is not a valid pattern (path.Match syntax: *, ?, [a-z], \\ escapes)", i, p)
		}
	}
	return nil
}

// MayAllowPrefix reports whether allow may allow a tool whose name starts
// with prefix. It may say yes wrongly (a pattern whose literal start fits the
// prefix but whose rest does not), never no wrongly: it only spares starting
// a tool source that a run cannot use.
func MayAllowPrefix(allow []string, prefix string) bool {
	if allow == nil {
		return true
	}
	for _, p := range allow {
		lit := p
		if i := strings.IndexAny(p, `*?[\`); i >= 0 {
			lit = p[:i]
			if strings.HasPrefix(prefix, lit) {
				return true
			}
		}
		if strings.HasPrefix(lit, prefix) {
			return true
		}
	}
	return false
}
