package main

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/todoflow/todoflow/todo"
)

// The embedded file is what the argument structs generate.
func TestSchemasAreCurrent(t *testing.T) {
	want, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../tools/schemas.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("todo/tools/schemas.json is stale: run go generate ./todo\n got %s\nwant %s", got, want)
	}
}

// Every schema is a valid JSON Schema to the library, each tool's example
// call passes it, and a call without a required argument or with a value
// outside an enum does not.
func TestSchemasValidate(t *testing.T) {
	defs := append(todo.Tools(todo.Settings{Enabled: true}), todo.PlanTools(true)...)
	examples := map[string]string{}
	for _, e := range todo.Table() {
		examples[e.Name] = e.Example
	}
	for _, tt := range []struct{ tool, args string }{
		{todo.ToolWrite, `{"todos": [{"content": "Fix it", "status": "in_progress", "priority": "high", "id": "1"}]}`},
		{todo.ToolPause, `{"reason": "The key is missing."}`},
		{todo.ToolSpawnSubagent, `{"agent_id": "implementer", "task": "Write it", "tools": ["read_file"], "todo": {"enabled": true}}`},
		{todo.ToolCancelSubagent, `{"agent_id": "implementer"}`},
	} {
		examples[tt.tool] = tt.args
	}
	resolved := map[string]*jsonschema.Resolved{}
	for _, d := range defs {
		var s jsonschema.Schema
		if err := json.Unmarshal(d.Parameters, &s); err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		resolved[d.Name] = rs
		ex := examples[d.Name]
		if ex == "" {
			ex = "{}"
		}
		if err := rs.Validate(instance(t, ex)); err != nil {
			t.Errorf("%s: example %s: %v", d.Name, ex, err)
		}
	}
	for _, tt := range []struct{ tool, args string }{
		{todo.ToolCreatePlan, `{"title": "x"}`},
		{todo.ToolSetStepStatus, `{"step_id": "step_1", "status": "blocked"}`},
		{todo.ToolSubscribe, `{"event_types": []}`},
		{todo.ToolGetTaskEvents, `{"limit": 0}`},
		{todo.ToolSpawnSubagent, `{"agent_id": "a b", "task": "x"}`},
		{todo.ToolPause, `{"reason": ""}`},
	} {
		if err := resolved[tt.tool].Validate(instance(t, tt.args)); err == nil {
			t.Errorf("%s %s passes its schema", tt.tool, tt.args)
		}
	}
}

func instance(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}
