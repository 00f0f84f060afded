package text

import "testing"

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
