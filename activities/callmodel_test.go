package activities

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/todoflow/todoflow/model"
)

// recordingModel answers every call with a text and keeps the requests.
type recordingModel struct {
	mu   sync.Mutex
	reqs []model.Request
}

func (m *recordingModel) Complete(_ context.Context, req model.Request) (model.Response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reqs = append(m.reqs, req)
	return model.Response{Content: "ok"}, nil
}

// fixedSource offers the tools named, or fails with err.
type fixedSource struct {
	prefix string
	names  []string
	err    error
}

func (s fixedSource) Prefix() string { return s.prefix }

func (s fixedSource) Tools(context.Context) ([]Tool, error) {
	var tools []Tool
	for _, n := range s.names {
		tools = append(tools, NewTool(model.ToolSpec{Name: s.prefix + n, Parameters: json.RawMessage(`{"type":"object"}`)}, nil))
	}
	return tools, s.err
}

// CallModel offers the sources' tools that the run allows; a source that
// cannot list its tools costs the model those tools, not the call.
func TestCallModelOffersSourceTools(t *testing.T) {
	reg := DefaultRegistry()
	for _, s := range []Source{
		fixedSource{prefix: "mcp__orders__", names: []string{"lookup", "cancel"}},
		fixedSource{prefix: "mcp__down__", err: errors.New("connection refused")},
	} {
		if err := reg.AddSource(s); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		allow []string
		want  []string
	}{
		{"all", nil, []string{"list_files", "mcp__orders__cancel", "mcp__orders__lookup", "read_file", "write_file"}},
		{"pattern", []string{"mcp__orders__*", "read_file"}, []string{"mcp__orders__cancel", "mcp__orders__lookup", "read_file"}},
		{"none", []string{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &recordingModel{}
			a := &Activities{Tools: reg, Models: func(string) (model.Client, string, error) { return m, "m", nil }}
			var s testsuite.WorkflowTestSuite
			env := s.NewTestActivityEnvironment()
			env.RegisterActivity(a)
			_, err := env.ExecuteActivity(a.CallModel, CallModelInput{
				Model:       "x:y",
				Call:        1,
				Messages:    []model.Message{{Role: model.RoleUser, Content: "hi"}},
				WorkerTools: tt.allow,
			})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, spec := range m.reqs[0].Tools {
				got = append(got, spec.Name)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("offered %q, want %q", got, tt.want)
			}
		})
	}
}
