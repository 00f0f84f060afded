package main

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// unreachable is a server address nobody listens on: a command that got past its
// argument checks fails there, fast, with exit code 1.
const unreachable = "127.0.0.1:1"

// runArgs runs one command the way main does, minus the printing, and returns what it
// parsed.
func runArgs(t *testing.T, name string, args []string) (*cmdline, error) {
	t.Helper()
	x := newCLI(io.Discard, io.Discard)
	c, ok := x.lines[name]
	if !ok {
		t.Fatalf("no command %q", name)
	}
	x.root.SetArgs(x.longFlags(append([]string{name}, args...)))
	if _, err := x.root.ExecuteC(); err != nil {
		return c, asExitError(err)
	}
	return c, nil
}

// TestArgumentErrors checks that every command refuses bad arguments with
// exit code 2 and one clear line, before it tries to reach a server (the
// address is unreachable on purpose: a case that dialled would not return
// a code 2).
func TestArgumentErrors(t *testing.T) {
	t.Setenv("TEMPORAL_ADDRESS", unreachable)
	missing := filepath.Join(t.TempDir(), "missing.json")
	cases := []struct {
		cmd   string
		args  []string
		want  string // in the error line
		usage bool   // the command's usage follows the line
	}{
		{"run", []string{"--scenario", missing, "a prompt"}, "not both", true},
		{"run", []string{"--scenario", missing}, "missing.json", false},
		{"run", []string{"--bogus"}, "unknown flag: --bogus", true},
		{"run", []string{"-o", "yaml"}, `--output is text or json, not "yaml"`, true},
		{"run", []string{"--json", "-o", "text"}, "--json and --output text say different things", true},
		{"run", []string{"--id", "a", "-w", "b"}, `--id "a" and --workflow-id "b": give the ID once`, true},
		{"run", []string{"--ui", "a prompt"}, "--ui keeps the embedded server up", true},
		{"start", nil, "give a prompt or --scenario FILE", true},
		{"start", []string{"--scenario", missing, "a prompt"}, "not both", true},
		{"start", []string{"--scenario", missing}, "missing.json", false},
		{"start", []string{"--id"}, "flag needs an argument: --id", true},
		{"start", []string{"-w"}, "flag needs an argument: 'w' in -w", true},
		{"start", []string{"--workflow-id", "a", "-id", "b", "tidy"}, "give the ID once", true},
		{"send", nil, "missing the workflow ID: starter send ID", true},
		{"send", []string{"wf-1"}, "missing the message", true},
		{"send", []string{"wf-1", "   "}, "missing the message", true},
		{"send", []string{"wf-1", "--"}, "missing the message", true},
		{"send", []string{"-n", "wf-1", "text"}, "unknown shorthand flag: 'n' in -n", true},
		{"send", []string{"-w", "wf-1"}, "missing the message", true},
		{"send", []string{"--workflow-id", "", "hello"}, "missing the workflow ID", true},
		{"state", nil, "missing the workflow ID: starter state ID", true},
		{"state", []string{" "}, "missing the workflow ID", true},
		{"state", []string{"wf-1", "extra"}, `unexpected argument "extra"`, true},
		{"state", []string{"wf-1", "--json=maybe"}, `invalid argument "maybe" for "--json" flag`, true},
		{"state", []string{"-w", "wf-1", "extra"}, `unexpected argument "extra"`, true},
		{"state", []string{"-w", " "}, "missing the workflow ID", true},
		{"state", []string{"wf-1", "-o", "yaml"}, `--output is text or json, not "yaml"`, true},
		{"state", []string{"wf-1", "--output=json", "--json=false"}, "", false}, // json: dials
		{"state", []string{"--", "--json"}, `unexpected argument`, false},       // "--json" is the ID here: it dials
		{"plan", nil, "missing the workflow ID: starter plan ID", true},
		{"plan", []string{"wf-1", "extra"}, `unexpected argument "extra"`, true},
		{"watch", nil, "missing the workflow ID: starter watch ID", true},
		{"watch", []string{"wf-1", "extra"}, `unexpected argument "extra"`, true},
		{"watch", []string{"wf-1", "--every", "soon"}, `invalid argument "soon" for "--every" flag`, true},
		{"history", nil, "missing the workflow ID: starter history ID", true},
		{"history", []string{"wf-1", "extra"}, `unexpected argument "extra"`, true},
		{"history", []string{"wf-1", "-o", "text"}, "a history is exported as JSON", true},
		{"history", []string{"wf-1", "--output", "a.json", "--output-file", "b.json"}, "give the file once", true},
		{"approve", nil, "missing the workflow ID: starter approve ID", true},
		{"approve", []string{"wf-1", "extra"}, `unexpected argument "extra"`, true},
		{"approve", []string{"wf-1", "--feedback"}, "flag needs an argument: --feedback", true},
		{"approve", []string{"wf-1", "--call", "c1", "-y"}, "--call and -y both say which call to answer", true},
		{"approve", []string{"wf-1", "--reject", "--remember", "--feedback", "no"}, "--remember approves a tool; it does not go with --reject", true},
		{"approve", []string{"wf-1", "--reject", "-y"}, "missing the feedback: starter approve ID --reject --feedback TEXT", true},
		{"reject", []string{"wf-1", "--feedback", "no", "--call", "c1", "--yes"}, "--call and -y both say which call to answer", true},
		{"reject", nil, "missing the workflow ID: starter reject ID", true},
		{"reject", []string{"wf-1"}, "missing the feedback: starter reject ID --feedback TEXT", true},
		{"reject", []string{"wf-1", "--feedback", "  "}, "missing the feedback", true},
		{"reject", []string{"wf-1", "--feedback", "too", "vague"}, `unexpected argument "vague"`, true},
		{"reject", []string{"--feedback", "too vague"}, "missing the workflow ID", true},
		{"resume", nil, "missing the workflow ID: starter resume ID", true},
		{"resume", []string{"--bogus", "wf-1"}, "unknown flag: --bogus", true},
		{"end", nil, "missing the workflow ID: starter end ID", true},
		{"end", []string{"wf-1", "now"}, `unexpected argument "now"`, true},
		{"retry", nil, "missing the workflow ID: starter retry ID", true},
		{"retry", []string{"wf-1", "again"}, `unexpected argument "again"`, true},
		{"stop", nil, "missing the workflow ID: starter stop ID", true},
		{"stop", []string{"wf-1", "now"}, `unexpected argument "now"`, true},
		{"rewind", nil, "missing the workflow ID: starter rewind ID --to-turn N", true},
		{"rewind", []string{"wf-1"}, "give the turn to go back before: starter rewind ID --to-turn N", true},
		{"rewind", []string{"wf-1", "--to-turn", "2", "now"}, `unexpected argument "now"`, true},
		{"compact", nil, "missing the workflow ID: starter compact ID", true},
		{"compact", []string{"wf-1", "now"}, `unexpected argument "now"`, true},
		{"chat", []string{"hello"}, `unexpected argument "hello": starter chat [--id ID] [--model REF]`, true},
		{"chat", []string{"--id"}, "flag needs an argument: --id", true},
		{"continuation", nil, "missing the workflow ID: starter continuation ID", true},
		{"continuation", []string{"wf-1"}, "missing on or off: starter continuation ID on|off", true},
		{"continuation", []string{"wf-1", "maybe"}, `not "maybe"`, true},
		{"continuation", []string{"wf-1", "true"}, `not "true"`, true},
		{"continuation", []string{"wf-1", "on", "off"}, `unexpected argument "off"`, true},
		{"continuation", []string{"-w", "wf-1"}, "missing on or off", true},
	}
	tested := map[string]bool{}
	for _, tc := range cases {
		tested[tc.cmd] = true
		t.Run(tc.cmd+" "+strings.Join(tc.args, " "), func(t *testing.T) {
			_, err := runArgs(t, tc.cmd, tc.args)
			if tc.want == "unexpected argument" || tc.want == "" {
				// Not an argument error: after "--", "--json" is the workflow ID.
				if tc.want != "" && strings.Contains(errString(err), tc.want) || !strings.Contains(errString(err), unreachable) {
					t.Errorf("got %v; want the command past its argument checks, dialling", err)
				}
				return
			}
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
			if ee.usage != tc.usage {
				t.Errorf("usage after the error = %v; want %v", ee.usage, tc.usage)
			}
		})
	}
	for _, cmd := range commandList() {
		if !tested[cmd.name()] {
			t.Errorf("command %s has no argument test", cmd.name())
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestParsing checks, for each command, what the command line means: flags before or
// after the ID, "--" ending the flags, "-name" and "--name=value" forms. Each case gets
// past its argument checks and fails on the unreachable server, so what it parsed is
// what it would have sent.
func TestParsing(t *testing.T) {
	t.Setenv("TEMPORAL_ADDRESS", unreachable)
	t.Setenv("OPENAI_API_KEY", "sk-test") // run: a prompt for a model, not the demo
	t.Setenv("TODOFLOW_STATE_DIR", t.TempDir())
	cases := []struct {
		cmd   string
		args  []string
		pos   []string
		flags map[string]string
		id    string // the run's workflow ID, when the arguments give one
	}{
		{"run", []string{"--json", "--id", "r-1", "fix", "it"}, []string{"fix", "it"}, map[string]string{"json": "true", "id": "r-1"}, "r-1"},
		{"run", []string{"-o", "json", "-w", "r-2", "fix"}, []string{"fix"}, map[string]string{"output": "json", "workflow-id": "r-2"}, "r-2"},
		{"run", []string{"fix", "--output=json", "--workflow-id=r-3", "--id", "r-3"}, []string{"fix"}, map[string]string{"output": "json"}, "r-3"},
		{"run", []string{"fix", "--json", "it"}, []string{"fix", "it"}, map[string]string{"json": "true"}, ""},
		{"run", []string{"--", "--json", "is", "a", "word"}, []string{"--json", "is", "a", "word"}, map[string]string{"json": "false"}, ""},
		{"start", []string{"--model", "openai:gpt-4o", "tidy", "--id=s-1"}, []string{"tidy"}, map[string]string{"model": "openai:gpt-4o", "id": "s-1"}, "s-1"},
		{"start", []string{"-id", "s-2", "--", "-v", "please"}, []string{"-v", "please"}, map[string]string{"id": "s-2"}, "s-2"},
		{"start", []string{"tidy", "-w", "s-3"}, []string{"tidy"}, map[string]string{"workflow-id": "s-3"}, "s-3"},
		{"start", []string{"-workflow-id", "s-4", "tidy"}, []string{"tidy"}, map[string]string{"workflow-id": "s-4"}, "s-4"},
		{"send", []string{"wf-1", "--", "-n", "text"}, []string{"wf-1", "-n", "text"}, nil, "wf-1"},
		{"send", []string{"-w", "wf-2", "hello", "there"}, []string{"hello", "there"}, map[string]string{"workflow-id": "wf-2"}, "wf-2"},
		{"send", []string{"-w", "wf-3", "--", "-n", "text"}, []string{"-n", "text"}, nil, "wf-3"},
		{"send", []string{"-wwf-4", "hi"}, []string{"hi"}, nil, "wf-4"},
		// A value that looks like a flag is the value of the flag before it.
		{"send", []string{"--workflow-id", "-w", "hi"}, []string{"hi"}, nil, "-w"},
		{"send", []string{"--update-id", "u-1", "wf-1", "hello"}, []string{"wf-1", "hello"}, map[string]string{"update-id": "u-1"}, ""},
		{"send", []string{"wf-1", "hello", "--update-id=u-2"}, []string{"wf-1", "hello"}, map[string]string{"update-id": "u-2"}, ""},
		{"send", []string{"wf-1", "--", "--update-id", "u-3"}, []string{"wf-1", "--update-id", "u-3"}, map[string]string{"update-id": ""}, ""},
		{"send", []string{"wf-1", "a", "--", "--", "b"}, []string{"wf-1", "a", "--", "b"}, nil, ""},
		{"state", []string{"--json", "wf-1"}, []string{"wf-1"}, map[string]string{"json": "true"}, ""},
		{"state", []string{"wf-1", "--json"}, []string{"wf-1"}, map[string]string{"json": "true"}, "wf-1"},
		{"state", []string{"-o", "json", "--workflow-id", "wf-2"}, nil, map[string]string{"output": "json", "json": "false"}, "wf-2"},
		{"state", []string{"-ojson", "wf-3"}, []string{"wf-3"}, map[string]string{"output": "json"}, "wf-3"},
		{"state", []string{"-json", "-w=wf-4"}, nil, map[string]string{"json": "true"}, "wf-4"},
		{"state", []string{"wf-1", "--namespace", "ns-1", "--address", unreachable}, []string{"wf-1"}, map[string]string{"namespace": "ns-1"}, ""},
		{"plan", []string{"-task-queue", "q-1", "wf-1"}, []string{"wf-1"}, map[string]string{"task-queue": "q-1"}, ""},
		{"watch", []string{"wf-1", "--every", "2s"}, []string{"wf-1"}, map[string]string{"every": "2s"}, ""},
		{"history", []string{"--output", "h.json", "wf-1", "--run-id", "run-1"}, []string{"wf-1"}, map[string]string{"output": "h.json", "run-id": "run-1"}, "wf-1"},
		{"history", []string{"wf-1", "-o", "json", "--output-file", "h.json"}, []string{"wf-1"}, map[string]string{"output": "json", "output-file": "h.json"}, "wf-1"},
		{"history", []string{"-w", "wf-2"}, nil, map[string]string{"output": "json", "output-file": ""}, "wf-2"},
		{"approve", []string{"wf-1", "--agent", "coder", "--feedback=go ahead"}, []string{"wf-1"}, map[string]string{"agent": "coder", "feedback": "go ahead"}, ""},
		{"reject", []string{"--feedback", "too vague", "wf-1"}, []string{"wf-1"}, map[string]string{"feedback": "too vague"}, ""},
		// A "--" given as a flag's value is that value, not the end of the flags.
		{"reject", []string{"wf-1", "--feedback", "--"}, []string{"wf-1"}, map[string]string{"feedback": "--"}, ""},
		{"resume", []string{"wf-1", "--agent", "coder", "the", "key", "is", "back"}, []string{"wf-1", "the", "key", "is", "back"}, map[string]string{"agent": "coder"}, ""},
		{"resume", []string{"wf-1"}, []string{"wf-1"}, map[string]string{"agent": ""}, ""},
		{"continuation", []string{"wf-1", "OFF"}, []string{"wf-1", "OFF"}, nil, "wf-1"},
		{"continuation", []string{"on", "-w", "wf-2"}, []string{"on"}, nil, "wf-2"},
		{"end", []string{"--", "wf-1"}, []string{"wf-1"}, nil, "wf-1"},
		{"end", []string{"--", "-w"}, []string{"-w"}, nil, "-w"},
		{"retry", []string{"wf-1"}, []string{"wf-1"}, nil, ""},
		{"stop", []string{"wf-1"}, []string{"wf-1"}, nil, ""},
		{"compact", []string{"wf-1"}, []string{"wf-1"}, nil, ""},
		{"rewind", []string{"wf-1", "--to-turn", "3"}, []string{"wf-1"}, map[string]string{"to-turn": "3"}, ""},
		{"chat", []string{"--id", "s-1", "--model=script:x.json"}, nil, map[string]string{"id": "s-1", "model": "script:x.json"}, "s-1"},
		{"chat", []string{"-w", "s-2"}, nil, nil, "s-2"},
	}
	tested := map[string]bool{}
	for _, tc := range cases {
		tested[tc.cmd] = true
		t.Run(tc.cmd+" "+strings.Join(tc.args, " "), func(t *testing.T) {
			c, err := runArgs(t, tc.cmd, tc.args)
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != 1 || ee.usage || !strings.Contains(err.Error(), unreachable) {
				t.Fatalf("got %v; want it past the argument checks, failing on the server %s with exit code 1", err, unreachable)
			}
			if tc.id != "" && c.id != tc.id {
				t.Errorf("workflow ID %q; want %q", c.id, tc.id)
			}
			if strings.Join(c.pos, "|") != strings.Join(tc.pos, "|") {
				t.Errorf("positional arguments %q; want %q", c.pos, tc.pos)
			}
			for name, want := range tc.flags {
				f := c.fs.Lookup(name)
				if f == nil {
					t.Fatalf("no flag --%s", name)
				}
				if got := f.Value.String(); got != want {
					t.Errorf("--%s = %q; want %q", name, got, want)
				}
			}
		})
	}
	for _, cmd := range commandList() {
		if !tested[cmd.name()] {
			t.Errorf("command %s has no parsing test", cmd.name())
		}
	}
}

// TestHelp checks that -h and --help print the command's help (cobra's: what it does, its
// usage, examples and every flag) on stdout and exit 0.
func TestHelp(t *testing.T) {
	for _, cmd := range commandList() {
		for _, h := range []string{"-h", "--help", "-help"} {
			var stdout, stderr bytes.Buffer
			code := runCLI([]string{cmd.name(), "wf-1", h}, &stdout, &stderr)
			if code != 0 || stderr.Len() > 0 {
				t.Errorf("%s %s: exit %d, stderr %q; want exit 0 and nothing on stderr", cmd.name(), h, code, stderr.String())
			}
			out := stdout.String()
			if !strings.HasPrefix(out, cmd.about+"\n") || !strings.Contains(out, "\nUsage:\n  starter "+cmd.use+" [flags]\n") {
				t.Errorf("%s %s: the help does not start with what the command does and its usage:\n%s", cmd.name(), h, out)
			}
			if !strings.Contains(out, cmd.example) {
				t.Errorf("%s %s: the help does not show the examples:\n%s", cmd.name(), h, out)
			}
			for _, f := range flags(newCLI(io.Discard, io.Discard).lines[cmd.name()]) {
				row := regexp.MustCompile(`\n  ` + regexp.QuoteMeta(flagColumn(f)) + `[ \n]`)
				if !row.MatchString(out) {
					t.Errorf("%s %s: the usage does not list %s:\n%s", cmd.name(), h, flagColumn(f), out)
				}
			}
		}
	}
}

func flags(c *cmdline) []*pflag.Flag {
	var fs []*pflag.Flag
	c.fs.VisitAll(func(f *pflag.Flag) { fs = append(fs, f) })
	return fs
}

// flagColumn is how the usage names f: "-w, --workflow-id" or "    --address".
func flagColumn(f *pflag.Flag) string {
	if f.Shorthand != "" {
		return "-" + f.Shorthand + ", --" + f.Name
	}
	return "    --" + f.Name
}

// firstLine is out's first line exactly as printed, not text.FirstLine: a
// blank line or a stray space before the error line must fail these tests.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// TestUsageErrorOutput checks what a user sees for a bad command line: one error line,
// then the command's usage, on stderr, exit 2.
func TestUsageErrorOutput(t *testing.T) {
	tests := []struct {
		args      []string
		firstLine string
		usage     string // what the usage after the line starts with
	}{
		{[]string{"send"}, "starter send: missing the workflow ID: starter send ID TEXT", "Usage:\n  starter send ID TEXT [flags]\n"},
		{[]string{"state", "--bogus", "wf-1"}, "starter state: unknown flag: --bogus", "Usage:\n  starter state ID [flags]\n"},
		{[]string{"state", "-bogus", "wf-1"}, "starter state: unknown shorthand flag: 'b' in -bogus", "Usage:\n  starter state "},
		{[]string{"frobnicate"}, `starter: unknown command "frobnicate" for "starter"`, "Usage:\n  starter [command]\n"},
		{[]string{"frobnicate", "--json"}, `starter: unknown command "frobnicate" for "starter"`, "Usage:\n  starter [command]"},
		{[]string{"strat"}, `starter: unknown command "strat" for "starter"`, "Usage:\n  starter [command]"},
		{nil, "Usage:", "Usage:\n  starter [command]"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := runCLI(tt.args, &stdout, &stderr)
		if code != 2 || stdout.Len() > 0 {
			t.Errorf("%q: exit %d, stdout %q; want exit 2 and nothing on stdout", tt.args, code, stdout.String())
		}
		out := stderr.String()
		if got := firstLine(out); got != tt.firstLine {
			t.Errorf("%q: first line %q; want %q", tt.args, got, tt.firstLine)
		}
		if !strings.Contains(out, "\n"+tt.usage) && !strings.HasPrefix(out, tt.usage) {
			t.Errorf("%q: no %q after the error:\n%s", tt.args, tt.usage, out)
		}
	}
}

func TestGeneralHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		var stdout, stderr bytes.Buffer
		if code := runCLI(args, &stdout, &stderr); code != 0 || stderr.Len() > 0 {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr.String())
		}
		for _, cmd := range commandList() {
			if !strings.Contains(stdout.String(), "\n  "+cmd.name()+" ") {
				t.Errorf("%q: the usage does not list %s", args, cmd.name())
			}
		}
	}
	var stdout, stderr bytes.Buffer
	if code := runCLI([]string{"help", "send"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "\n  starter send ID TEXT [flags]\n") {
		t.Errorf("help send: exit %d, %q", code, stdout.String())
	}
}

func TestOnOff(t *testing.T) {
	c := &cmdline{cmd: command{use: "continuation ID on|off"}}
	for _, tc := range []struct {
		arg  string
		want bool
	}{{"on", true}, {"off", false}, {"ON", true}, {"Off", false}} {
		got, err := c.onOff([]string{tc.arg})
		if err != nil || got != tc.want {
			t.Errorf("onOff(%q) = %v, %v; want %v", tc.arg, got, err, tc.want)
		}
	}
}
