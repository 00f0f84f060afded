package client

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/todoflow/todoflow/api"

	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/todoflow/todoflow/model"
)

// diffServer answers the tool_diffs query from diffs, and records what
// each query asked.
type diffServer struct {
	sdkclient.Client
	diffs map[string]string
	asked [][]string
}

func (f *diffServer) QueryWorkflow(_ context.Context, _, _, name string, args ...any) (converter.EncodedValue, error) {
	if name != api.ToolDiffsQuery {
		return nil, fmt.Errorf("unexpected query %s", name)
	}
	ids := args[0].([]string)
	f.asked = append(f.asked, ids)
	out := map[string]string{}
	for _, id := range ids {
		if d, ok := f.diffs[id]; ok {
			out[id] = d
		}
	}
	return jsonValue{out}, nil
}

// jsonValue is a query's answer, decoded as the JSON converter would.
type jsonValue struct{ v any }

func (j jsonValue) HasValue() bool { return true }
func (j jsonValue) Get(out any) error {
	b, err := json.Marshal(j.v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// A look's tool results get their diffs in one query, asked only for the
// worker's tools (the workflow's own, write_todos here, change no file),
// and only when there is such a result; a result without a diff has none.
func TestWatchDiffs(t *testing.T) {
	f := &diffServer{diffs: map[string]string{"w1": "@@ -0,0 +1 @@\n+x"}}
	w := &watcher{s: New(f, Options{}).Session("s")}
	answer := model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
		{ID: "t1", Name: "write_todos"}, {ID: "w1", Name: "write_file"}, {ID: "r1", Name: "read_file"}, {ID: "e1", Name: "write_file"}}}
	result := func(id string) model.Message {
		return model.Message{Role: model.RoleTool, ToolCallID: id, Content: "ok"}
	}
	failed := model.Message{Role: model.RoleTool, ToolCallID: "e1", Content: "refused", IsError: true}

	got := w.diffs(context.Background(), []model.Message{answer, result("t1"), result("w1")})
	if want := map[string]string{"w1": "@@ -0,0 +1 @@\n+x"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("diffs = %v, want %v", got, want)
	}
	// The rest of the answer's results come in the next look.
	if got := w.diffs(context.Background(), []model.Message{result("r1"), failed}); len(got) != 0 {
		t.Errorf("diffs = %v, want none", got)
	}
	// A look with only the workflow's tools, or no tool at all, asks nothing.
	w.diffs(context.Background(), []model.Message{
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "t2", Name: "write_todos"}}}, result("t2"),
		{Role: model.RoleAssistant, Content: "done"}})
	if want := [][]string{{"w1"}, {"r1"}}; !slices.EqualFunc(f.asked, want, slices.Equal) {
		t.Errorf("queries asked %v, want %v", f.asked, want)
	}
}
