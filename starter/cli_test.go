package main

import (
	"bytes"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/todoflow/todoflow/worker/devserver"
)

func TestVersion(t *testing.T) {
	for _, flag := range []string{"--version", "-v"} {
		var stdout, stderr bytes.Buffer
		if code := runCLI([]string{flag}, &stdout, &stderr); code != 0 || stderr.Len() > 0 {
			t.Fatalf("%s: exit %d, stderr %q", flag, code, stderr.String())
		}
		out := stdout.String()
		for _, want := range []string{"todoflow starter ", "Temporal Go SDK v" + temporal.SDKVersion + "\n", "Temporal CLI " + devserver.CLIVersion + " "} {
			if !strings.Contains(out, want) {
				t.Errorf("%s prints %q; want it to say %q", flag, out, want)
			}
		}
	}

	tests := []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{"installed at a version", &debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}}, true, "todoflow starter v0.3.0\n"},
		{"a build in a checkout", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "c140ba6f33a6254ccaff774206a586d76355480a"},
			{Key: "vcs.time", Value: "2026-05-01T10:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		}}, true, "todoflow starter (devel) (commit c140ba6f33a6, 2026-05-01T10:00:00Z, with local changes)\n"},
		{"a clean checkout", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20260501100000-c140ba6f33a6"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "c140ba6"}, {Key: "vcs.modified", Value: "false"},
		}}, true, "todoflow starter v0.0.0-20260501100000-c140ba6f33a6 (commit c140ba6)\n"},
		{"no build information", nil, false, "todoflow starter (unknown: no build information)\n"},
	}
	for _, tt := range tests {
		got := formatVersion(tt.bi, tt.ok)
		if first, _, _ := strings.Cut(got, "\n"); first+"\n" != tt.want {
			t.Errorf("%s: first line %q; want %q", tt.name, first, tt.want)
		}
	}
}

// TestCompletion checks cobra's completion command for each shell, and what the scripts
// ask the starter for on Tab (the hidden __complete command): commands, flags, the
// choices of -o and of continuation, JSON files for --scenario, and no file names where
// a workflow ID goes.
func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		var stdout, stderr bytes.Buffer
		code := runCLI([]string{"completion", shell}, &stdout, &stderr)
		if code != 0 || stderr.Len() > 0 {
			t.Fatalf("completion %s: exit %d, stderr %q", shell, code, stderr.String())
		}
		if out := stdout.String(); !strings.Contains(out, "# "+shell+" completion") || !strings.Contains(out, "__complete") {
			t.Errorf("completion %s does not print a script that asks the starter:\n%.300s", shell, out)
		}
	}

	const (
		noFiles  = ":4" // cobra.ShellCompDirectiveNoFileComp
		fileExts = ":8" // cobra.ShellCompDirectiveFilterFileExt
		anyFiles = ":0" // cobra.ShellCompDirectiveDefault
	)
	tests := []struct {
		args      []string // after __complete; the last one is what is being completed
		want      []string // among the candidates (the text before a tab)
		directive string
	}{
		{[]string{"sta"}, []string{"start", "state"}, noFiles},
		{[]string{"c"}, []string{"compact", "completion", "continuation"}, noFiles},
		{[]string{"state", "--w"}, []string{"--workflow-id"}, noFiles},
		{[]string{"state", "-"}, []string{"--json", "--output", "--address", "--namespace", "--task-queue"}, noFiles},
		{[]string{"history", "wf-1", "--out"}, []string{"--output", "--output-file"}, noFiles},
		{[]string{"state", ""}, nil, noFiles}, // a workflow ID: no file names
		{[]string{"continuation", "wf-1", ""}, []string{"on", "off"}, noFiles},
		{[]string{"continuation", "-w", "wf-1", ""}, []string{"on", "off"}, noFiles},
		{[]string{"state", "wf-1", "-o", ""}, []string{"text", "json"}, noFiles},
		{[]string{"run", "--output", ""}, []string{"text", "json"}, noFiles},
		{[]string{"history", "wf-1", "-o", ""}, []string{"json"}, noFiles},
		{[]string{"run", "--scenario", ""}, []string{"json"}, fileExts},
		{[]string{"history", "wf-1", "--output-file", ""}, nil, anyFiles},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		if code := runCLI(append([]string{"__complete"}, tt.args...), &stdout, &stderr); code != 0 {
			t.Errorf("__complete %q: exit %d, stderr %q", tt.args, code, stderr.String())
			continue
		}
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		directive := lines[len(lines)-1]
		var got []string
		for _, l := range lines[:len(lines)-1] {
			cand, _, _ := strings.Cut(l, "\t")
			got = append(got, cand)
		}
		if directive != tt.directive {
			t.Errorf("__complete %q: directive %s; want %s", tt.args, directive, tt.directive)
		}
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("__complete %q offers %q; want %q among them", tt.args, got, w)
			}
		}
		if tt.want == nil && len(got) > 0 {
			t.Errorf("__complete %q offers %q; want nothing", tt.args, got)
		}
	}
}
