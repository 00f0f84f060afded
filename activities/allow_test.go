package activities

import (
	"strings"
	"testing"
)

func TestAllowed(t *testing.T) {
	tests := []struct {
		allow []string
		name  string
		want  bool
	}{
		{nil, "anything", true},
		{[]string{}, "read_file", false},
		{[]string{"read_file"}, "read_file", true},
		{[]string{"read_file"}, "read_files", false},
		{[]string{"*"}, "mcp__orders__list", true},
		{[]string{"mcp__orders__*"}, "mcp__orders__list", true},
		{[]string{"mcp__orders__*"}, "mcp__ordersx__list", false},
		{[]string{"mcp__orders__*"}, "read_file", false},
		{[]string{"write_file", "mcp__*__list"}, "mcp__billing__list", true},
		{[]string{"mcp__orders__get_?"}, "mcp__orders__get_x", true},
		{[]string{`read\_file`}, "read_file", true},
		{[]string{"[bad"}, "[bad", false},
	}
	for _, tt := range tests {
		if got := Allowed(tt.allow, tt.name); got != tt.want {
			t.Errorf("Allowed(%q, %q) = %v, want %v", tt.allow, tt.name, got, tt.want)
		}
	}
}

func TestCheckToolPatterns(t *testing.T) {
	tests := []struct {
		allow   []string
		wantErr string
	}{
		{nil, ""},
		{[]string{"read_file", "mcp__orders__*", "*", "x[0-9]"}, ""},
		{[]string{"ok", ""}, "tools[1] is empty"},
		{[]string{"mcp__[orders"}, `tools[0] "mcp__[orders" is not a valid pattern`},
		{[]string{`trailing\`}, "not a valid pattern"},
	}
	for _, tt := range tests {
		err := CheckToolPatterns(tt.allow)
		if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("CheckToolPatterns(%q) = %v, want an error containing %q", tt.allow, err, tt.wantErr)
		}
	}
}

func TestMayAllowPrefix(t *testing.T) {
	const prefix = "mcp__orders__"
	tests := []struct {
		allow []string
		want  bool
	}{
		{nil, true},
		{[]string{}, false},
		{[]string{"*"}, true},
		{[]string{"mcp__*"}, true},
		{[]string{"mcp__orders__*"}, true},
		{[]string{"mcp__orders__list"}, true},
		{[]string{"mcp__ord*"}, true},
		{[]string{"mcp__billing__*", "read_file"}, false},
		{[]string{"write_*"}, false},
		{[]string{"mcp__orders"}, false},
		{[]string{"?cp__orders__list"}, true},
	}
	for _, tt := range tests {
		if got := mayAllowPrefix(tt.allow, prefix); got != tt.want {
			t.Errorf("mayAllowPrefix(%q, %q) = %v, want %v", tt.allow, prefix, got, tt.want)
		}
	}
}
