package activities

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/transcript"
)

// A call is checked against the run's tools (RunToolInput.WorkerTools),
// whether it comes with its arguments or by reference.
func TestRunToolRunRestriction(t *testing.T) {
	msgs := []model.Message{
		{Role: model.RoleUser, Content: "go", ToolCalls: []model.ToolCall{}},
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
			{ID: "c1", Name: "list_files", Arguments: json.RawMessage(`{}`)},
			{ID: "c2", Name: "write_file", Arguments: json.RawMessage(`{"path":"x.txt","content":"no"}`)},
			{ID: "c3", Name: "whoami", Arguments: json.RawMessage(`{}`)},
		}},
	}
	tests := []struct {
		name    string
		allow   []string
		call    int
		wantErr string // empty: the tool ran
	}{
		{"no restriction", nil, 1, ""},
		{"named", []string{"list_files"}, 0, ""},
		{"not named", []string{"list_files"}, 1, `tool "write_file" is not allowed in this run; it may use list_files`},
		{"pattern", []string{"who*", "read_*"}, 2, ""},
		{"pattern that does not match", []string{"read_*"}, 1, "it may use read_*"},
		{"none", []string{}, 0, "it may use none of the worker's tools"},
	}
	for _, tt := range tests {
		for _, byRef := range []bool{false, true} {
			t.Run(tt.name, func(t *testing.T) {
				ws := t.TempDir()
				a := &Activities{Transcripts: newCallHistory(t, &transcript.NewMessages{Messages: msgs}).reader(), Tools: testTools(t), Roots: testRoots(t, filepath.Dir(ws))}
				call := msgs[1].ToolCalls[tt.call]
				in := RunToolInput{Workspace: ws, Call: call, WorkerTools: tt.allow}
				if byRef {
					in.Call = model.ToolCall{ID: call.ID, Name: call.Name}
					in.From = &transcript.CallRef{Message: 1, Index: tt.call}
				}
				res, err := executeRunTool(t, a, in)
				if err != nil {
					t.Fatal(err)
				}
				if tt.wantErr == "" && res.IsError {
					t.Fatalf("RunTool = %+v, want the tool run", res)
				}
				if tt.wantErr != "" && (!res.IsError || !strings.Contains(res.Content, tt.wantErr)) {
					t.Fatalf("RunTool = %+v, want an error tool message containing %q", res, tt.wantErr)
				}
			})
		}
	}
}
