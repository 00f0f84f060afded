package main

import (
	"testing"

	"github.com/todoflow/todoflow/workflows"
)

func TestWaitsForTool(t *testing.T) {
	own := workflows.State{AgentID: "main", PendingApproval: &workflows.PendingApproval{CallID: "c1", Tool: "write_file"}}
	tree := workflows.State{AgentID: "main", Waiting: []workflows.Wait{
		{AgentID: "planner", Kind: workflows.WaitPlanApproval},
		{AgentID: "writer", Kind: workflows.WaitToolApproval},
	}}
	tests := []struct {
		name  string
		st    workflows.State
		agent string
		want  bool
	}{
		{"nothing waits", workflows.State{AgentID: "main"}, "", false},
		{"own call", own, "", true},
		{"own call, named", own, "main", true},
		{"own call, another agent named", own, "writer", false},
		{"a plan waits", workflows.State{Waiting: []workflows.Wait{{AgentID: "main", Kind: workflows.WaitPlanApproval}}}, "", false},
		{"a subagent's call", tree, "writer", true},
		{"a subagent's plan", tree, "planner", false},
		{"any in the tree", tree, "", true},
	}
	for _, tt := range tests {
		if got := waitsForTool(tt.st, tt.agent); got != tt.want {
			t.Errorf("%s: waitsForTool = %v, want %v", tt.name, got, tt.want)
		}
	}
}
