package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/todoflow/todoflow/chat"
	tfclient "github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/worker/agentworker"
	"github.com/todoflow/todoflow/worker/codec"
	"github.com/todoflow/todoflow/worker/devserver"
	"github.com/todoflow/todoflow/workflows"
)

// cmdChat is the terminal client (package chat). Without an address it
// talks to the server of the state database, where sessions outlive it:
// a running `worker --dev`, or the embedded server started on that
// database (on worker --dev's ports when they are free) with an
// in-process worker, both stopped when the client leaves.
func cmdChat(c *cmdline) action {
	id := c.fs.String("id", "", "the session's workflow `ID`: attach to it, or start it when there is none (default: a new chat-<uuid>)")
	c.fs.StringVarP(&c.workflowID, "workflow-id", "w", "", "the same as --id")
	modelRef := c.fs.String("model", "", "a new session's model `REF`erence, e.g. openai:gpt-4o-mini or script:FILE (default: the worker's)")
	return func(pos []string) error {
		if len(pos) > 0 {
			return c.usageErr("unexpected argument %q: starter chat [--id ID] [--model REF]", pos[0])
		}
		if c.fs.Changed("workflow-id") {
			if c.fs.Changed("id") && *id != c.workflowID {
				return c.usageErr("--id %q and --workflow-id %q: give the ID once", *id, c.workflowID)
			}
			*id = c.workflowID
		}
		c.id = *id
		return runChat(c, *id, *modelRef)
	}
}

// runChat is `starter chat` once its flags are read.
func runChat(c *cmdline, id, modelRef string) error {
	var dc converter.DataConverter
	var err error
	if sealer, err := codec.FromEnv(); err != nil {
		return err
	} else if sealer != nil {
		dc = sealer.DataConverter()
	}
	ctx, stop := interruptible()
	defer stop()
	var cl client.Client
	var notes []string
	if c.conn.address == "" && os.Getenv("TEMPORAL_ADDRESS") == "" {
		var shutdown func()
		if cl, notes, shutdown, err = chatServer(ctx, &c.conn, scriptDirOf(modelRef)); err != nil {
			return err
		}
		defer shutdown()
	} else if cl, err = c.conn.dialReady(ctx); err != nil {
		return err
	} else {
		defer cl.Close()
	}
	tc := tfclient.New(cl, tfclient.Options{TaskQueue: c.conn.taskQueue, DataConverter: dc})
	return chat.Run(ctx, chat.Options{Client: tc, ID: id, Model: modelRef, Notes: notes})
}

// chatServer connects to the server of the state database: `worker --dev`'s
// when it runs (it holds the database), else the embedded server started
// here on it, served by an in-process worker.
func chatServer(ctx context.Context, c *conn, scriptDir string) (cl client.Client, notes []string, shutdown func(), err error) {
	db, err := agentworker.ServerDB()
	if err != nil {
		return nil, nil, nil, err
	}
	fmt.Fprintf(os.Stderr, "todoflow: starting the embedded Temporal server (database %s)\n", db)
	opts := devserver.Options{Port: 7233, UIPort: 8233, DBFile: db, SearchAttributes: workflows.SearchAttributes(), Progress: os.Stderr}
	srv, err := devserver.Start(ctx, opts)
	if errors.Is(err, devserver.ErrPortInUse) {
		opts.Port, opts.UIPort = 0, 0
		srv, err = devserver.Start(ctx, opts)
	}
	if errors.Is(err, devserver.ErrDBInUse) {
		// Most likely `worker --dev`, which serves the database on 7233.
		c.address = client.DefaultHostPort
		if cl, err = c.dialReady(ctx); err != nil {
			return nil, nil, nil, fmt.Errorf("%s is in use by another process, and no `worker --dev` answers on %s (%w); "+
				"stop the other `starter run` or `starter chat`, or give --address", db, client.DefaultHostPort, err)
		}
		return cl, []string{"Using the `worker --dev` server on " + client.DefaultHostPort + "."}, cl.Close, nil
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("start the embedded Temporal server: %w", err)
	}
	var undo []func()
	shutdown = func() {
		for _, f := range slices.Backward(undo) {
			f()
		}
	}
	undo = append(undo, func() { _ = srv.Stop() })
	c.address, c.namespace, c.local = srv.Address(), srv.Namespace(), true
	if cl, err = c.dialReady(ctx); err != nil {
		shutdown()
		return nil, nil, nil, err
	}
	undo = append(undo, cl.Close)
	w, err := agentworker.New(cl, agentworker.Options{TaskQueue: c.taskQueue, ScriptDir: scriptDir})
	if err == nil {
		err = w.Start()
	}
	if err != nil {
		shutdown()
		return nil, nil, nil, fmt.Errorf("start the in-process worker: %w", err)
	}
	undo = append(undo, w.Stop)
	notes = []string{fmt.Sprintf("Embedded server at %s (Web UI http://%s) with a worker, until this client leaves; "+
		"`go run ./worker --dev` keeps sessions working without it.", srv.Address(), srv.UIAddress())}
	return cl, notes, shutdown, nil
}

// scriptDirOf is the folder of a script: model's scenario file, which the
// in-process worker serves script: models from; "" for any other model.
func scriptDirOf(ref string) string {
	path, ok := strings.CutPrefix(ref, "script:")
	if !ok || path == "" {
		return ""
	}
	if i := strings.LastIndex(path, "#"); i >= 0 {
		path = path[:i]
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	return filepath.Dir(abs)
}
