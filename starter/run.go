package main

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/client"

	"github.com/todoflow/todoflow/scenario"
	"github.com/todoflow/todoflow/worker/agentworker"
	"github.com/todoflow/todoflow/worker/devserver"
)

// demo is the scenario `starter run` plays when no model is configured, so
// that the first command a user types shows a real run without an API key.
//
//go:embed demo.json
var demo []byte

func cmdRun(c *cmdline) action {
	scenarioFile := c.fs.String("scenario", "", "play the scenario `FILE` (scripted model and user actions)")
	format := c.output("print the run's result as one JSON object")
	newID := c.newRunID()
	ui := c.fs.Bool("ui", false, "keep the embedded server and its Web UI up after the run, until Ctrl+C")
	return func(pos []string) error {
		asJSON, err := format()
		if err != nil {
			return err
		}
		id, err := newID()
		if err != nil {
			return err
		}
		return runAgent(c, id, *scenarioFile, asJSON, *ui, pos)
	}
}

// runAgent is `starter run` once its flags are read.
func runAgent(c *cmdline, id, scenarioFile string, asJSON, ui bool, pos []string) error {
	prompt := strings.TrimSpace(strings.Join(pos, " "))
	if scenarioFile != "" && prompt != "" {
		return c.usageErr("give --scenario or a prompt, not both")
	}
	local := c.conn.address == "" && os.Getenv("TEMPORAL_ADDRESS") == ""
	if ui && !local {
		return c.usageErr("--ui keeps the embedded server up; with --address or TEMPORAL_ADDRESS, open that server's Web UI")
	}
	// A scenario file, or the demo when no model is configured, is played by the scenario
	// player; a prompt is a plain run of the workflow.
	var sc *scenario.Scenario
	var err error
	switch {
	case scenarioFile != "":
		if sc, err = scenario.Load(scenarioFile); err != nil {
			return badInput(err)
		}
	case !modelConfigured():
		if sc, err = demoScenario(prompt); err != nil {
			return err
		}
	case prompt == "":
		return c.usageErr("give a prompt: starter run \"what to do\" (or --scenario FILE)")
	}

	ctx, stop := interruptible()
	defer stop()
	// The in-process worker plays the scenario's file, and no other: it
	// serves script: models from that file's folder only.
	scriptDir := ""
	if sc != nil {
		scriptDir = filepath.Dir(sc.Path)
	}
	cl, emb, shutdown, err := serve(ctx, &c.conn, local, scriptDir)
	if err != nil {
		return err
	}
	defer shutdown()
	if emb != nil {
		if u := emb.liveURL(id); u != "" {
			fmt.Fprintf(os.Stderr, "todoflow: follow it in the Web UI: %s\n", u)
		}
	}

	var out *runOutput
	var runErr error
	if sc != nil {
		o, err := scenario.Play(ctx, cl, sc, scenario.Options{TaskQueue: c.conn.taskQueue, WorkflowID: id, Progress: cleanWriter{os.Stderr}})
		if o != nil {
			out = (*runOutput)(o)
		}
		runErr = err
	} else {
		p := &promptRun{c: c.conn.client(cl), id: id, progress: os.Stderr}
		if emb != nil {
			p.server = c.conn.address
		}
		out, runErr = p.run(ctx, api.AgentInput{Prompt: prompt})
	}
	if out == nil {
		if ctx.Err() != nil {
			return interrupted(id, emb)
		}
		return runErr
	}
	if err := out.print(os.Stdout, asJSON); err != nil {
		return err
	}
	if emb != nil {
		if ui && ctx.Err() == nil {
			fmt.Fprintf(os.Stderr, "todoflow: the Web UI stays up: %s (Ctrl+C stops the server)\n", emb.liveURL(out.WorkflowID))
			<-ctx.Done()
		}
		fmt.Fprintln(os.Stderr, emb.afterwards(out.WorkflowID))
	}
	if runErr != nil {
		return runErr
	}
	return out.outcome()
}

