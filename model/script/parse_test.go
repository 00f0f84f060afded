package script

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/model"
)

// scenario is the example of the public contract, plus ids, delays and fields this
// package must ignore.
const scenario = `{
  "name": "what this shows",
  "input": { "prompt": "…", "todo": { "finalization_max_corrections": 1 } },
  "model": [
    {"tool_calls": [{"name": "write_todos", "arguments": {"todos": [
        {"content": "Read the code", "status": "in_progress"},
        {"content": "Write the fix", "status": "pending"}]}}]},
    {"content": "Reading.", "tool_calls": [
        {"name": "read_file", "arguments": {"path": "main.go"}, "id": "given_id"},
        {"name": "todo_read"}]},
    {"content": "Done.", "delay_ms": 25}
  ],
  "agents": { "researcher": [ {"content": "found it"} ], "writer": [] },
  "user": [
    {"when": "awaiting_approval", "update": "approve_plan", "args": {"approved": true}}
  ],
  "expect": {"reply": "Done."}
}`

func TestParse(t *testing.T) {
	text := func(s string) Step {
		return Step{Response: model.Response{Content: s, ToolCalls: []model.ToolCall{}}}
	}
	tests := []struct {
		name    string
		data    string
		agentID string
		want    []Step
	}{
		{
			name: "root agent",
			data: scenario,
			want: []Step{
				{Response: model.Response{ToolCalls: []model.ToolCall{{
					ID:        "call_1_0",
					Name:      "write_todos",
					Arguments: json.RawMessage(`{"todos":[{"content":"Read the code","status":"in_progress"},{"content":"Write the fix","status":"pending"}]}`),
				}}}},
				{Response: model.Response{Content: "Reading.", ToolCalls: []model.ToolCall{
					{ID: "given_id", Name: "read_file", Arguments: json.RawMessage(`{"path":"main.go"}`)},
					{ID: "call_2_1", Name: "todo_read", Arguments: json.RawMessage(`{}`)},
				}}},
				{Response: model.Response{Content: "Done.", ToolCalls: []model.ToolCall{}}, Delay: 25 * time.Millisecond},
			},
		},
		{name: "subagent", data: scenario, agentID: "researcher", want: []Step{text("found it")}},
		{name: "subagent with an empty list", data: scenario, agentID: "writer", want: []Step{}},
		{name: "no model list", data: `{"name": "x"}`, want: []Step{}},
		{name: "null model list", data: `{"model": null}`, want: []Step{}},
		{name: "empty response", data: `{"model": [{}]}`, want: []Step{text("")}},
		{name: "null fields", data: `{"model": [{"content": null, "tool_calls": null, "delay_ms": null}]}`, want: []Step{text("")}},
		{
			name: "null arguments become {}",
			data: `{"model": [{"tool_calls": [{"name": "f", "arguments": null}]}]}`,
			want: []Step{{Response: model.Response{ToolCalls: []model.ToolCall{{ID: "call_1_0", Name: "f", Arguments: json.RawMessage(`{}`)}}}}},
		},
		{name: "unknown fields ignored", data: `{"model": [{"content": "x", "comment": "why"}]}`, want: []Step{text("x")}},
		{name: "agent id with a dot", data: `{"agents": {"a.b": [{"content": "x"}]}}`, agentID: "a.b", want: []Step{text("x")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.data), tt.agentID)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(got.Steps, tt.want) {
				t.Errorf("Parse =\n%+v\nwant\n%+v", got.Steps, tt.want)
			}
			if got.Summary != DefaultSummary {
				t.Errorf("Summary = %q, want DefaultSummary for a scenario without one", got.Summary)
			}
		})
	}
}

