package api

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/todoflow/todoflow/todo"
)

func TestDescribe(t *testing.T) {
	off := false
	long := "a" + strings.Repeat("é", 80) // byte 100 is inside an é: cut before it
	tests := []struct {
		name    string
		in      AgentInput
		summary string
		details []string // lines the details hold
		not     []string // texts they must not hold
	}{
		{
			name:    "defaults",
			in:      AgentInput{Prompt: "Fix the failing test.\nIt is in todo/view_test.go."},
			summary: "Fix the failing test.",
			details: []string{
				"- **Model:** the worker's default (its `TODOFLOW_MODEL`)",
				"- **Tools:** all of the worker's",
				"- **Limits:** 50 model calls a message; idle end 1h; model retries 24h; subagents 24h",
				"- **Context:** whole transcript, 100000 tokens, then summarised",
				"- **Todos:** exactly_one, continuation on (max 2), plan approval required",
			},
			not: []string{"Tool approval", "Reporters", "Workspace", "System prompt", "view_test.go"},
		},
		{
			name: "settings",
			in: AgentInput{
				Prompt: "\n\n   Tidy   the README  \nthen the changelog", Model: "openai:gpt-4o", Tools: []string{"read_file", "mcp__orders__*"},
				Approval: todo.ToolApproval{"write_file": "required", "*": "auto"}, MaxTurns: 7, IdleTimeoutS: 90, ModelRetryWindowS: 5400,
				SubagentTimeoutS: 120, SubagentGraceS: 30, Context: ContextConfig{MaxMessages: 40, MaxTokens: 8000, Summarize: &off},
				Todo:      todo.Config{InProgressPolicy: todo.AtMostOne, Continuation: &off, PlanApproval: todo.ApprovalAuto, SystemPrompt: "Be brief."},
				Workspace: "/srv/work",
				Reporters: []ReporterConfig{{Type: "console"}, {Type: "webhook", Config: json.RawMessage(`{"url": "https://hooks.example/T0KEN-in-the-path"}`)}},
			},
			summary: "Tidy the README",
			details: []string{
				"- **Model:** `openai:gpt-4o`",
				"- **Tools:** `read_file`, `mcp__orders__*`",
				"- **Tool approval:** `*` auto, `write_file` required",
				"- **Limits:** 7 model calls a message; idle end 1m30s; model retries 1h30m; subagents 1h30m",
				"- **Context:** last 40 messages, 8000 tokens, then dropped",
				"- **Todos:** at_most_one, continuation off, plan approval auto",
				"- **Reporters:** console, webhook",
				"- **Workspace:** `/srv/work`",
				"- **System prompt:** the input's own",
			},
			not: []string{"T0KEN", "Be brief"},
		},
		{
			name:    "a session without a prompt, tools none, todo list off",
			in:      AgentInput{Tools: []string{}, Todo: todo.Config{Enabled: &off}},
			summary: "session, waiting for its first message",
			details: []string{"- **Tools:** none", "- **Todos:** off"},
		},
		{
			name:    "a long first line",
			in:      AgentInput{Prompt: long},
			summary: "a" + strings.Repeat("é", 49) + "…",
		},
		{
			name:    "a refused input",
			in:      AgentInput{Prompt: "go", MaxTurns: -1},
			summary: "go",
			details: []string{"**Input refused:** max_turns is -1: want a positive number (default 50)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			summary, details := Describe(tt.in)
			if summary != tt.summary {
				t.Errorf("summary %q; want %q", summary, tt.summary)
			}
			if !utf8.ValidString(summary) || strings.Contains(summary, "\n") {
				t.Errorf("summary %q is not one line of UTF-8", summary)
			}
			lines := strings.Split(details, "\n")
			for _, want := range tt.details {
				if !contains(lines, want) {
					t.Errorf("details lack the line %q:\n%s", want, details)
				}
			}
			for _, not := range tt.not {
				if strings.Contains(details, not) {
					t.Errorf("details hold %q:\n%s", not, details)
				}
			}
		})
	}
}

func contains(lines []string, line string) bool {
	for _, l := range lines {
		if l == line {
			return true
		}
	}
	return false
}

func TestSpan(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Hour: "1h", 24 * time.Hour: "24h", 90 * time.Minute: "1h30m", 2 * time.Minute: "2m",
		90 * time.Second: "1m30s", 30 * time.Second: "30s", time.Hour + time.Second: "1h0m1s",
	} {
		if got := span(d); got != want {
			t.Errorf("span(%s) = %q; want %q", d, got, want)
		}
	}
}
