package devserver

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"sync"
)

// tail is an io.Writer that keeps the last n lines written to it, copying everything to
// copyTo when set: errors quote it, even when the caller discards the server's log.
//
// A Go program that dies prints why first and then every goroutine's stack, which pushes
// the reason out of the last n lines (and the dev server logs the error behind a panic
// before it): so the first few lines that log an error or start a panic are kept too, and
// shown first when they have left the tail.
type tail struct {
	mu      sync.Mutex
	n       int
	lines   []string
	partial []byte
	copyTo  io.Writer
	pushed  int // lines pushed so far
	causes  []cause
}

// A cause is a line that says why a program died, and its number counted from 1.
type cause struct {
	line string
	at   int
}

const maxCauses = 3

func newTail(n int) *tail { return &tail{n: n} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.copyTo != nil {
		// Errors ignored: os/exec stops draining the child's pipe when a writer fails, and a
		// server blocked on a full pipe hangs.
		_, _ = t.copyTo.Write(p)
	}
	t.partial = append(t.partial, p...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			break
		}
		t.push(strings.TrimRight(string(t.partial[:i]), "\r"))
		t.partial = t.partial[i+1:]
	}
	if len(t.partial) > 64<<10 { // a line without an end must not grow without bound
		t.partial = t.partial[len(t.partial)-64<<10:]
	}
	t.partial = append([]byte(nil), t.partial...)
	return len(p), nil
}

func (t *tail) push(line string) {
	t.pushed++
	if len(t.causes) < maxCauses && (strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ") ||
		strings.Contains(line, " level=ERROR ")) {
		t.causes = append(t.causes, cause{line, t.pushed})
	}
	if t.lines = append(t.lines, line); len(t.lines) > t.n {
		t.lines = slices.Delete(t.lines, 0, len(t.lines)-t.n)
	}
}

// String returns the last n lines, counting an unfinished last line, joined by newlines,
// after the causes that are no longer among them.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := slices.Clone(t.lines)
	firstShown := t.pushed - len(lines) + 1 // lines are numbered from 1 as pushed
	if len(t.partial) > 0 {
		if lines = append(lines, string(t.partial)); len(lines) > t.n {
			lines, firstShown = lines[1:], firstShown+1
		}
	}
	var head []string
	for _, c := range t.causes {
		if c.at < firstShown {
			head = append(head, c.line)
		}
	}
	if head != nil {
		lines = slices.Concat(head, []string{"…"}, lines)
	}
	return strings.Join(lines, "\n")
}
