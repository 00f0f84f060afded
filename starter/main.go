// Command starter is the user's command line for todoflow: it runs an agent
// (on the embedded server, with an in-process worker, when no address is
// given), starts runs on a server, talks to running ones and exports their
// histories. Every command has an equivalent with the stock `temporal` CLI;
// docs/operations.md shows both.
//
// Exit codes: 0 success (a run that completed), 1 a failed run or a command
// that could not be carried out, 2 bad arguments or a bad scenario file. The
// command line's conventions (the temporal CLI's) are described in cli.go.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/todoflow/todoflow/internal/termtext"
)

// exitError carries an exit code to main, and what main prints besides the error.
type exitError struct {
	code  int
	err   error
	usage bool // an argument error: the command's usage follows the error line
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

// badInput is an exit-2 error that no usage follows: a bad input file, or an argument
// whose fault the command line's shape does not show.
func badInput(err error) error {
	return &exitError{code: 2, err: err}
}

func main() {
	os.Exit(runCLI(os.Args[1:], os.Stdout, os.Stderr))
}

// runCLI runs the command that args name and returns the exit code, printing errors,
// usages and help as the conventions of cli.go say.
func runCLI(args []string, stdout, stderr io.Writer) int {
	x := newCLI(stdout, stderr)
	if len(args) == 0 {
		fmt.Fprint(stderr, x.root.UsageString()) // a bad command line, as before cobra had it
		return 2
	}
	// Never nil: cobra would read os.Args then.
	x.root.SetArgs(append([]string{}, x.longFlags(args)...))
	cmd, err := x.root.ExecuteC()
	if err == nil {
		return 0
	}
	ee := asExitError(err)
	if ee.err != nil {
		// An error may quote a model, a tool or the workflow (a refusal, a failed
		// turn): printed as text, cleaned (print.go).
		fmt.Fprintf(stderr, "%s: %s\n", cmd.CommandPath(), termtext.Clean(ee.err.Error()))
	}
	if ee.usage {
		fmt.Fprint(stderr, cmd.UsageString())
	}
	return ee.code
}

// asExitError is err with its exit code: cobra's own refusals (a flag, an argument count,
// an unknown command) are argument errors, exit code 2 with the command's usage.
func asExitError(err error) *exitError {
	if ee, ok := errors.AsType[*exitError](err); ok {
		return ee
	}
	return &exitError{code: 2, err: err, usage: true}
}
