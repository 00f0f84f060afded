package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/todoflow/todoflow/testsuite/scenario"
	"github.com/todoflow/todoflow/workflows"
)

func interruptible() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

func cmdStart(args []string) error {
	fs := flag.NewFlagSet("start", flag.ContinueOnError)
	var c conn
	c.flags(fs)
	id := fs.String("id", "", "workflow `ID` (default: todoflow-<uuid>)")
	scenarioFile := fs.String("scenario", "", "start the run of scenario `FILE` (its user actions are not played)")
	modelRef := fs.String("model", "", "model reference, e.g. openai:gpt-4o-mini (default: the worker's)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	prompt := strings.TrimSpace(strings.Join(pos, " "))
	var in workflows.AgentInput
	switch {
	case *scenarioFile != "" && prompt != "":
		return usageErr("give --scenario or a prompt, not both")
	case *scenarioFile != "":
		sc, err := scenario.Load(*scenarioFile)
		if err != nil {
			return &exitError{code: 2, err: err}
		}
		in = sc.RunInput()
	case prompt != "":
		in.Prompt = prompt
	default:
		return usageErr("give a prompt or --scenario FILE")
	}
	if *modelRef != "" {
		in.Model = *modelRef
	}
	if *id == "" {
		*id = "todoflow-" + uuid.NewString()
	}
	ctx, stop := interruptible()
	defer stop()
	cl, err := c.dialReady(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	run, err := cl.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: *id, TaskQueue: c.taskQueue}, workflows.WorkflowName, in)
	if err != nil {
		return fmt.Errorf("start run: %w", err)
	}
	fmt.Println(run.GetID())
	return nil
}

func cmdSend(args []string) error {
	rc := newRunCommand("send")
	updateID := rc.fs.String("update-id", "", "the update's id; a send repeated with the same id is answered once, with the first reply (`ID`, default a fresh one)")
	return rc.run(args, func(rest []string) error {
		if strings.TrimSpace(strings.Join(rest, " ")) == "" {
			return usageErr("missing the message: starter send ID TEXT")
		}
		return nil
	}, func(ctx context.Context, cl client.Client, id string, rest []string) error {
		var reply string
		if err := update(ctx, cl, id, workflows.SendMessageUpdate, strings.TrimSpace(strings.Join(rest, " ")), &reply, *updateID); err != nil {
			return fmt.Errorf("send to %s: %w", id, err)
		}
		fmt.Println(reply)
		return nil
	})
}

func queryState(ctx context.Context, cl client.Client, id string) (workflows.State, json.RawMessage, error) {
	v, err := cl.QueryWorkflow(ctx, id, "", workflows.StateQuery)
	if err != nil {
		return workflows.State{}, nil, fmt.Errorf("query state of %s: %w", id, err)
	}
	var raw json.RawMessage
	if err := v.Get(&raw); err != nil {
		return workflows.State{}, nil, fmt.Errorf("decode state of %s: %w", id, err)
	}
	var st workflows.State
	if err := json.Unmarshal(raw, &st); err != nil {
		return workflows.State{}, nil, fmt.Errorf("decode state of %s: %w", id, err)
	}
	return st, raw, nil
}

func cmdState(args []string) error {
	rc := newRunCommand("state")
	asJSON := rc.fs.Bool("json", false, "print the state query's JSON object")
	return rc.run(args, noMoreArgs("starter state ID [--json]"), func(ctx context.Context, cl client.Client, id string, _ []string) error {
		st, raw, err := queryState(ctx, cl, id)
		if err != nil {
			return err
		}
		if *asJSON {
			_, err := os.Stdout.Write(append(raw, '\n'))
			return err
		}
		printState(os.Stdout, id, st)
		return nil
	})
}

func cmdPlan(args []string) error {
	return newRunCommand("plan").run(args, noMoreArgs("starter plan ID"), func(ctx context.Context, cl client.Client, id string, _ []string) error {
		v, err := cl.QueryWorkflow(ctx, id, "", workflows.PlanQuery)
		if err != nil {
			return fmt.Errorf("query plan of %s: %w", id, err)
		}
		var text string
		if err := v.Get(&text); err != nil {
			return fmt.Errorf("decode plan of %s: %w", id, err)
		}
		st, _, err := queryState(ctx, cl, id)
		if err != nil {
			return err
		}
		fmt.Println(text)
		for _, note := range planNotes(id, st) {
			fmt.Println(note)
		}
		return nil
	})
}

func cmdWatch(args []string) error {
	rc := newRunCommand("watch")
	every := rc.fs.Duration("every", 500*time.Millisecond, "how often to look")
	return rc.run(args, noMoreArgs("starter watch ID"), func(ctx context.Context, cl client.Client, id string, _ []string) error {
		last := ""
		for {
			st, _, err := queryState(ctx, cl, id)
			if err != nil {
				return err
			}
			if view := agentTree(id, st); view != last {
				fmt.Printf("%s\n%s\n", time.Now().Format(time.TimeOnly), view)
				last = view
			}
			d, err := cl.DescribeWorkflowExecution(ctx, id, "")
			if err != nil {
				return fmt.Errorf("describe %s: %w", id, err)
			}
			if s := d.GetWorkflowExecutionInfo().GetStatus(); s != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
				fmt.Printf("run %s\n", strings.ToLower(strings.TrimPrefix(s.String(), "WORKFLOW_EXECUTION_STATUS_")))
				return nil
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(*every):
			}
		}
	})
}

func cmdHistory(args []string) error {
	rc := newRunCommand("history")
	output := rc.fs.String("output", "", "write to `FILE` instead of stdout")
	runID := rc.fs.String("run-id", "", "a specific run (default: the latest)")
	return rc.run(args, noMoreArgs("starter history ID [--output FILE]"), func(ctx context.Context, cl client.Client, id string, _ []string) error {
		data, n, err := scenario.History(ctx, cl, id, *runID)
		if err != nil {
			return err
		}
		if *output == "" {
			_, err = os.Stdout.Write(data)
			return err
		}
		if err := os.WriteFile(*output, data, 0o644); err != nil {
			return fmt.Errorf("write history: %w", err)
		}
		fmt.Fprintf(os.Stderr, "todoflow: %d events of %s written to %s\n", n, id, *output)
		return nil
	})
}
