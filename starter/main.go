// Command starter is the user's command line for todoflow: it runs an agent
// (on the embedded server, with an in-process worker, when no address is
// given), starts runs on a server, talks to running ones and exports their
// histories. Every command has an equivalent with the stock `temporal` CLI;
// the README shows both.
//
// Exit codes: 0 success (a run that completed), 1 a failed run or a command
// that could not be carried out, 2 bad arguments or a bad scenario file.
package main

import (
	"errors"
	"fmt"
	"os"
)

const usage = `usage: starter COMMAND [flags] [args]

commands:
  run [--address HOST:PORT] [--scenario FILE] [--json] [--id ID] [PROMPT]
                       run an agent to the end and print its reply (or JSON);
                       without an address, on an embedded server and worker
  start [--address HOST:PORT] [--id ID] [--model REF] (--scenario FILE | PROMPT)
                       start a run on a server and print its workflow id
  send ID [--update-id ID] TEXT
                       send a user message and print the reply
  retry ID             run again a turn that failed on the model (retry_turn)
  compact ID           summarise a session's older messages now (compact_context)
  state ID [--json]    show a run's agents, todo checklist and plan
  plan ID              show a run's plan checklist (and whether it awaits you)
  watch ID [--every DURATION]
                       follow a run's agents and progress until it ends
  approve ID [--feedback TEXT] [--agent AGENT]
                       approve the plan that waits for approval (any agent
                       of the tree; --agent picks one when several wait)
  reject ID --feedback TEXT [--agent AGENT]
                       reject the plan that waits for approval, saying why
  resume ID [--agent AGENT] [TEXT]
                       resume a paused agent of the run's tree (TEXT: what
                       changed, optional)
  end ID               end a chat session after its current turn (end_session)
  continuation ID on|off
                       switch todo continuation on or off
  history ID [--output FILE] [--run-id RUN]
                       export a run's history as JSON (for replay tests)

Common flags: --address (or TEMPORAL_ADDRESS), --namespace (or TEMPORAL_NAMESPACE),
--task-queue. Run "starter COMMAND -h" for a command's flags.
`

// exitError carries an exit code to main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func usageErr(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

// commands maps each command name to its function.
func commands() map[string]func([]string) error {
	return map[string]func([]string) error{
		"run":     cmdRun,
		"start":   cmdStart,
		"send":    cmdSend,
		"state":   cmdState,
		"plan":    cmdPlan,
		"watch":   cmdWatch,
		"history": cmdHistory,
		"approve": cmdApprove,
		"reject":  cmdReject,
		"resume":  cmdResume,
		"end":     cmdEnd,
		"retry":   cmdRetry,
		"compact": cmdCompact,

		"continuation": cmdContinuation,
	}
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	cmds := commands()
	name := os.Args[1]
	if name == "-h" || name == "--help" || name == "help" {
		fmt.Print(usage)
		return
	}
	cmd, ok := cmds[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "starter: unknown command %q (try: starter help)\n", name)
		os.Exit(2)
	}
	if err := cmd(os.Args[2:]); err != nil {
		code := 1
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
		if ee == nil || ee.err != nil {
			fmt.Fprintf(os.Stderr, "starter %s: %v\n", name, err)
		}
		os.Exit(code)
	}
}
