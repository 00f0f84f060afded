package activities

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/activities/tools"
	"github.com/todoflow/todoflow/model"
	"go.temporal.io/sdk/temporal"
)

// A workspace checked as a plain folder and then swapped for a link to
// outside/.git before the write (a local process did it between the check
// and the open by path, 2 times in 3) cannot take the write there: RunTool
// opens the workspace once, as an os.Root, and its tools use that handle,
// which stays on the folder that was checked. The swap happens inside the
// call, so the test needs no timing to hit the window.
func TestRunToolKeepsTheFolderItChecked(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	ws := filepath.Join(root, "proj")
	outside := filepath.Join(base, "outside")
	mustWrite(t, filepath.Join(ws, "README"), "inside")
	mustWrite(t, filepath.Join(outside, ".git", "config"), "[core]\n")

	const evil = "[core]\n\tfsmonitor = sh evil.sh\n"
	write, _ := tools.DefaultRegistry().Lookup("write_file")
	args, _ := json.Marshal(map[string]string{"path": "config", "content": evil})
	swapThenWrite := tools.New(model.ToolSpec{Name: "swap_then_write"}, func(ctx context.Context, env tools.Env, _ json.RawMessage) (string, error) {
		if err := os.Rename(ws, ws+".checked"); err != nil {
			return "", err
		}
		if err := os.Symlink(filepath.Join(outside, ".git"), ws); err != nil {
			return "", err
		}
		return write.Run(ctx, env, args)
	})
	a := &Activities{Roots: testRoots(t, root), Tools: tools.NewRegistry(swapThenWrite)}
	res, err := executeRunTool(t, a, RunToolInput{WorkflowID: "wf", Workspace: "proj", Call: toolCall("swap_then_write", `{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, ".git", "config")); string(b) != "[core]\n" {
		t.Errorf("outside/.git/config = %q: the write followed the swapped link out of the root (result %+v)", b, res)
	}
	if b, _ := os.ReadFile(filepath.Join(ws+".checked", "config")); string(b) != evil {
		t.Errorf("the folder that was checked holds config = %q, want the write there (result %+v)", b, res)
	}
}

// testRoots returns the roots dirs, failing the test if they are refused.
func testRoots(t *testing.T, dirs ...string) tools.Roots {
	t.Helper()
	r, err := tools.NewRoots(dirs...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestCheckWorkspace(t *testing.T) {
	root := t.TempDir()
	a := &Activities{Roots: testRoots(t, root)}
	if dir, err := a.CheckWorkspace(context.Background(), "proj"); err != nil || dir != filepath.Join(root, "proj") {
		t.Errorf("CheckWorkspace(proj) = %q, %v", dir, err)
	}
	_, err := a.CheckWorkspace(context.Background(), "/")
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || !app.NonRetryable() || app.Type() != ErrTypeWorkspace || !strings.HasPrefix(app.Message(), "workspace ") {
		t.Errorf("CheckWorkspace(/) = %v; want a non-retryable %s error naming the field", err, ErrTypeWorkspace)
	}
}

// A root must hold workspaces only: one that holds the worker's state
// folder would let a run name the dev server's database or another
// session's folder, and so would one inside the state folder anywhere but
// its workspaces folder. The check refuses every run of such a worker,
// naming why.
func TestCheckWorkspaceRefusesRootsAtTheStateFolder(t *testing.T) {
	base := t.TempDir()
	tests := []struct {
		name, root, state string
		err               string // "" for a workspace taken
	}{
		{"root holds the state folder", "r1", "r1/state", "holds the worker's state folder"},
		{"root is the state folder", "r2", "r2", "holds the worker's state folder"},
		{"root holds the state folder deep down", "r3", "r3/a/b/state", "holds the worker's state folder"},
		{"root inside the state folder", "s4/sessions", "s4", "is inside the worker's state folder"},
		{"root is the state folder's workspaces folder", "s5/" + tools.WorkspacesFolder, "s5", ""},
		{"root inside the state folder's workspaces folder", "s6/" + tools.WorkspacesFolder + "/team", "s6", ""},
		{"root beside the state folder", "r7", "s7", ""},
		{"root whose name starts like the state folder", "s8-roots", "s8", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &Activities{Roots: testRoots(t, filepath.Join(base, tt.root)), StateDir: filepath.Join(base, tt.state)}
			dir, err := a.CheckWorkspace(context.Background(), "proj")
			switch {
			case tt.err == "" && err != nil:
				t.Errorf("CheckWorkspace = %v, want the workspace taken", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Errorf("CheckWorkspace = %q, %v; want an error with %q", dir, err, tt.err)
			}
			// A tool call checks again, on the worker that runs it.
			_, err = executeRunTool(t, a, RunToolInput{WorkflowID: "wf", Workspace: "proj", Call: toolCall("list_files", `{}`)})
			if tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("RunTool = %v, want an error with %q", err, tt.err)
			}
		})
	}
}

// mustWrite writes a file, and the folders it is in, or fails the test.
func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := errors.Join(os.MkdirAll(filepath.Dir(path), 0o755), os.WriteFile(path, []byte(content), 0o644)); err != nil {
		t.Fatal(err)
	}
}
