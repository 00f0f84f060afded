package todo

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestToolApprovalRequired(t *testing.T) {
	p := ToolApproval{
		"*":                   ApprovalRequired,
		"list_files":          ApprovalAuto,
		"mcp__orders__*":      ApprovalAuto,
		"mcp__orders__refund": ApprovalRequired,
		"read_*":              ApprovalAuto,
		"read_f*":             ApprovalRequired,
	}
	tests := []struct {
		tool string
		want bool
	}{
		{"write_file", true},          // only * matches
		{"list_files", false},         // its own name
		{"mcp__orders__list", false},  // the longer pattern before *
		{"mcp__orders__refund", true}, // its own name before the pattern
		{"read_file", true},           // read_f* is longer than read_*
		{"read_dir", false},           // only read_* and *
	}
	for _, tt := range tests {
		if got := p.Required(tt.tool); got != tt.want {
			t.Errorf("Required(%q) = %v, want %v", tt.tool, got, tt.want)
		}
	}
	if (ToolApproval(nil)).Required("write_file") {
		t.Error("no policy requires approval")
	}
	if (ToolApproval{"write_file": ApprovalRequired}).Required("read_file") {
		t.Error("a name requires approval of another tool")
	}
}

func TestToolApprovalValidate(t *testing.T) {
	tests := []struct {
		p    ToolApproval
		want string
	}{
		{ToolApproval{"write_file": "required", "*": "auto"}, ""},
		{ToolApproval{"write_file": "yes"}, `approval "write_file" is "yes": want "required" or "auto"`},
		{ToolApproval{"mcp__[x": "required"}, `approval "mcp__[x": not a valid pattern`},
		{ToolApproval{"": "required"}, "approval: a tool name or pattern is empty"},
		{ToolApproval{"b": "no", "a": "no"}, `approval "a" is "no"`},
	}
	for _, tt := range tests {
		err := tt.p.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Validate(%v) = %v", tt.p, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("Validate(%v) = %v, want %q", tt.p, err, tt.want)
		}
	}
}

func TestApprovalPreview(t *testing.T) {
	if got := ApprovalPreview([]byte(` {"path":"a"} `), 100); got != `{"path":"a"}` {
		t.Errorf("short preview = %q", got)
	}
	long := []byte(`{"content":"` + strings.Repeat("é", 300) + `"}`)
	got := ApprovalPreview(long, 101)
	if !utf8.ValidString(got) || !strings.HasSuffix(got, "more bytes)") || len(got) > 130 {
		t.Errorf("long preview = %q", got)
	}
}
