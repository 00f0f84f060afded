package activities

import (
	"fmt"
	"path"
	"strings"
)

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

// mayAllowPrefix reports whether allow may allow a tool whose name starts
// with prefix. It may say yes wrongly (a pattern whose literal start fits the
// prefix but whose rest does not), never no wrongly: it only spares starting
// a tool source that a run cannot use.
func mayAllowPrefix(allow []string, prefix string) bool {
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
