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

// "destructive" leaves the decision to the tool's hints: Destructive says
// to ask the worker, Required stays false.
func TestToolApprovalDestructive(t *testing.T) {
	p := ToolApproval{"*": ApprovalDestructive, "mcp__orders__*": ApprovalAuto, "mcp__orders__refund": ApprovalRequired}
	tests := []struct {
		tool                  string
		required, destructive bool
	}{
		{"write_file", false, true},
		{"mcp__billing__void", false, true},
		{"mcp__orders__lookup", false, false},
		{"mcp__orders__refund", true, false},
	}
	for _, tt := range tests {
		if got := p.Required(tt.tool); got != tt.required {
			t.Errorf("Required(%q) = %v, want %v", tt.tool, got, tt.required)
		}
		if got := p.Destructive(tt.tool); got != tt.destructive {
			t.Errorf("Destructive(%q) = %v, want %v", tt.tool, got, tt.destructive)
		}
	}
	if (ToolApproval(nil)).Destructive("write_file") {
		t.Error("no policy holds destructive calls")
	}
}

func TestToolApprovalValidate(t *testing.T) {
	tests := []struct {
		p    ToolApproval
		want string
	}{
		{ToolApproval{"write_file": "required", "*": "auto"}, ""},
		{ToolApproval{"write_file": "yes"}, `approval "write_file" is "yes": want "required", "auto" or "destructive"`},
		{ToolApproval{"*": "destructive", "mcp__orders__refund": "required"}, ""},
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
		if got := MayAllowPrefix(tt.allow, prefix); got != tt.want {
			t.Errorf("MayAllowPrefix(%q, %q) = %v, want %v", tt.allow, prefix, got, tt.want)
		}
	}
}
