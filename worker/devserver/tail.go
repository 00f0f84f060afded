package devserver

import (
	"bytes"
	"io"
	"strings"
	"sync"
)

// tail is an io.Writer that keeps the last n lines written to it and copies everything to
// an optional writer. Error messages quote it: "the server exited" is useless without the
// server's own last words, even when the caller discards the log.
//
// A Go program that panics prints the panic's message first and then a stack of every
// goroutine, which pushes the message out of the last n lines, and the dev server logs
// the error that leads to a panic (a listener it could not open) before it: so the first
// few lines that log an error or start a panic are kept too, and shown first when they
// have left the tail.
type tail struct {
	mu      sync.Mutex
	n       int
	lines   []string
	partial []byte
	copyTo  io.Writer
	pushed  int     // lines pushed so far
	causes  []cause // at most maxCauses
}

// A cause is a line that says why a program died, and its number counted from 1.
type cause struct {
	line string
	at   int
}

const maxCauses = 3

// isCause tells the lines that say why: the two a Go runtime prints first when a program
// dies, and an error logged by the server's logger (text format).
func isCause(line string) bool {
	return strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ") ||
		strings.Contains(line, " level=ERROR ")
}

func newTail(n int) *tail { return &tail{n: n} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.copyTo != nil {
		// The copy's errors are ignored on purpose: os/exec stops draining the child's pipe
		// when a writer fails, and a server blocked on a full stderr pipe hangs.
		_, _ = t.copyTo.Write(p)
	}
	data := p
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			t.partial = append(t.partial, data...)
			// A line without an end must not grow without bound.
			if len(t.partial) > 64<<10 {
				t.partial = t.partial[len(t.partial)-64<<10:]
			}
			break
		}
		t.push(string(append(t.partial, data[:i]...)))
		t.partial = t.partial[:0]
		data = data[i+1:]
	}
	return len(p), nil
}

func (t *tail) push(line string) {
	line = strings.TrimRight(line, "\r")
	t.pushed++
	if len(t.causes) < maxCauses && isCause(line) {
		t.causes = append(t.causes, cause{line, t.pushed})
	}
	t.lines = append(t.lines, line)
	if len(t.lines) > t.n {
		// Copy down rather than reslice so the backing array does not grow forever.
		copy(t.lines, t.lines[len(t.lines)-t.n:])
		t.lines = t.lines[:t.n]
	}
}

// String returns the last n lines, counting an unfinished last line, joined by newlines,
// after the lines that say why the program died if they are no longer among them.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := t.lines
	if len(t.partial) > 0 {
		if len(lines) == t.n {
			lines = lines[1:]
		}
		lines = append(lines[:len(lines):len(lines)], string(t.partial))
	}
	// Lines are numbered from 1 as pushed; the shown ones end with the last pushed.
	firstShown := t.pushed - len(lines) + 1
	if len(t.partial) > 0 {
		firstShown++
	}
	var head []string
	for _, c := range t.causes {
		if c.at < firstShown {
			head = append(head, c.line)
		}
	}
	if head != nil {
		lines = append(append(head, "…"), lines...)
	}
	return strings.Join(lines, "\n")
}
