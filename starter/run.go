package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/todoflow/todoflow/testsuite/scenario"
	"github.com/todoflow/todoflow/worker/agentworker"
	"github.com/todoflow/todoflow/worker/devserver"
	"github.com/todoflow/todoflow/workflows"
)

// demo is the scenario `starter run` plays when no model is configured, so
// that the first command a user types shows a real run without an API key.
//
//go:embed demo.json
var demo []byte

func cmdRun(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var c conn
	c.flags(fs)
	scenarioFile := fs.String("scenario", "", "play the scenario `FILE` (scripted model and user actions)")
	asJSON := fs.Bool("json", false, "print the run's result as one JSON object")
	id := fs.String("id", "", "workflow `ID` of the run (default: generated)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	prompt := strings.TrimSpace(strings.Join(pos, " "))
	if *scenarioFile != "" && prompt != "" {
		return usageErr("give --scenario or a prompt, not both")
	}

	sc, err := chooseScenario(*scenarioFile, prompt)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	embedded := c.address == "" && os.Getenv("TEMPORAL_ADDRESS") == ""
	if embedded {
		srv, err := startEmbedded(ctx)
		if err != nil {
			return err
		}
		defer srv.Stop()
		c.address, c.namespace, c.local = srv.Address(), srv.Namespace(), true
	}
	cl, err := c.dialReady(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	if embedded {
		w, err := agentworker.New(cl, agentworker.Options{TaskQueue: c.taskQueue})
		if err != nil {
			return err
		}
		if err := w.Start(); err != nil {
			return fmt.Errorf("start the in-process worker: %w", err)
		}
		defer w.Stop()
	}

	out, playErr := scenario.Play(ctx, cl, sc, scenario.Options{TaskQueue: c.taskQueue, WorkflowID: *id, Progress: os.Stderr})
	if out == nil {
		return playErr
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return fmt.Errorf("write JSON: %w", err)
		}
	} else {
		fmt.Println(out.Reply)
	}
	switch {
	case playErr != nil:
		return playErr
	case out.RunStatus != workflows.StatusCompleted:
		return fmt.Errorf("run %s ended %s: %s", out.WorkflowID, out.RunStatus, out.Error)
	}
	// A one-shot run whose turn failed on the model completed (the session
	// survives such a turn), but the user asked for an answer and got none.
	var st workflows.State
	if json.Unmarshal(out.State, &st) == nil && st.ModelError != nil && !st.ModelError.Retryable {
		return fmt.Errorf("run %s: the model call failed: %s", out.WorkflowID, st.ModelError.Message)
	}
	return nil
}

// chooseScenario turns run's arguments into a scenario: the file given, a
// prompt for the configured model, or the shipped demo when no model is
// configured.
func chooseScenario(file, prompt string) (*scenario.Scenario, error) {
	if file != "" {
		sc, err := scenario.Load(file)
		if err != nil {
			return nil, &exitError{code: 2, err: err}
		}
		return sc, nil
	}
	if modelConfigured() {
		if prompt == "" {
			return nil, usageErr("give a prompt: starter run \"what to do\" (or --scenario FILE)")
		}
		// A real model may think for minutes; the scenario default of 60 s
		// is for scripted runs.
		sc := &scenario.Scenario{Name: "prompt", TimeLimitS: 3600}
		sc.Input.Prompt = prompt
		return sc, nil
	}
	dir, err := agentworker.StateDir()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "demo.json")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create the state folder: %w", err)
	}
	if err := os.WriteFile(path, demo, 0o644); err != nil {
		return nil, fmt.Errorf("write the demo scenario: %w", err)
	}
	if prompt != "" {
		fmt.Fprintln(os.Stderr, "todoflow: OPENAI_API_KEY is not set, so your prompt is not sent to a model; running the scripted demo instead.")
	} else {
		fmt.Fprintln(os.Stderr, "todoflow: OPENAI_API_KEY is not set: running the scripted demo scenario (no model needed).")
	}
	fmt.Fprintf(os.Stderr, "todoflow: set OPENAI_API_KEY (and OPENAI_BASE_URL for other servers) to run your own prompt; demo file: %s\n", path)
	sc, err := scenario.Load(path)
	if err != nil {
		return nil, err
	}
	return sc, nil
}

// modelConfigured reports whether the worker could reach a real model: an
// API key, or a base URL (a local server may need no key).
func modelConfigured() bool {
	return os.Getenv("OPENAI_API_KEY") != "" || os.Getenv("OPENAI_BASE_URL") != ""
}

func startEmbedded(ctx context.Context) (*devserver.Server, error) {
	fmt.Fprintln(os.Stderr, "todoflow: starting the embedded Temporal server")
	srv, err := devserver.Start(ctx, devserver.Options{
		SearchAttributes: workflows.SearchAttributes(),
		Progress:         os.Stderr,
	})
	if err != nil {
		return nil, fmt.Errorf("start the embedded Temporal server: %w", err)
	}
	if ui := srv.UIAddress(); ui != "" {
		fmt.Fprintf(os.Stderr, "todoflow: Temporal Web UI at http://%s (open while the run lasts)\n", ui)
	}
	return srv, nil
}
