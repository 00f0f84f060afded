package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestArgumentErrors checks that every command refuses bad arguments with
// exit code 2 and one clear line, before it tries to reach a server (the
// address is unreachable on purpose: a case that dialled would not return
// a code 2).
func TestArgumentErrors(t *testing.T) {
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:1")
	missing := filepath.Join(t.TempDir(), "missing.json")
	cases := []struct {
		cmd  string
		args []string
		want string // in the error line
	}{
		{"run", []string{"--scenario", missing, "a prompt"}, "not both"},
		{"run", []string{"--scenario", missing}, "missing.json"},
		{"run", []string{"--bogus"}, "flag provided but not defined"},
		{"start", nil, "give a prompt or --scenario FILE"},
		{"start", []string{"--scenario", missing, "a prompt"}, "not both"},
		{"start", []string{"--scenario", missing}, "missing.json"},
		{"send", nil, "missing the workflow ID: starter send ID"},
		{"send", []string{"wf-1"}, "missing the message"},
		{"send", []string{"wf-1", "   "}, "missing the message"},
		{"state", nil, "missing the workflow ID: starter state ID"},
		{"state", []string{" "}, "missing the workflow ID"},
		{"state", []string{"wf-1", "extra"}, `unexpected argument "extra"`},
		{"state", []string{"wf-1", "--json=maybe"}, "invalid boolean value"},
		{"plan", nil, "missing the workflow ID: starter plan ID"},
		{"plan", []string{"wf-1", "extra"}, `unexpected argument "extra"`},
		{"watch", nil, "missing the workflow ID: starter watch ID"},
		{"watch", []string{"wf-1", "extra"}, `unexpected argument "extra"`},
		{"watch", []string{"wf-1", "--every", "soon"}, "invalid value"},
		{"history", nil, "missing the workflow ID: starter history ID"},
		{"history", []string{"wf-1", "extra"}, `unexpected argument "extra"`},
		{"approve", nil, "missing the workflow ID: starter approve ID"},
		{"approve", []string{"wf-1", "extra"}, `unexpected argument "extra"`},
		{"approve", []string{"wf-1", "--feedback"}, "flag needs an argument"},
		{"reject", nil, "missing the workflow ID: starter reject ID"},
		{"reject", []string{"wf-1"}, "missing the feedback: starter reject ID --feedback TEXT"},
		{"reject", []string{"wf-1", "--feedback", "  "}, "missing the feedback"},
		{"reject", []string{"wf-1", "--feedback", "too", "vague"}, `unexpected argument "vague"`},
		{"reject", []string{"--feedback", "too vague"}, "missing the workflow ID"},
		{"resume", nil, "missing the workflow ID: starter resume ID"},
		{"end", nil, "missing the workflow ID: starter end ID"},
		{"end", []string{"wf-1", "now"}, `unexpected argument "now"`},
		{"retry", nil, "missing the workflow ID: starter retry ID"},
		{"retry", []string{"wf-1", "again"}, `unexpected argument "again"`},
		{"compact", nil, "missing the workflow ID: starter compact ID"},
		{"compact", []string{"wf-1", "now"}, `unexpected argument "now"`},
		{"resume", []string{"--bogus", "wf-1"}, "flag provided but not defined"},
		{"continuation", nil, "missing the workflow ID: starter continuation ID"},
		{"continuation", []string{"wf-1"}, "missing on or off: starter continuation ID on|off"},
		{"continuation", []string{"wf-1", "maybe"}, `not "maybe"`},
		{"continuation", []string{"wf-1", "true"}, `not "true"`},
		{"continuation", []string{"wf-1", "on", "off"}, `unexpected argument "off"`},
	}
	cmds := commands()
	tested := map[string]bool{}
	for _, tc := range cases {
		tested[tc.cmd] = true
		t.Run(tc.cmd+" "+strings.Join(tc.args, " "), func(t *testing.T) {
			cmd, ok := cmds[tc.cmd]
			if !ok {
				t.Fatalf("no command %q", tc.cmd)
			}
			err := cmd(tc.args)
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != 2 {
				t.Fatalf("got %v (%#v), want an exit code 2", err, ee)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not say %q", msg, tc.want)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error %q is not one line", msg)
			}
		})
	}
	for name := range cmds {
		if !tested[name] {
			t.Errorf("command %s has no argument test", name)
		}
	}
}

// TestHelp checks that -h is not an error (exit 0, nothing more printed).
func TestHelp(t *testing.T) {
	stderr := os.Stderr
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	os.Stderr = devnull
	defer func() { os.Stderr = stderr }()
	for name, cmd := range commands() {
		err := cmd([]string{"-h"})
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != 0 || ee.err != nil {
			t.Errorf("%s -h: got %v, want a silent exit 0", name, err)
		}
	}
}

func TestOnOff(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		want bool
	}{{"on", true}, {"off", false}, {"ON", true}, {"Off", false}} {
		got, err := onOff([]string{tc.arg})
		if err != nil || got != tc.want {
			t.Errorf("onOff(%q) = %v, %v; want %v", tc.arg, got, err, tc.want)
		}
	}
}

// TestUsageListsEveryCommand keeps the usage text in step with the commands.
func TestUsageListsEveryCommand(t *testing.T) {
	for name := range commands() {
		if !strings.Contains(usage, "\n  "+name+" ") {
			t.Errorf("the usage text does not list %s", name)
		}
	}
}
