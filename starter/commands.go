package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/todoflow/todoflow/api"

	tfclient "github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/scenario"
)

func cmdStart(c *cmdline) action {
	newID := c.newRunID()
	scenarioFile := c.fs.String("scenario", "", "start the run of scenario `FILE` (its user actions are not played)")
	modelRef := c.fs.String("model", "", "model `REF`erence, e.g. openai:gpt-4o-mini (default: the worker's)")
	return func(pos []string) error {
		id, err := newID()
		if err != nil {
			return err
		}
		prompt := strings.TrimSpace(strings.Join(pos, " "))
		var in api.AgentInput
		switch {
		case *scenarioFile != "" && prompt != "":
			return c.usageErr("give --scenario or a prompt, not both")
		case *scenarioFile != "":
			sc, err := scenario.Load(*scenarioFile)
			if err != nil {
				return badInput(err)
			}
			in = sc.RunInput()
		case prompt != "":
			in.Prompt = prompt
		default:
			return c.usageErr("give a prompt or --scenario FILE")
		}
		if *modelRef != "" {
			in.Model = *modelRef
		}
		ctx, stop := interruptible()
		defer stop()
		cl, err := c.conn.dialReady(ctx)
		if err != nil {
			return err
		}
		defer cl.Close()
		s, err := c.conn.client(cl).Start(ctx, in, tfclient.StartOptions{ID: id})
		if err != nil {
			return fmt.Errorf("start run: %w", err)
		}
		printText(s.ID())
		return nil
	}
}

func cmdSend(c *cmdline) action {
	updateID := c.fs.String("update-id", "", "the update's `ID`; a send repeated with the same one is answered once, with the first reply (default: a fresh one)")
	return c.forRun(func(rest []string) error {
		if strings.TrimSpace(strings.Join(rest, " ")) == "" {
			return c.usageErr("missing the message: starter %s", c.cmd.use)
		}
		return nil
	}, func(ctx context.Context, s *tfclient.Session, rest []string) error {
		reply, err := s.SendWithID(ctx, *updateID, strings.TrimSpace(strings.Join(rest, " "))).Reply(ctx)
		if err != nil {
			return fmt.Errorf("send to %s: %w", s.ID(), err)
		}
		printText(reply)
		return nil
	})
}

// queryState reads the state query's answer, decoded and as the workflow wrote it.
func queryState(ctx context.Context, s *tfclient.Session) (api.State, json.RawMessage, error) {
	raw, err := s.RawState(ctx)
	if err != nil {
		return api.State{}, nil, err
	}
	var st api.State
	if err := json.Unmarshal(raw, &st); err != nil {
		return api.State{}, nil, fmt.Errorf("decode state of %s: %w", s.ID(), err)
	}
	return st, raw, nil
}

func cmdState(c *cmdline) action {
	format := c.output("print the state query's JSON object")
	var asJSON bool
	check := func([]string) (err error) {
		asJSON, err = format()
		return err
	}
	return c.forRun(check, func(ctx context.Context, s *tfclient.Session, _ []string) error {
		// A run whose workflow task fails answers no query; the failure says why, and what
		// to run when the worker's protocol is not the run's.
		if why, err := s.Blocked(ctx); err != nil {
			return err
		} else if why != "" {
			return fmt.Errorf("session %s is blocked: no worker can run it: %s", s.ID(), why)
		}
		st, raw, err := queryState(ctx, s)
		if err != nil {
			return err
		}
		if asJSON {
			_, err := os.Stdout.Write(append(raw, '\n'))
			return err
		}
		printState(os.Stdout, s.ID(), st)
		if st.Status == api.StatusFailed {
			// The state says failed; why is in the run's result.
			if why, err := s.Failure(ctx); err == nil && why != "" {
				printText("Failed: " + why)
			}
		}
		return nil
	})
}

func cmdPlan(c *cmdline) action {
	return c.forRun(nil, func(ctx context.Context, s *tfclient.Session, _ []string) error {
		text, err := s.Plan(ctx)
		if err != nil {
			return err
		}
		st, err := s.State(ctx)
		if err != nil {
			return err
		}
		printText(text)
		for _, note := range planNotes(s.ID(), st) {
			printText(note)
		}
		return nil
	})
}

func cmdWatch(c *cmdline) action {
	every := c.fs.Duration("every", 500*time.Millisecond, "how often to look (a `DURATION`: 500ms, 2s)")
	return c.forRun(nil, func(ctx context.Context, s *tfclient.Session, _ []string) error {
		last, ended := "", ""
		for ev := range s.Watch(ctx, *every) {
			switch ev := ev.(type) {
			case tfclient.StateChanged:
				if view := agentTree(s.ID(), ev.State); view != last {
					printText(time.Now().Format(time.TimeOnly) + "\n" + view)
					last = view
				}
			case tfclient.Closed:
				ended = ev.Status
			case tfclient.Problem:
				// A passing fault (a server restarting, no worker answering yet) is
				// shown and watched through (Watch reports each one once); a session
				// that is not there is the end.
				if errors.Is(ev.Err, tfclient.ErrNoSession) {
					return ev.Err
				}
				if ev.Err != nil {
					fmt.Fprintf(os.Stderr, "starter: %v (still watching)\n", ev.Err)
				}
			}
		}
		if ended != "" {
			fmt.Printf("run %s\n", ended)
		}
		return nil
	})
}

// cmdHistory exports a history. It is JSON whatever -o says, the format of `temporal
// workflow show -o json` that replay tests read; --output-file writes it to a file. Before
// -o was every command's output format, --output named that file, and a value of --output
// that is not a format still does.
func cmdHistory(c *cmdline) action {
	output := c.fs.StringP("output", "o", "json", "output `FORMAT`: json, the only one (a file name here is --output-file, as it was)")
	_ = c.complete("output", "json")
	file := c.fs.String("output-file", "", "write to `FILE` instead of stdout")
	runID := c.fs.String("run-id", "", "a specific `RUN` (default: the latest)")
	check := func([]string) error {
		switch {
		case *output == "text":
			return c.usageErr("a history is exported as JSON: --output json, or --output-file FILE")
		case *output == "json":
		case *file != "":
			return c.usageErr("--output %q and --output-file %q: give the file once, with --output-file", *output, *file)
		default:
			*file = *output
		}
		return nil
	}
	return c.forRun(check, func(ctx context.Context, s *tfclient.Session, _ []string) error {
		data, n, err := s.History(ctx, *runID)
		if err != nil {
			return err
		}
		if *file == "" {
			_, err = os.Stdout.Write(data)
			return err
		}
		if err := os.WriteFile(*file, data, 0o644); err != nil {
			return fmt.Errorf("write history: %w", err)
		}
		fmt.Fprintf(os.Stderr, "todoflow: %d events of %s written to %s\n", n, s.ID(), *file)
		return nil
	})
}
