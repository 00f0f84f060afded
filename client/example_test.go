package client_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/todoflow/todoflow/api"

	sdkclient "go.temporal.io/sdk/client"

	"github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/todo"
	"github.com/todoflow/todoflow/worker/agentworker"
	"github.com/todoflow/todoflow/worker/devserver"
)

// A Go program that embeds todoflow: a Temporal dev server and a todoflow
// worker in this process (with a cluster, dial it instead and run workers
// beside it), then one session driven through the client. The model here is
// scripted, so that the example runs without an API key; with
// OPENAI_API_KEY set, leave Model empty and the worker's model answers.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// The server, and a Temporal client for it.
	srv, err := devserver.Start(ctx, devserver.Options{UIPort: -1, SearchAttributes: api.SearchAttributes()})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Stop()
	tc, err := sdkclient.Dial(sdkclient.Options{HostPort: srv.Address(), Namespace: srv.Namespace(), Logger: quiet{}})
	if err != nil {
		log.Fatal(err)
	}
	defer tc.Close()

	// A worker that serves scripted models from dir.
	dir, err := os.MkdirTemp("", "todoflow-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "model.json")
	if err := os.WriteFile(script, []byte(`{"model": [
	  {"tool_calls": [{"name": "write_todos", "arguments": {"todos": [
	    {"content": "Find the bug", "status": "completed"},
	    {"content": "Fix it", "status": "completed"}]}}]},
	  {"content": "Found and fixed."}
	]}`), 0o644); err != nil {
		log.Fatal(err)
	}
	w, err := agentworker.New(tc, agentworker.Options{ScriptDir: dir, StateDir: dir, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Start(); err != nil {
		log.Fatal(err)
	}
	defer w.Stop()

	// The session.
	c := client.New(tc, client.Options{})
	s, err := c.Start(ctx, api.AgentInput{Model: "script:" + script}, client.StartOptions{ID: "example"})
	if err != nil {
		log.Fatal(err)
	}
	reply, err := s.Send(ctx, "fix the bug").Reply(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(reply)
	st, err := s.State(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(todo.Checklist(st.Todos))
	if err := s.End(ctx); err != nil {
		log.Fatal(err)
	}
	res, err := s.Wait(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("turns:", res.Turns)
	// Output:
	// Found and fixed.
	// - [x] Find the bug
	// - [x] Fix it
	//
	// Done: 2/2
	// turns: 1
}

// quiet drops the SDK's logs.
type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}
