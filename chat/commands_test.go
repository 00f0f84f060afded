package chat

import (
	"strings"
	"testing"
)

func TestParseLine(t *testing.T) {
	tests := []struct {
		in      string
		want    line
		wantErr string
	}{
		{"fix the test", line{message: "fix the test"}, ""},
		{"  spaced  ", line{message: "spaced"}, ""},
		{"//etc/hosts is odd", line{message: "/etc/hosts is odd"}, ""},
		{"/plan", line{cmd: "plan"}, ""},
		{"/TODOS", line{cmd: "todos"}, ""},
		{"/approve", line{cmd: "approve"}, ""},
		{"/approve now", line{}, "/approve, or /approve --remember"},
		{"/approve --remember", line{cmd: "approve", arg: "--remember"}, ""},
		{"/stop", line{cmd: "stop"}, ""},
		{"/stop now", line{}, "/stop takes no argument"},
		{"/retry", line{cmd: "retry"}, ""},
		{"/clear", line{cmd: "clear"}, ""},
		{"/clear all", line{}, "/clear takes no argument"},
		{"/model", line{cmd: "model"}, ""},
		{"/model openai:gpt-4o", line{cmd: "model", arg: "openai:gpt-4o"}, ""},
		{"/reject keep the drafts", line{cmd: "reject", arg: "keep the drafts"}, ""},
		{"/reject", line{}, "/reject needs a feedback"},
		{"/resume", line{cmd: "resume"}, ""},
		{"/resume the key is set", line{cmd: "resume", arg: "the key is set"}, ""},
		{"/continuation off", line{cmd: "continuation", arg: "off"}, ""},
		{"/continuation ON", line{cmd: "continuation", arg: "ON"}, ""},
		{"/continuation maybe", line{}, "/continuation on, or /continuation off"},
		{"/agents", line{cmd: "agents"}, ""},
		{"/compact", line{cmd: "compact"}, ""},
		{"/rewind 3", line{cmd: "rewind", arg: "3"}, ""},
		{"/rewind", line{}, "/rewind N: the turn to go back before"},
		{"/rewind zero", line{}, "/rewind N"},
		{"/rewind 0", line{}, "/rewind N"},
		{"/end", line{cmd: "end"}, ""},
		{"/help", line{cmd: "help"}, ""},
		{"/exit", line{cmd: "quit"}, ""},
		{"/EXIT", line{cmd: "quit"}, ""},
		// Two names of one command, refusing an argument alike.
		{"/exit now", line{}, "/quit takes no argument"},
		{"/quit now", line{}, "/quit takes no argument"},
		{"/ephemeral todo-continuation false", line{}, "unknown command /ephemeral"},
	}
	for _, tt := range tests {
		got, err := parseLine(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseLine(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("parseLine(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

// Every command the parser takes is in the help, and the other way round.
func TestHelpListsEveryCommand(t *testing.T) {
	help := helpText()
	for _, c := range commands {
		if !strings.Contains(help, "/"+c.name) {
			t.Errorf("help does not list /%s", c.name)
		}
		arg := ""
		switch c.name {
		case "reject":
			arg = " x"
		case "continuation":
			arg = " on"
		case "rewind":
			arg = " 2"
		}
		if _, err := parseLine("/" + c.name + arg); err != nil {
			t.Errorf("/%s is in the help but refused: %v", c.name, err)
		}
	}
}
