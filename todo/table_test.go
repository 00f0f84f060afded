package todo

import (
	"encoding/json"
	"io/fs"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The tools v0.1.0 offered are offered as they were, byte for byte and in
// the same order: names, descriptions and schemas (testdata/tools-v0.1.0.json
// was written by v0.1.0's hand-written definitions). Tools added since may
// come between them.
func TestToolDefsAsReleased(t *testing.T) {
	b, err := os.ReadFile("testdata/tools-v0.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	var want []struct{ Name, Description, Parameters string }
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	got := append(Tools(Settings{Enabled: true}), PlanTools(true)...)
	at := 0
	for _, w := range want {
		for at < len(got) && got[at].Name != w.Name {
			at++
		}
		if at == len(got) {
			t.Fatalf("%s is not offered, or not in v0.1.0's order", w.Name)
		}
		if g := got[at]; g.Description != w.Description || string(g.Parameters) != w.Parameters {
			t.Errorf("%s:\n got %q\n     %s\nwant %q\n     %s", w.Name, g.Description, g.Parameters, w.Description, w.Parameters)
		}
	}
}

// Every entry of the table has a description and a schema, every file of
// tools/ belongs to an entry, and the kinds and lookups agree.
func TestToolTable(t *testing.T) {
	names := map[string]bool{"schemas.json": true}
	for _, tt := range []struct {
		name string
		kind Kind
	}{
		{ToolWrite, KindList}, {ToolRead, KindList}, {ToolPause, KindList},
		{ToolCreatePlan, KindPlan}, {ToolGetTaskEvents, KindPlan}, {ToolCompleteStepWithOutput, KindPlan},
		{ToolSpawnSubagent, KindAgent}, {ToolCancelSubagent, KindAgent},
		{"read_file", KindNone}, {"", KindNone}, {"mcp__x__y", KindNone},
	} {
		if got := KindOf(tt.name); got != tt.kind {
			t.Errorf("KindOf(%q) = %v, want %v", tt.name, got, tt.kind)
		}
		if IsTool(tt.name) != (tt.kind == KindList) || IsPlanTool(tt.name) != (tt.kind == KindPlan) {
			t.Errorf("IsTool/IsPlanTool(%q) disagree with kind %v", tt.name, tt.kind)
		}
	}
	for i, e := range Table() {
		names[e.Name+".txt"] = true
		d := defs[i]
		if d.Name != e.Name || strings.TrimSpace(d.Description) == "" || !json.Valid(d.Parameters) {
			t.Errorf("%s: definition %+v", e.Name, d)
		}
		if (e.list != nil) != (e.Kind == KindList) || (e.plan != nil) != (e.Kind == KindPlan) {
			t.Errorf("%s: kind %v, but list %v, plan %v", e.Name, e.Kind, e.list != nil, e.plan != nil)
		}
		if reflect.TypeOf(e.Args).Kind() != reflect.Struct {
			t.Errorf("%s: Args is a %T, not a struct", e.Name, e.Args)
		}
		if e.Example != "" && !json.Valid([]byte(e.Example)) {
			t.Errorf("%s: example %s is not JSON", e.Name, e.Example)
		}
	}
	files, err := fs.ReadDir(toolFiles, "tools")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !names[f.Name()] {
			t.Errorf("tools/%s belongs to no tool of the table", f.Name())
		}
	}
	var schemas map[string]json.RawMessage
	if err := json.Unmarshal(readToolFile("schemas.json"), &schemas); err != nil || len(schemas) != len(table) {
		t.Errorf("tools/schemas.json has %d schemas for %d tools (%v): run go generate ./todo", len(schemas), len(table), err)
	}
}

// The schemas' enums are the lists the tools check against.
func TestToolSchemaEnums(t *testing.T) {
	enum := func(tool string, path ...string) []string {
		t.Helper()
		var s any
		d, _ := lookupDef(tool)
		if err := json.Unmarshal(d.Parameters, &s); err != nil {
			t.Fatal(err)
		}
		for _, p := range path {
			s = s.(map[string]any)[p]
		}
		var out []string
		for _, v := range s.([]any) {
			out = append(out, v.(string))
		}
		return out
	}
	for _, tt := range []struct {
		got, want []string
	}{
		{enum(ToolSubscribe, "properties", "event_types", "items", "enum"), EventTypes},
		{enum(ToolGetTaskEvents, "properties", "event_types", "items", "enum"), EventTypes},
		{enum(ToolSetStepStatus, "properties", "status", "enum"), settableStatuses},
		{enum(ToolCompletePlan, "properties", "status", "enum"), []string{PlanCompleted, PlanFailed, PlanCancelled}},
		{enum(ToolWrite, "properties", "todos", "items", "properties", "status", "enum"),
			[]string{string(Pending), string(InProgress), string(Completed), string(Cancelled), string(Blocked)}},
	} {
		if !slices.Equal(tt.got, tt.want) {
			t.Errorf("enum %v, want %v", tt.got, tt.want)
		}
	}
}

func lookupDef(name string) (ToolDef, bool) {
	for _, d := range defs {
		if d.Name == name {
			return d, true
		}
	}
	return ToolDef{}, false
}
