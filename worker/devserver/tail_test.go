package devserver

import (
	"errors"
	"strings"
	"testing"
)

func TestTail(t *testing.T) {
	tests := []struct {
		name   string
		n      int
		writes []string
		want   string
	}{
		{"empty", 3, nil, ""},
		{"fewer lines than kept", 3, []string{"a\nb\n"}, "a\nb"},
		{"keeps the last n", 2, []string{"a\nb\nc\nd\n"}, "c\nd"},
		{"lines split across writes", 3, []string{"hel", "lo\nwor", "ld\n"}, "hello\nworld"},
		{"unfinished last line shown", 2, []string{"a\nb\nparti"}, "b\nparti"},
		{"CRLF", 3, []string{"a\r\nb\r\n"}, "a\nb"},
		{"a panic's message kept before its stack", 2, []string{"warn\npanic: bind: address already in use\n\ngoroutine 1\nmain.main()\n"},
			"panic: bind: address already in use\n…\ngoroutine 1\nmain.main()"},
		{"a panic still in the tail is not repeated", 3, []string{"a\npanic: boom\n\ngoroutine 1\n"}, "panic: boom\n\ngoroutine 1"},
		{"the first causes only", 1, []string{"fatal error: 1\npanic: 2\npanic: 3\npanic: 4\nx\n"}, "fatal error: 1\npanic: 2\npanic: 3\n…\nx"},
		{"a cause pushed out by an unfinished line", 2, []string{"panic: p\nb\nparti"}, "panic: p\n…\nb\nparti"},
		{"a line merely mentioning panic", 1, []string{"x panic: no\ny\n"}, "y"},
		{"the logged error before the panic", 1, []string{"t=1 level=ERROR msg=\"Failed to start gRPC listener\"\nt=2 level=WARN msg=w\npanic: nil\nstack\n"},
			"t=1 level=ERROR msg=\"Failed to start gRPC listener\"\npanic: nil\n…\nstack"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := newTail(tt.n)
			var copied strings.Builder
			tl.copyTo = &copied
			for _, w := range tt.writes {
				if n, err := tl.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if got := tl.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			if got, want := copied.String(), strings.Join(tt.writes, ""); got != want {
				t.Errorf("copy = %q, want everything written, %q", got, want)
			}
		})
	}
}

func TestTailIgnoresCopyErrors(t *testing.T) {
	tl := newTail(2)
	tl.copyTo = failingWriter{}
	if n, err := tl.Write([]byte("x\n")); n != 2 || err != nil {
		t.Errorf("Write() = %d, %v; a failing copy must not stop the child's output", n, err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errFailing }

var errFailing = errors.ErrUnsupported
