package api

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
		if !matches(err, tt.wantErr) {
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
		if !matches(err, tt.wantErr) {
			t.Errorf("Validate(%+v) = %v, want an error containing %q", tt.in, err, tt.wantErr)
		}
	}
}

// An agent id is a short name, as spawn_subagent asks of a model: whoever
// starts a run cannot name its agent "../../etc" (issue 36), which custom
// tools, logs and terminals would take as a name.
func TestValidateAgentID(t *testing.T) {
	tests := []struct {
		id      string
		wantErr string // empty: valid
	}{
		{"", ""}, // the root's default, "main"
		{"main", ""},
		{"researcher_2-b", ""},
		{strings.Repeat("a", 64), ""},
		{"../../etc", `agent_id "../../etc": use 1 to 64 letters, digits`},
		{"a/b", `agent_id "a/b"`},
		{"with space", `agent_id "with space"`},
		{"tab\there", `agent_id "tab\there"`},
		{"ünïcode", `agent_id "ünïcode"`},
		{strings.Repeat("a", 65), "use 1 to 64"},
	}
	for _, tt := range tests {
		err := AgentInput{Prompt: "hi", AgentID: tt.id}.Validate()
		if !matches(err, tt.wantErr) {
			t.Errorf("Validate(agent_id %q) = %v, want an error containing %q", tt.id, err, tt.wantErr)
		}
	}
}

// matches reports whether err is what a table's wantErr asks: nil for "",
// else an error containing it.
func matches(err error, wantErr string) bool {
	if err == nil || wantErr == "" {
		return (err == nil) == (wantErr == "")
	}
	return strings.Contains(err.Error(), wantErr)
}

// A session key names folders, so whoever starts a session cannot set one:
// only a parent gives its own to its subagent.
func TestValidateSession(t *testing.T) {
	key := strings.Repeat("5e", 32) // a session key's form
	tests := []struct {
		in      AgentInput
		wantErr string // empty: valid
	}{
		{AgentInput{}, ""},
		{AgentInput{Session: key}, "session: set only by a parent for its subagent"},
		{AgentInput{Session: "../sessions/other"}, "session: set only by a parent"},
	}
	for _, tt := range tests {
		tt.in.Prompt = "hi"
		if err := tt.in.Validate(); !matches(err, tt.wantErr) {
			t.Errorf("Validate(session %q) = %v, want an error containing %q", tt.in.Session, err, tt.wantErr)
		}
	}
	// A subagent's input is checked by Settings: a key, or none.
	for _, s := range []struct {
		session, wantErr string
	}{{"", ""}, {key, ""}, {"../sessions/other", "want the 64 hexadecimal digits"}} {
		if _, err := (AgentInput{AgentID: "kid", Session: s.session}).Settings(); !matches(err, s.wantErr) {
			t.Errorf("Settings(subagent, session %q) = %v, want an error containing %q", s.session, err, s.wantErr)
		}
	}
}
