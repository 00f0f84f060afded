package activities

import (
	"errors"
	"testing"

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
