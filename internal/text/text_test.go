package text

import (
	"slices"
	"testing"
)

func TestCut(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 3, "hel"},
		{"héllo", 2, "h"}, // é is two bytes: not split
		{"héllo", 3, "hé"},
		{"日本", 4, "日"},
		{"日本", 0, ""},
	} {
		if got := Cut(tt.s, tt.n); got != tt.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

func TestShorten(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"a  b\n c", 10, "a b c"},
		{"abcdef", 3, "abc…"},
		{"日本語", 4, "日…"},
	} {
		if got := Shorten(tt.s, tt.n); got != tt.want {
			t.Errorf("Shorten(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

func TestFirstLine(t *testing.T) {
	for _, tt := range []struct{ s, want string }{
		{"", ""},
		{"\n  \n  fix the bug  \nthen test", "fix the bug"},
		{"one", "one"},
	} {
		if got := FirstLine(tt.s); got != tt.want {
			t.Errorf("FirstLine(%q) = %q, want %q", tt.s, got, tt.want)
		}
	}
}

func TestIsAlnum(t *testing.T) {
	for _, tt := range []struct {
		c    rune
		want bool
	}{{'a', true}, {'Z', true}, {'7', true}, {'-', false}, {'é', false}, {' ', false}} {
		if got := IsAlnum(tt.c); got != tt.want {
			t.Errorf("IsAlnum(%q) = %v, want %v", tt.c, got, tt.want)
		}
	}
}

func TestFirstLineAfterTrim(t *testing.T) {
	for _, tt := range []struct{ s, want string }{
		{"", ""},
		{"  \n", ""},
		{"\n  \n  fix the bug  \nthen test", "fix the bug  "}, // unlike FirstLine: its end kept
		{"crlf\r\nnext", "crlf\r"},
		{" one  ", "one"},
	} {
		if got := FirstLineAfterTrim(tt.s); got != tt.want {
			t.Errorf("FirstLineAfterTrim(%q) = %q, want %q", tt.s, got, tt.want)
		}
	}
}

func TestOneLine(t *testing.T) {
	for _, tt := range []struct{ s, want string }{
		{"", ""},
		{" \n\t ", ""},
		{"  fix\tthe\n\n bug ", "fix the bug"},
		{"a\u00a0b", "a b"}, // Unicode white space too
	} {
		if got := OneLine(tt.s); got != tt.want {
			t.Errorf("OneLine(%q) = %q, want %q", tt.s, got, tt.want)
		}
	}
}

func TestSpaceControls(t *testing.T) {
	for _, tt := range []struct{ s, want string }{
		{"", ""},
		{"a\nb\r\tc\x00d\x7fe", "a b  c d e"},
		{"  two  spaces\u0085é", "  two  spaces\u0085é"}, // only ASCII controls
	} {
		if got := SpaceControls(tt.s); got != tt.want {
			t.Errorf("SpaceControls(%q) = %q, want %q", tt.s, got, tt.want)
		}
	}
}

func TestCutIndex(t *testing.T) {
	s := "a日🙂\xff\x80\x80\x80\x80b" // a, 3 bytes, 4 bytes, 5 invalid bytes, b
	tests := []struct{ n, want int }{
		{-1, 0}, {0, 0}, {1, 1}, {2, 1}, {3, 1}, {4, 4}, {5, 4}, {7, 4}, {8, 8},
		{9, 9}, {10, 10}, {12, 12}, {13, 13}, {14, 14}, {99, 14},
	}
	for _, tt := range tests {
		if got := CutIndex(s, tt.n); got != tt.want {
			t.Errorf("CutIndex(%q, %d) = %d, want %d", s, tt.n, got, tt.want)
		}
	}
	// Where the text is valid UTF-8, CutIndex and Cut agree.
	for _, v := range []string{"héllo wörld", "日本語🙂x", "plain"} {
		for n := -1; n <= len(v)+1; n++ {
			if got, want := CutIndex(v, n), len(Cut(v, max(n, 0))); got != want {
				t.Errorf("CutIndex(%q, %d) = %d, len(Cut) = %d", v, n, got, want)
			}
		}
	}
	// Cut backs over stray continuation bytes; CutIndex does not.
	if got := Cut("ab\x80\x80\x80\x80", 5); got != "a" {
		t.Errorf("Cut over stray continuation bytes = %q, want %q", got, "a")
	}
	if got := CutIndex("ab\x80\x80\x80\x80", 5); got != 5 {
		t.Errorf("CutIndex over stray continuation bytes = %d, want 5", got)
	}
}

func TestNextRuneStart(t *testing.T) {
	s := "a日🙂b" // a at 0, 日 at 1..3, 🙂 at 4..7, b at 8
	for _, tt := range []struct{ i, want int }{
		{0, 0}, {1, 1}, {2, 4}, {3, 4}, {4, 4}, {5, 8}, {7, 8}, {8, 8}, {9, 9}, {12, 12},
	} {
		if got := NextRuneStart(s, tt.i); got != tt.want {
			t.Errorf("NextRuneStart(%q, %d) = %d, want %d", s, tt.i, got, tt.want)
		}
		if got := NextRuneStart([]byte(s), tt.i); got != tt.want {
			t.Errorf("NextRuneStart([]byte(%q), %d) = %d, want %d", s, tt.i, got, tt.want)
		}
	}
	if got := NextRuneStart("\x80\x80", 0); got != 2 {
		t.Errorf("NextRuneStart of continuation bytes only = %d, want 2", got)
	}
}

func TestSortedKeys(t *testing.T) {
	got := SortedKeys(map[string]int{"b": 1, "c": 2, "a": 3, "": 4})
	if want := []string{"", "a", "b", "c"}; !slices.Equal(got, want) {
		t.Errorf("SortedKeys = %q, want %q", got, want)
	}
	if got := SortedKeys(map[string]bool(nil)); got == nil || len(got) != 0 {
		t.Errorf("SortedKeys(nil) = %#v, want an empty, non-nil slice", got)
	}
}
