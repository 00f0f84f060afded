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
type tail struct {
	mu      sync.Mutex
	n       int
	lines   []string
	partial []byte
	copyTo  io.Writer
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
	t.lines = append(t.lines, strings.TrimRight(line, "\r"))
	if len(t.lines) > t.n {
		// Copy down rather than reslice so the backing array does not grow forever.
		copy(t.lines, t.lines[len(t.lines)-t.n:])
		t.lines = t.lines[:t.n]
	}
}

// String returns the last n lines, counting an unfinished last line, joined by newlines.
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
	return strings.Join(lines, "\n")
}
