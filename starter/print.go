package main

import (
	"fmt"
	"io"

	"github.com/todoflow/todoflow/internal/termtext"
)

// Most of what the starter prints as text was written by others: a model's reply, the
// todos and plan it made, the ids of the subagents it named, why it paused, the errors
// that quote any of them. A terminal obeys the controls such text may hold (set the
// clipboard, make a link, erase the lines above), so every text output goes out cleaned
// by package termtext: printed with printText, or through a cleanWriter where the text
// is written in several pieces or by other code (the scenario player's progress). The
// --json outputs and exported histories are JSON, written byte for byte.

// printText prints s and a newline on stdout, cleaned.
func printText(s string) {
	fmt.Println(termtext.Clean(s))
}

// cleanWriter writes what is written to it cleaned. Each Write is cleaned alone: a
// sequence split across two Writes loses its ESC in the first and shows the rest as
// text, so nothing it holds reaches the terminal as a control.
type cleanWriter struct{ w io.Writer }

func (c cleanWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(c.w, termtext.Clean(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