// The summary is read for every agent of the file alike, and a scenario
// without one still answers summarising calls.
func TestParseSummary(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		agentID string
		want    string
	}{
		{"root agent", `{"summary": "So far: the log was read.", "model": []}`, "", "So far: the log was read."},
		{"subagent", `{"summary": "So far: the log was read.", "agents": {"r": []}}`, "r", "So far: the log was read."},
		{"none", `{"model": []}`, "", DefaultSummary},
		{"none, subagent", `{"agents": {"r": []}}`, "r", DefaultSummary},
		{"null", `{"summary": null}`, "", DefaultSummary},
		{"empty, kept as it is", `{"summary": ""}`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.data), tt.agentID)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got.Summary != tt.want {
				t.Errorf("Summary = %q, want %q", got.Summary, tt.want)
			}
			if r := got.SummaryResponse(); r.Content != tt.want || r.ToolCalls == nil || len(r.ToolCalls) != 0 {
				t.Errorf("SummaryResponse = %+v, want final text %q with an empty tool call list", r, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		agentID string
		want    string
	}{
		{"broken JSON", "{\n  \"model\": [\n    {\"content\": \"x\",}\n  ]\n}", "", "invalid JSON at line 3, column 21"},
		{"empty file", ``, "", "invalid JSON"},
		{"not an object", `[1, 2]`, "", "must be a JSON object, not array"},
		{"null", `null`, "", "must be a JSON object, not null"},
		{"model not an array", `{"model": {"content": "x"}}`, "", "model: must be an array of responses"},
		{"response not an object", `{"model": [{"content": "x"}, "Done."]}`, "", "model[1]: must be an object"},
		{"content not a string", `{"model": [{"content": 42}]}`, "", "model[0].content: must be a string"},
		{"delay not a number", `{"model": [{"delay_ms": "1s"}]}`, "", "model[0].delay_ms: must be a whole number"},
		{"delay fractional", `{"model": [{"delay_ms": 1.5}]}`, "", "model[0].delay_ms: must be a whole number"},
		{"delay negative", `{"model": [{"delay_ms": -1}]}`, "", "model[0].delay_ms: must not be negative"},
		{"delay too long", `{"model": [{"delay_ms": 600001}]}`, "", "model[0].delay_ms: 600001 is more than 600000 (10m0s)"},
		{"delay that overflows a duration", `{"model": [{"delay_ms": 9223372036854775807}]}`, "", "model[0].delay_ms: 9223372036854775807 is more than 600000"},
		{"tool_calls not an array", `{"model": [{"tool_calls": {"name": "f"}}]}`, "", "model[0].tool_calls: must be an array"},
		{"tool call not an object", `{"model": [{"tool_calls": ["f"]}]}`, "", "model[0].tool_calls[0]: must be an object"},
		{
			"name missing",
			`{"model": [{}, {}, {}, {"tool_calls": [{"arguments": {}}]}]}`, "",
			"model[3].tool_calls[0]: name is missing",
		},
		{"name empty", `{"model": [{"tool_calls": [{"name": ""}]}]}`, "", "model[0].tool_calls[0]: name is missing"},
		{"name blank", `{"model": [{"tool_calls": [{"name": " \t"}]}]}`, "", "model[0].tool_calls[0]: name is missing"},
		{"name not a string", `{"model": [{"tool_calls": [{"name": 7}]}]}`, "", "model[0].tool_calls[0].name: must be a string"},
		{"id not a string", `{"model": [{"tool_calls": [{"name": "f", "id": 1}]}]}`, "", "model[0].tool_calls[0].id: must be a string"},
		{
			"arguments a string",
			`{"model": [{"tool_calls": [{"name": "f"}, {"name": "g", "arguments": "{\"a\":1}"}]}]}`, "",
			"model[0].tool_calls[1].arguments: must be a JSON object, not a string",
		},
		{"arguments an array", `{"model": [{"tool_calls": [{"name": "f", "arguments": [1]}]}]}`, "", "must be a JSON object, not an array"},
		{"arguments a number", `{"model": [{"tool_calls": [{"name": "f", "arguments": 1}]}]}`, "", "must be a JSON object, not a number"},
		{
			"error in a subagent",
			`{"agents": {"researcher": [{"tool_calls": [{}]}]}}`, "researcher",
			"agents.researcher[0].tool_calls[0]: name is missing",
		},
		{"unknown agent", scenario, "reviewer", `unknown agent id "reviewer" (agents has: researcher, writer)`},
		{"no agents", `{"model": []}`, "researcher", `unknown agent id "researcher": the scenario has no agents`},
		{"agents not an object", `{"agents": []}`, "researcher", "agents: must be an object"},
		{"agent list not an array", `{"agents": {"r": {"content": "x"}}}`, "r", "agents.r: must be an array of responses"},
		{"summary a number", `{"summary": 7, "model": []}`, "", "summary: must be a string (the answer to every summarising call), not a number"},
		{"summary an object", `{"summary": {"text": "x"}}`, "", "summary: must be a string (the answer to every summarising call), not an object"},
		{"summary an array", `{"summary": ["x"]}`, "", "summary: must be a string (the answer to every summarising call), not an array"},
		{"summary a boolean", `{"summary": true}`, "", "summary: must be a string (the answer to every summarising call), not a boolean"},
		{"summary wrong for a subagent too", `{"summary": 7, "agents": {"r": []}}`, "r", "summary: must be a string"},
		{"then not an object", `{"model": [], "then": "again"}`, "", "then: must be an object with content and/or tool_calls"},
		{"then's tool call without a name", `{"then": {"tool_calls": [{}]}}`, "", "then.tool_calls[0]: name is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.data), tt.agentID)
			if err == nil {
				t.Fatalf("Parse succeeded, want an error containing %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestScriptAt(t *testing.T) {
	s, err := Parse([]byte(scenario), "")
	if err != nil {
		t.Fatal(err)
	}
	empty := Step{Response: model.Response{ToolCalls: []model.ToolCall{}}}
	tests := []struct {
		call int
		want Step
	}{
		{1, s.Steps[0]},
		{2, s.Steps[1]},
		{3, s.Steps[2]},
		{4, empty},
		{100, empty},
		{0, empty},
		{-1, empty},
	}
	for _, tt := range tests {
		if got := s.At(tt.call); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("At(%d) = %+v, want %+v", tt.call, got, tt.want)
		}
	}
}

func TestSplitRef(t *testing.T) {
	tests := []struct {
		ref, path, agent string
	}{
		{"scenarios/demo.json", "scenarios/demo.json", ""},
		{"scenarios/demo.json#researcher", "scenarios/demo.json", "researcher"},
		{"/abs/dir#1/demo.json#a", "/abs/dir#1/demo.json", "a"},
		{"demo.json#", "demo.json", ""},
		{"", "", ""},
	}
	for _, tt := range tests {
		path, agent := SplitRef(tt.ref)
		if path != tt.path || agent != tt.agent {
			t.Errorf("SplitRef(%q) = %q, %q; want %q, %q", tt.ref, path, agent, tt.path, tt.agent)
		}
	}
}

// "then" answers every call of the root agent past its list, each with its
// own derived tool call ids; without it, or for a subagent, the answer past
// the list is an empty final text.
func TestParseThen(t *testing.T) {
	const data = `{"model": [{"content": "first"}],
	  "then": {"content": "again", "tool_calls": [{"name": "todo_read"}, {"name": "list_files", "id": "kept"}]},
	  "agents": {"r": [{"content": "sub"}]}}`
	tests := []struct {
		name    string
		data    string
		agentID string
		call    int
		content string
		ids     []string
	}{
		{"in the list", data, "", 1, "first", nil},
		{"first past the list", data, "", 2, "again", []string{"call_2_0", "kept"}},
		{"later past the list", data, "", 9, "again", []string{"call_9_0", "kept"}},
		{"below one", data, "", 0, "", nil},
		{"subagent past its list", data, "r", 2, "", nil},
		{"no then", `{"model": [{"content": "first"}]}`, "", 2, "", nil},
		{"null then", `{"model": [], "then": null}`, "", 1, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse([]byte(tt.data), tt.agentID)
			if err != nil {
				t.Fatal(err)
			}
			got := s.At(tt.call).Response
			if got.Content != tt.content {
				t.Errorf("At(%d).Content = %q, want %q", tt.call, got.Content, tt.content)
			}
			var ids []string
			for _, tc := range got.ToolCalls {
				ids = append(ids, tc.ID)
			}
			if !reflect.DeepEqual(ids, tt.ids) {
				t.Errorf("At(%d) tool call ids = %v, want %v", tt.call, ids, tt.ids)
			}
		})
	}
	// The script's own Then keeps the marks: answering a call changes no
	// later answer.
	s, _ := Parse([]byte(data), "")
	s.At(3)
	if got := s.At(4).Response.ToolCalls[0].ID; got != "call_4_0" {
		t.Errorf("after At(3), At(4)'s id is %q, want call_4_0", got)
	}
}
