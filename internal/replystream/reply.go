package replystream

import (
	"sync"

	"github.com/todoflow/todoflow/internal/text"
)

// MaxBytes bounds the text of a reply that is kept and sent: its end.
const MaxBytes = 16 << 10

// Frame is one message of a stream: Text is the reply's text from byte At
// of the whole reply on (the text before it was sent before, or left out).
// The last frame has End set.
type Frame struct {
	Call int    `json:"call"`
	At   int    `json:"at"`
	Text string `json:"text,omitempty"`
	End  bool   `json:"end,omitempty"`
}

// Reply is one model call's reply as it is written, kept for the watchers
// of its stream and for its heartbeat details. Safe for concurrent use.
type Reply struct {
	call int

	mu      sync.Mutex
	buf     []byte // the text kept, from byte cut of the whole reply
	cut     int
	ended   bool
	changed chan struct{} // closed at the next change
	onEnd   func()
}

// NewReply is the reply of a call that is not served (no server, or
// outside an activity): it is kept for the heartbeat details only.
func NewReply(call int) *Reply {
	return &Reply{call: call, changed: make(chan struct{})}
}

// Add appends a piece of the reply.
func (r *Reply) Add(piece string) {
	if piece == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return
	}
	r.buf = append(r.buf, piece...)
	// Kept up to twice the bound, so that trimming copies once in a while,
	// not at every piece.
	if len(r.buf) > 2*MaxBytes {
		drop := tailStart(r.buf, MaxBytes)
		r.cut += drop
		r.buf = append(r.buf[:0:0], r.buf[drop:]...)
	}
	r.notify()
}

// End marks the reply complete: its watchers get a last frame, and a
// served reply is served no more.
func (r *Reply) End() {
	r.mu.Lock()
	if r.ended {
		r.mu.Unlock()
		return
	}
	r.ended = true
	r.notify()
	onEnd := r.onEnd
	r.mu.Unlock()
	if onEnd != nil {
		onEnd()
	}
}

// Text is the reply so far: its last MaxBytes at most, and the bytes left
// out before them.
func (r *Reply) Text() (text string, cut int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	start := tailStart(r.buf, MaxBytes)
	return string(r.buf[start:]), r.cut + start
}

// next is the frame a watcher that has the reply up to byte from needs
// (Text "" when it has all of it), and a channel closed at the next change.
func (r *Reply) next(from int) (Frame, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := Frame{Call: r.call, At: from, End: r.ended}
	end := r.cut + len(r.buf)
	if from < r.cut || from > end {
		// It missed text that is no longer kept (or knows of none): the
		// whole tail again.
		start := tailStart(r.buf, MaxBytes)
		f.At, f.Text = r.cut+start, string(r.buf[start:])
	} else {
		start := max(from-r.cut, tailStart(r.buf, MaxBytes))
		f.At, f.Text = r.cut+start, string(r.buf[start:])
	}
	return f, r.changed
}

// notify wakes the watchers; r.mu is held.
func (r *Reply) notify() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// tailStart is where the last max bytes of b start, moved forward to the
// start of a rune.
func tailStart(b []byte, max int) int {
	if len(b) <= max {
		return 0
	}
	return text.NextRuneStart(b, len(b)-max)
}
