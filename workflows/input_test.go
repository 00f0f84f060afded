package workflows

import (
	"strings"
	"testing"
)

func TestValidateTools(t *testing.T) {
	tests := []struct {
		tools   []string
		wantErr string // empty: valid
	}{
		{nil, ""},
		{[]string{"read_file", "mcp__orders__*", "*"}, ""},
		{[]string{"mcp__[orders"}, `tools[0] "mcp__[orders" is not a valid pattern`},
		{[]string{"read_file", ""}, "tools[1] is empty"},
	}
	for _, tt := range tests {
		err := AgentInput{Prompt: "hi", Tools: tt.tools}.Validate()
		if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("Validate(tools %q) = %v, want an error containing %q", tt.tools, err, tt.wantErr)
		}
	}
}
