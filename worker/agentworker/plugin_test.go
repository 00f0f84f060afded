package agentworker_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	sdkclient "go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/worker/agentworker"
	"github.com/todoflow/todoflow/worker/devserver"
)

// The plugin on a worker that someone else builds: a plain worker.New with
// worker.Options.Plugins runs a session's turn, whose tool call goes to the
// plugin's host queue.
func TestPluginOnAPlainWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test against a real Temporal server; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := devserver.Start(ctx, devserver.Options{UIPort: -1, SearchAttributes: api.SearchAttributes()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	logger := sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))
	c, err := sdkclient.Dial(sdkclient.Options{HostPort: srv.Address(), Namespace: srv.Namespace(), Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	dir := t.TempDir()
	script := filepath.Join(dir, "model.json")
	if err := os.WriteFile(script, []byte(`{"model": [
	  {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": "fixed"}}]},
	  {"content": "Found and fixed."}
	]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := agentworker.NewPlugin(c, agentworker.Options{ScriptDir: dir, StateDir: dir, HostQueue: "my-host", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	w := worker.New(c, "my-queue", worker.Options{Plugins: []worker.Plugin{p}})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	s, err := client.New(c, client.Options{TaskQueue: "my-queue"}).Start(ctx, api.AgentInput{Model: "script:" + script}, client.StartOptions{ID: "plugin"})
	if err != nil {
		t.Fatal(err)
	}
	reply, err := s.Send(ctx, "fix the bug").Reply(ctx)
	if err != nil || reply != "Found and fixed." {
		t.Fatalf("reply %q, %v; want %q", reply, err, "Found and fixed.")
	}
	st, err := s.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "sessions", st.Session, "notes.txt")); err != nil || string(got) != "fixed" {
		t.Errorf("the tool's file: %q, %v; want %q", got, err, "fixed")
	}

}
