// Command starter is the user's command line for todoflow: it runs an agent
// (on the embedded server, with an in-process worker, when no address is
// given), starts runs on a server, talks to running ones and exports their
// histories. Every command has an equivalent with the stock `temporal` CLI;
// the README shows both.
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
)

// exitError carries an exit code to main, and what main prints besides the error.
type exitError struct {
	code  int
	err   error
	usage bool // an argument error: the command's usage follows the error line
	help  bool // -h/--help: the command's usage on stdout, exit 0
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

// badInput is an exit-2 error about an input file rather than the command line: no usage
// follows it.
func badInput(err error) error {
	return &exitError{code: 2, err: err}
}

func main() {
	os.Exit(runCLI(os.Args[1:], os.Stdout, os.Stderr))
}

// runCLI runs the command named by args[0] and returns the exit code, printing errors,
// usages and help as the conventions of cli.go say.
func runCLI(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return 2
	}
	name := args[0]
	switch name {
	case "-h", "--help", "help":
		if len(args) > 1 && name == "help" {
			if cmd, ok := lookup(args[1]); ok {
				fmt.Fprint(stdout, newCmdline(cmd).usage())
				return 0
			}
		}
		fmt.Fprint(stdout, usage())
		return 0
	}
	cmd, ok := lookup(name)
	if !ok {
		fmt.Fprintf(stderr, "starter: unknown command %q\n%s", name, usage())
		return 2
	}
	c := newCmdline(cmd)
	err := cmd.run(c, args[1:])
	c.conn.finish()
	if err == nil {
		return 0
	}
	code := 1
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
		if ee.help {
			fmt.Fprint(stdout, c.usage())
			return code
		}
	}
	if ee == nil || ee.err != nil {
		fmt.Fprintf(stderr, "starter %s: %v\n", name, err)
	}
	if ee != nil && ee.usage {
		fmt.Fprint(stderr, c.usage())
	}
	return code
}
