package agentworker_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/todoflow/todoflow/worker/agentworker"
)

func TestHostQueue(t *testing.T) {
	t.Setenv(agentworker.EnvHostQueue, "")
	cases := []struct {
		name    string
		env     string
		file    string // the state folder's host-queue file; "" for none
		given   string
		want    string // "new": a new name, kept in the file
		wantErr string
	}{
		{name: "given", given: "gpu-box", file: "kept", want: "gpu-box"},
		{name: "from the environment", env: "from-env", file: "kept", want: "from-env"},
		{name: "given beats the environment", given: "gpu-box", env: "from-env", want: "gpu-box"},
		{name: "kept", file: "todoflow-host-a-12345678\n", want: "todoflow-host-a-12345678"},
		{name: "new", want: "new"},
		{name: "bad given", given: "gpu box", wantErr: `the host queue "gpu box": a host queue has no spaces`},
		{name: "bad environment", env: "a\tb", wantErr: agentworker.EnvHostQueue + ` "a\tb": a host queue has no spaces`},
		{name: "bad file", file: "two words", wantErr: "host queue in STATE/host-queue \"two words\": a host queue has no spaces or control characters (write a valid name there, or remove the file"},
		{name: "empty file", file: "\n", wantErr: "host queue in STATE/host-queue is empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(agentworker.EnvHostQueue, tc.env)
			dir := filepath.Join(t.TempDir(), "state")
			if tc.file != "" {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, agentworker.HostQueueFile), []byte(tc.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := agentworker.HostQueue(dir, tc.given)
			if tc.wantErr != "" {
				want := strings.ReplaceAll(tc.wantErr, "STATE", dir)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("HostQueue = %q, %v; want an error containing %q", got, err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != "new" {
				if got != tc.want {
					t.Errorf("HostQueue = %q, want %q", got, tc.want)
				}
				return
			}
			host, _ := os.Hostname()
			if !strings.HasPrefix(got, "todoflow-host-") || (host != "" && !strings.Contains(got, host)) {
				t.Errorf("new host queue %q: want todoflow-host-<hostname>-<digits>", got)
			}
			// Kept: the next worker of the folder polls the same queue,
			// another folder gets another.
			if again, err := agentworker.HostQueue(dir, ""); err != nil || again != got {
				t.Errorf("HostQueue again = %q, %v; want %q", again, err, got)
			}
			if other, err := agentworker.HostQueue(t.TempDir(), ""); err != nil || other == got {
				t.Errorf("another state folder's host queue = %q, %v; want another name", other, err)
			}
		})
	}
}

// Workers starting together on one state folder agree on its name.
func TestHostQueueConcurrentStart(t *testing.T) {
	t.Setenv(agentworker.EnvHostQueue, "")
	dir := t.TempDir()
	names := make([]string, 8)
	errs := make([]error, 8)
	var wg sync.WaitGroup
	for i := range names {
		wg.Go(func() { names[i], errs[i] = agentworker.HostQueue(dir, "") })
	}
	wg.Wait()
	for i := range names {
		if errs[i] != nil || names[i] != names[0] {
			t.Errorf("worker %d: %q, %v; worker 0: %q", i, names[i], errs[i], names[0])
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the state folder holds %d files, want the host-queue file alone", len(entries))
	}
}

// A host queue that is the shared task queue would send tool calls to any
// worker: New refuses it.
func TestNewRefusesTheSharedQueueAsHostQueue(t *testing.T) {
	c, err := client.NewLazyClient(client.Options{HostPort: client.DefaultHostPort})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = agentworker.New(c, agentworker.Options{StateDir: t.TempDir(), TaskQueue: "todoflow", HostQueue: "todoflow"})
	if err == nil || !strings.Contains(err.Error(), `the host queue is "todoflow", the shared task queue`) {
		t.Errorf("New = %v", err)
	}
}
