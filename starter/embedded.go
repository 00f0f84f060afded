package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"

	"github.com/todoflow/todoflow/api"

	"github.com/todoflow/todoflow/worker/agentworker"
	"github.com/todoflow/todoflow/worker/devserver"
)

// devUI is the Web UI of `worker --dev`, which serves the state database afterwards.
const devUI = "http://localhost:8233"

// embedded is the server `starter run` brings up when no address is given: the dev server
// on free ports (so that it never collides with a `worker --dev`), on the state database
// that `worker --dev` uses, so that the run can be looked at afterwards.
type embedded struct {
	srv *devserver.Server
	// db is the persistent database the run is kept in; "" when it went to a temporary one
	// because another process used the persistent one.
	db string
}

// startEmbedded starts the embedded server. Two servers on one SQLite file would corrupt
// it, so when another process (a `worker --dev`, another `starter run`) has the file, the
// run goes to a private temporary database instead, said in one line on notes.
func startEmbedded(ctx context.Context, notes io.Writer) (*embedded, error) {
	db, err := agentworker.ServerDB()
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(notes, "todoflow: starting the embedded Temporal server")
	opts := devserver.Options{DBFile: db, SearchAttributes: api.SearchAttributes(), Progress: notes}
	srv, err := devserver.Start(ctx, opts)
	if errors.Is(err, devserver.ErrDBInUse) {
		fmt.Fprintf(notes, "todoflow: %s is in use by another process (a `worker --dev`, another `starter run`), so this run goes to a temporary database "+
			"and is gone when it ends (--address localhost:7233 runs it on a `worker --dev` instead)\n", db)
		opts.DBFile, db = "", ""
		srv, err = devserver.Start(ctx, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("start the embedded Temporal server: %w", err)
	}
	return &embedded{srv: srv, db: db}, nil
}

// runURL is a run's page in the Web UI at base ("http://host:port").
func runURL(base, namespace, workflowID string) string {
	return fmt.Sprintf("%s/namespaces/%s/workflows/%s", base, url.PathEscape(namespace), url.PathEscape(workflowID))
}

// liveURL is the run's page on this server's own Web UI, "" when it has none.
func (e *embedded) liveURL(workflowID string) string {
	if e.srv.UIAddress() == "" {
		return ""
	}
	return runURL("http://"+e.srv.UIAddress(), e.srv.Namespace(), workflowID)
}

// afterwards says how to see the run once this process has ended.
func (e *embedded) afterwards(workflowID string) string {
	if e.db == "" {
		return "todoflow: the run was kept in a temporary database; `starter run --ui` keeps the server up to look at it"
	}
	return fmt.Sprintf("todoflow: see it in the Web UI: go run ./worker --dev, then open %s (the run is kept in %s)",
		runURL(devUI, e.srv.Namespace(), workflowID), e.db)
}
