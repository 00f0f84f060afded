package testsuite

import (
	"context"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/client"

	"github.com/todoflow/todoflow/worker/agentworker"
	"github.com/todoflow/todoflow/worker/devserver"
)

// server is a dev server of the test's own, on free ports with a fresh
// database, never a server that happens to be running.
type server struct {
	srv *devserver.Server
	c   client.Client
}

func startServer(t *testing.T) *server { return startServerTB(t) }

// startServerTB starts a server for any test or benchmark; dynamic adds
// server settings ("key=value", see devserver.Options.DynamicConfig).
func startServerTB(t testing.TB, dynamic ...string) *server {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test against a real Temporal server; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute) // includes a cold build
	defer cancel()
	srv, err := devserver.Start(ctx, devserver.Options{UIPort: -1, SearchAttributes: api.SearchAttributes(), Progress: testWriter{t}, DynamicConfig: dynamic})
	if err != nil {
		t.Fatalf("start dev server: %v", err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	c, err := client.Dial(client.Options{HostPort: srv.Address(), Namespace: srv.Namespace(), Logger: quiet{}})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(c.Close)
	if err := devserver.EnsureSearchAttributes(ctx, c, srv.Namespace(), api.SearchAttributes()); err != nil {
		t.Fatal(err)
	}
	return &server{srv: srv, c: c}
}

// startWorker runs a worker like the worker binary does, with its state in
// a temporary folder; it is stopped when the test ends (or earlier by the
// returned function).
func (s *server) startWorker(t *testing.T, stateDir string) (stop func()) {
	return s.startWorkerTB(t, stateDir)
}

func (s *server) startWorkerTB(t testing.TB, stateDir string) (stop func()) {
	t.Helper()
	w, err := agentworker.New(s.c, agentworker.Options{ScriptDir: "/", StateDir: stateDir})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatalf("start worker: %v", err)
	}
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			w.Stop()
		}
	}
	t.Cleanup(stop)
	return stop
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

// quiet drops the SDK's logs; failures reach the test through errors.
type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}
