package mcp

import (
	"strings"
	"testing"
)

func TestToolName(t *testing.T) {
	tests := []struct {
		server, tool, want string
	}{
		{"orders", "list", "mcp__orders__list"},
		{"my.orders", "get order/v2", "mcp__my_orders__get_order_v2"},
		{"café", "naïve-tool", "mcp__caf___na_ve-tool"},
	}
	for _, tt := range tests {
		if got := toolName(prefix(tt.server), tt.tool); got != tt.want {
			t.Errorf("toolName(%q, %q) = %q, want %q", tt.server, tt.tool, got, tt.want)
		}
	}

	// Too long: cut to 64 and ended with a hash of the tool's own name, so
	// that names which differ only past the cut stay distinct.
	long := strings.Repeat("very_long_tool_name_", 5)
	a, b := toolName("mcp__orders__", long+"a"), toolName("mcp__orders__", long+"b")
	for _, got := range []string{a, b} {
		if len(got) != maxToolName || !strings.HasPrefix(got, "mcp__orders__very_long") || got[maxToolName-9] != '_' {
			t.Errorf("toolName of a long name = %q, want 64 characters ending in _<8 hex>", got)
		}
	}
	if a == b {
		t.Errorf("two long names both became %q", a)
	}
}
