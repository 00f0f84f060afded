package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/todoflow/todoflow/workflows"
)

// The commands that steer a running agent: approve and reject (the
// approve_plan update), resume (the resume signal) and continuation (the
// set_continuation update).

func cmdApprove(args []string) error {
	return approval(args, true)
}

func cmdReject(args []string) error {
	return approval(args, false)
}

// approval answers a plan that waits for approval (startPlan with
// plan_approval "required").
func approval(args []string, approve bool) error {
	name, shape := "approve", "starter approve ID [--feedback TEXT]"
	if !approve {
		name, shape = "reject", `starter reject ID --feedback TEXT`
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	var c conn
	c.flags(fs)
	help := "a note for the agent with the approval"
	if !approve {
		help = "why the plan is rejected, for the agent (required)"
	}
	feedback := fs.String("feedback", "", help+" (`TEXT`)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	id, rest, err := workflowID(pos, name)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageErr("unexpected argument %q: %s (quote a feedback of several words)", rest[0], shape)
	}
	if !approve && strings.TrimSpace(*feedback) == "" {
		return usageErr("missing the feedback: %s", shape)
	}
	ctx, stop := interruptible()
	defer stop()
	cl, err := c.dial(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	var answer string
	err = update(ctx, cl, id, workflows.ApprovePlanUpdate, workflows.ApprovalArgs{Approved: &approve, Feedback: *feedback}, &answer)
	if err != nil {
		return fmt.Errorf("%s: %w", id, err)
	}
	if answer == "" {
		answer = map[bool]string{true: "approved", false: "rejected"}[approve]
	}
	fmt.Println(answer)
	return nil
}

func cmdResume(args []string) error {
	fs := flag.NewFlagSet("resume", flag.ContinueOnError)
	var c conn
	c.flags(fs)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	id, rest, err := workflowID(pos, "resume")
	if err != nil {
		return err
	}
	text := strings.TrimSpace(strings.Join(rest, " "))
	ctx, stop := interruptible()
	defer stop()
	cl, err := c.dial(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	st, _, err := queryState(ctx, cl, id)
	if err != nil {
		return err
	}
	if !st.Paused {
		// The workflow would ignore the signal: say so instead of sending it.
		return fmt.Errorf("%s is not paused (status %s); nothing to resume", id, st.Status)
	}
	if err := cl.SignalWorkflow(ctx, id, "", workflows.ResumeSignal, text); err != nil {
		return fmt.Errorf("%s: %w", id, refusal(err))
	}
	fmt.Println("resumed")
	return nil
}

func cmdContinuation(args []string) error {
	fs := flag.NewFlagSet("continuation", flag.ContinueOnError)
	var c conn
	c.flags(fs)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	id, rest, err := workflowID(pos, "continuation")
	if err != nil {
		return err
	}
	enabled, err := onOff(rest)
	if err != nil {
		return err
	}
	ctx, stop := interruptible()
	defer stop()
	cl, err := c.dial(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	var now bool
	err = update(ctx, cl, id, workflows.SetContinuationUpdate, workflows.ContinuationArgs{Enabled: &enabled}, &now)
	if err != nil {
		return fmt.Errorf("%s: %w", id, err)
	}
	fmt.Printf("continuation %s\n", map[bool]string{true: "on", false: "off"}[now])
	return nil
}

// onOff reads continuation's on|off argument.
func onOff(rest []string) (bool, error) {
	const shape = "starter continuation ID on|off"
	switch {
	case len(rest) == 0:
		return false, usageErr("missing on or off: %s", shape)
	case len(rest) > 1:
		return false, usageErr("unexpected argument %q: %s", rest[1], shape)
	}
	switch strings.ToLower(rest[0]) {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, usageErr("continuation is on or off, not %q: %s", rest[0], shape)
}

// update runs an update to completion and decodes its result into out. A
// validator's rejection comes back from UpdateWorkflow or, with this SDK and
// server, from the handle's Get; either way it is returned as the workflow's
// message alone.
func update(ctx context.Context, cl client.Client, id, name string, arg, out any) error {
	h, err := cl.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   id,
		UpdateName:   name,
		Args:         []any{arg},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return refusal(err)
	}
	if err := h.Get(ctx, out); err != nil {
		return refusal(err)
	}
	return nil
}

// refusal turns an error the workflow returned (a validator's or a
// handler's) into its message alone, without the SDK's "(type: …,
// retryable: …)" suffix; other errors are kept as they are.
func refusal(err error) error {
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) && ae.Message() != "" {
		return errors.New(ae.Message())
	}
	return err
}

// noMoreArgs refuses positional arguments a command does not take.
func noMoreArgs(rest []string, shape string) error {
	if len(rest) > 0 {
		return usageErr("unexpected argument %q: %s", rest[0], shape)
	}
	return nil
}
