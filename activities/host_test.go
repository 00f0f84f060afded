package activities

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/todoflow/todoflow/activities/tools"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
)

func TestWorkspaceHost(t *testing.T) {
	cases := []struct {
		queue   string
		want    string
		errType string
	}{
		{queue: "todoflow-host-a-0123abcd", want: "todoflow-host-a-0123abcd"},
		{queue: "", want: ""}, // a worker without a host queue: not pinned
	}
	for _, tc := range cases {
		var s testsuite.WorkflowTestSuite
		env := s.NewTestActivityEnvironment()
		a := &Activities{HostQueue: tc.queue}
		env.RegisterActivity(a)
		val, err := env.ExecuteActivity(a.WorkspaceHost)
		if tc.errType != "" {
			var app *temporal.ApplicationError
			if !errors.As(err, &app) || app.Type() != tc.errType || !app.NonRetryable() {
				t.Errorf("queue %q: error %v, want a non-retryable %s", tc.queue, err, tc.errType)
			}
			continue
		}
		if err != nil {
			t.Fatalf("queue %q: %v", tc.queue, err)
		}
		var got HostInfo
		if err := val.Get(&got); err != nil {
			t.Fatal(err)
		}
		if got.Queue != tc.want {
			t.Errorf("queue %q: answered %q", tc.queue, got.Queue)
		}
	}
}

// RunToolOnHost runs a call on the host it names, and only there: any other
// worker refuses it before touching anything, so that the workflow can send
// it to the host's queue.
func TestRunToolOnHost(t *testing.T) {
	cases := []struct {
		name, queue, host string
		ran               bool
	}{
		{"the host", "todoflow-host-a", "todoflow-host-a", true},
		{"another host", "todoflow-host-b", "todoflow-host-a", false},
		{"a worker with no host queue", "", "todoflow-host-a", false},
		{"a call that names no host", "todoflow-host-a", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestActivityEnvironment()
			state := t.TempDir()
			a := &Activities{HostQueue: tc.queue, Tools: tools.DefaultRegistry(), StateDir: state}
			env.RegisterActivity(a)
			val, err := env.ExecuteActivity(a.RunToolOnHost, RunToolInput{WorkflowID: "wf", Host: tc.host,
				Call: toolCall("write_file", `{"path":"a.txt","content":"x"}`)})
			_, statErr := os.Stat(filepath.Join(state, SessionsFolder, "wf", "a.txt"))
			if wrote := statErr == nil; wrote != tc.ran {
				t.Errorf("the file was written: %v, want %v", wrote, tc.ran)
			}
			if tc.ran {
				var res RunToolResult
				if err != nil || val.Get(&res) != nil || res.IsError {
					t.Fatalf("on the host: %v %+v", err, res)
				}
				return
			}
			var app *temporal.ApplicationError
			if !errors.As(err, &app) || app.Type() != ErrTypeNotHost || !app.NonRetryable() {
				t.Errorf("error %v, want a non-retryable %s", err, ErrTypeNotHost)
			}
		})
	}
}
