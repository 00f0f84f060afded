package replystream

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A reply keeps its last MaxBytes, cut at a rune's start, and counts what
// it left out; a watcher that missed text gets the whole tail again.
func TestReplyKeepsItsEnd(t *testing.T) {
	r := NewReply(1)
	r.Add("é")
	for range 5 {
		r.Add(strings.Repeat("ab", MaxBytes/2))
	}
	text, cut := r.Text()
	if len(text) != MaxBytes || cut != 2+5*MaxBytes-MaxBytes || !utf8.ValidString(text) {
		t.Errorf("Text: %d bytes, cut %d; want %d bytes, cut %d", len(text), cut, MaxBytes, 2+4*MaxBytes)
	}
	if len(r.buf) > 2*MaxBytes {
		t.Errorf("%d bytes kept, want at most %d", len(r.buf), 2*MaxBytes)
	}
	f, _ := r.next(0)
	if f.At != cut || f.Text != text {
		t.Errorf("a watcher from the start gets %d bytes at %d; want the tail, %d bytes at %d", len(f.Text), f.At, len(text), cut)
	}
	total := cut + len(text)
	if f, _ := r.next(total); f.Text != "" || f.At != total {
		t.Errorf("a watcher with everything gets %q at %d; want nothing at %d", f.Text, f.At, total)
	}
	r.Add("c")
	if f, _ := r.next(total); f.Text != "c" || f.At != total {
		t.Errorf("a watcher gets %q at %d; want the new piece at %d", f.Text, f.At, total)
	}
}

// End wakes the watchers, marks the frames, and ignores later pieces.
func TestReplyEnd(t *testing.T) {
	r := NewReply(3)
	r.Add("Done.")
	_, changed := r.next(5)
	ended := 0
	r.onEnd = func() { ended++ }
	r.End()
	r.End()
	select {
	case <-changed:
	default:
		t.Error("End did not wake the watchers")
	}
	r.Add("more")
	if f, _ := r.next(5); !f.End || f.Text != "" || f.Call != 3 {
		t.Errorf("after End: %+v; want the end of call 3, no text", f)
	}
	if ended != 1 {
		t.Errorf("onEnd ran %d times, want once", ended)
	}
}
