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

func TestValidateWorkspace(t *testing.T) {
	tests := []struct {
		in      AgentInput
		wantErr string // empty: valid
	}{
		{AgentInput{}, ""},
		{AgentInput{Workspace: "/mnt/team", WorkspaceShared: true, HostWaitS: 5}, ""},
		{AgentInput{WorkspaceHost: "todoflow-host-a-0123abcd"}, ""},
		{AgentInput{WorkspaceShared: true}, "workspace_shared is true but workspace is empty"},
		{AgentInput{Workspace: "/mnt/team", WorkspaceShared: true, WorkspaceHost: "h"}, `workspace_shared and workspace_host "h" exclude each other`},
		{AgentInput{WorkspaceHost: "host a"}, `workspace_host "host a": a host queue has no spaces`},
		{AgentInput{WorkspaceHost: strings.Repeat("h", 1001)}, "workspace_host is 1001 bytes long"},
		{AgentInput{HostWaitS: -1}, "host_wait_s is -1: want a positive number of seconds"},
		{AgentInput{HostWaitS: maxSeconds + 1}, "host_wait_s is 315360001: want at most"},
	}
	for _, tt := range tests {
		tt.in.Prompt = "hi"
		err := tt.in.Validate()
		if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("Validate(%+v) = %v, want an error containing %q", tt.in, err, tt.wantErr)
		}
	}
}