// serve connects to the server a run goes to. Locally (no address given) that is the
// embedded server, served by an in-process worker, which serves script: models from
// scriptDir when it is set; shutdown stops what serve started.
func serve(ctx context.Context, c *conn, local bool, scriptDir string) (cl client.Client, emb *embedded, shutdown func(), err error) {
	if !local {
		if cl, err = c.dialReady(ctx); err != nil {
			return nil, nil, nil, err
		}
		return cl, nil, cl.Close, nil
	}
	if emb, err = startEmbedded(ctx, os.Stderr); err != nil {
		return nil, nil, nil, err
	}
	if cl, shutdown, err = c.serveLocal(ctx, emb.srv, agentworker.Options{TaskQueue: c.taskQueue, ScriptDir: scriptDir}); err != nil {
		return nil, nil, nil, err
	}
	return cl, emb, shutdown, nil
}

// serveLocal connects to srv, a server this process started, and serves it with an
// in-process worker of opts; shutdown stops the worker, the connection and srv. On an
// error it stops srv.
func (c *conn) serveLocal(ctx context.Context, srv *devserver.Server, opts agentworker.Options) (cl client.Client, shutdown func(), err error) {
	c.address, c.namespace, c.local = srv.Address(), srv.Namespace(), true
	if cl, err = c.dialReady(ctx); err != nil {
		_ = srv.Stop()
		return nil, nil, err
	}
	w, err := agentworker.New(cl, opts)
	if err == nil {
		err = w.Start()
	}
	if err != nil {
		cl.Close()
		_ = srv.Stop()
		return nil, nil, fmt.Errorf("start the in-process worker: %w", err)
	}
	return cl, func() { w.Stop(); cl.Close(); _ = srv.Stop() }, nil
}

// interrupted is run's error when the user stopped it before the run ended: a plain run
// stays where it stood, on its server, and goes on when a worker serves it again.
func interrupted(id string, emb *embedded) error {
	switch {
	case emb == nil:
		return fmt.Errorf("interrupted; run %s goes on on its server (starter state %s)", id, id)
	case emb.db != "":
		return fmt.Errorf("interrupted; run %s is kept in %s and goes on under `go run ./worker --dev` (then starter state %s)", id, emb.db, id)
	}
	return fmt.Errorf("interrupted; run %s was in a temporary database and is gone", id)
}

// demoScenario writes the shipped demo into the state folder (the scripted model reads
// its file there) and loads it, saying why a prompt given is not what runs.
func demoScenario(prompt string) (*scenario.Scenario, error) {
	path, err := writeDemo("demo.json", "the demo scenario", demo)
	if err != nil {
		return nil, err
	}
	if prompt != "" {
		fmt.Fprintln(os.Stderr, "todoflow: OPENAI_API_KEY is not set, so your prompt is not sent to a model; running the scripted demo instead.")
	} else {
		fmt.Fprintln(os.Stderr, "todoflow: OPENAI_API_KEY is not set: running the scripted demo scenario (no model needed).")
	}
	fmt.Fprintf(os.Stderr, "todoflow: set OPENAI_API_KEY (and OPENAI_BASE_URL for other servers) to run your own prompt; demo file: %s\n", path)
	return scenario.Load(path)
}

// writeDemo writes data, what (named so in errors), as name in the state folder's demo/,
// and returns its path. A folder of its own: the worker serves script: models from the
// demo's folder, which must hold nothing a run wrote.
func writeDemo(name, what string, data []byte) (string, error) {
	dir, err := agentworker.StateDir()
	if err != nil {
		return "", err
	}
	dir = filepath.Join(dir, "demo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create the demo's folder: %w", err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return "", fmt.Errorf("write %s: %w", what, err)
	}
	return path, nil
}

// modelConfigured reports whether the worker could reach a real model: an
// API key, or a base URL (a local server may need no key).
func modelConfigured() bool {
	return os.Getenv("OPENAI_API_KEY") != "" || os.Getenv("OPENAI_BASE_URL") != ""
}
