package activities

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/todoflow/todoflow/activities/tools"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
)

// answeringModel answers every call with resp and keeps the requests.
type answeringModel struct {
	mu   sync.Mutex
	resp model.Response
	reqs []model.Request
}

func (m *answeringModel) Complete(_ context.Context, req model.Request) (model.Response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reqs = append(m.reqs, req)
	return m.resp, nil
}

// fixedSource offers the tools named, or fails with err.
type fixedSource struct {
	prefix string
	names  []string
	err    error
}

func (s fixedSource) Prefix() string { return s.prefix }

func (s fixedSource) Tools(context.Context) ([]tools.Tool, error) {
	var list []tools.Tool
	for _, n := range s.names {
		list = append(list, tools.New(model.ToolSpec{Name: s.prefix + n, Parameters: json.RawMessage(`{"type":"object"}`)}, nil))
	}
	return list, s.err
}

// CallModel offers the sources' tools that the run allows; a source that
// cannot list its tools costs the model those tools, not the call.
func TestCallModelOffersSourceTools(t *testing.T) {
	reg := tools.DefaultRegistry()
	for _, s := range []tools.Source{
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
			m := &answeringModel{resp: model.Response{Content: "ok"}}
			a := &Activities{Tools: reg, Models: func(string) (model.Client, string, error) { return m, "m", nil }}
			_, err := activityEnv(a).ExecuteActivity(a.CallModel, CallModelInput{
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

// CallModel tells the model which calls are summaries: the scripted model
// answers them outside its numbered responses.
func TestCallModelPassesSummarize(t *testing.T) {
	tests := []struct {
		name      string
		summarize *Summarize
		want      bool
	}{
		{"an agent's call", nil, false},
		{"a summarising call", &Summarize{Instructions: "Summarise."}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &answeringModel{resp: model.Response{Content: "ok"}}
			a := &Activities{Models: func(string) (model.Client, string, error) { return m, "m", nil }}
			_, err := activityEnv(a).ExecuteActivity(a.CallModel, CallModelInput{
				Model:       "x:y",
				Call:        3,
				Messages:    []model.Message{{Role: model.RoleUser, Content: "hi"}},
				WorkerTools: []string{},
				Summarize:   tt.summarize,
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(m.reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(m.reqs))
			}
			if got := m.reqs[0].Summarize; got != tt.want {
				t.Errorf("Request.Summarize = %v, want %v", got, tt.want)
			}
		})
	}
}

// CallModel's answer names the model that gave it, as the resolver named it
// in the request: for a run on the worker's default ("" in its input) that
// is how the run learns which model it pays for.
func TestCallModelNamesTheModel(t *testing.T) {
	tests := []struct {
		name, ref, want string
	}{
		{"the worker's default", "", "gpt-4o-mini"},
		{"one the input names", "openai:gpt-4o", "gpt-4o"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &answeringModel{resp: model.Response{Content: "ok"}}
			resolve := func(ref string) (model.Client, string, error) {
				_, name, _ := strings.Cut(cmp.Or(ref, "openai:gpt-4o-mini"), ":")
				return m, name, nil
			}
			a := &Activities{Models: resolve}
			val, err := activityEnv(a).ExecuteActivity(a.CallModel, CallModelInput{
				Model: tt.ref, Call: 1, Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}, WorkerTools: []string{},
			})
			if err != nil {
				t.Fatal(err)
			}
			var resp model.Response
			if err := val.Get(&resp); err != nil {
				t.Fatal(err)
			}
			if resp.Model != tt.want {
				t.Errorf("the answer's Model = %q, want %q", resp.Model, tt.want)
			}
		})
	}
}

// The todo tools' specs are built once and shared; each call still gets the
// specs its input asks for, and a copy of its own.
func TestTodoToolsSpecs(t *testing.T) {
	want := func(desc string) []model.ToolSpec {
		defs := append(todo.Tools(todo.Settings{Enabled: true, ToolDescription: desc}), todo.PlanTools(true)...)
		out := make([]model.ToolSpec, len(defs))
		for i, d := range defs {
			out[i] = model.ToolSpec{Name: d.Name, Description: d.Description, Parameters: d.Parameters}
		}
		return out
	}
	tests := []struct {
		name string
		t    *TodoTools
		want []model.ToolSpec
	}{
		{"none", nil, nil},
		{"default description", &TodoTools{}, want("")},
		{"own description", &TodoTools{WriteDescription: "Keep your list here."}, want("Keep your list here.")},
		{"default again", &TodoTools{}, want("")},
	}
	for _, tt := range tests {
		got := tt.t.specs()
		if len(got) != len(tt.want) {
			t.Fatalf("%s: %d specs, want %d", tt.name, len(got), len(tt.want))
		}
		for i := range got {
			g, w := got[i], tt.want[i]
			if g.Name != w.Name || g.Description != w.Description || string(g.Parameters) != string(w.Parameters) {
				t.Errorf("%s: spec %d = %s %q, want %s %q", tt.name, i, g.Name, g.Description, w.Name, w.Description)
			}
		}
		if len(got) > 0 {
			got[0].Description = "changed by a caller"
		}
	}
}

// An answer over MaxAnswerBytes, the call's result and an event of
// history, fails the call for good with what to do, rather than at the
// server at every attempt.
func TestCallModelRefusesAnAnswerTooLarge(t *testing.T) {
	tests := []struct {
		name string
		resp model.Response
		ok   bool
	}{
		{"text at the cap", model.Response{Content: strings.Repeat("x", MaxAnswerBytes)}, true},
		{"text over it", model.Response{Content: strings.Repeat("x", MaxAnswerBytes+1)}, false},
		{"a write over it", model.Response{ToolCalls: []model.ToolCall{{ID: "c1", Name: "write_file",
			Arguments: json.RawMessage(`{"content":"` + strings.Repeat("x", MaxAnswerBytes) + `"}`)}}}, false},
	}
	for _, tt := range tests {
		a := &Activities{Models: func(string) (model.Client, string, error) { return answering{resp: tt.resp}, "m", nil }}
		var s testsuite.WorkflowTestSuite
		env := s.NewTestActivityEnvironment()
		env.RegisterActivity(a)
		_, err := env.ExecuteActivity(a.CallModel, CallModelInput{Model: "m", Messages: []model.Message{{Role: model.RoleUser, Content: "go"}}, WorkerTools: []string{}})
		if tt.ok {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		var app *temporal.ApplicationError
		if !errors.As(err, &app) || !app.NonRetryable() || app.Type() != ErrTypeModel || !strings.Contains(err.Error(), "smaller pieces") {
			t.Errorf("%s: %v; want a non-retryable %s that says what to do", tt.name, err, ErrTypeModel)
		}
	}
}
