// Package text holds the small string helpers that several packages need:
// cutting at rune boundaries, first lines, one-line forms, sorted keys.
//
// It imports nothing but the standard library, so that every package may use
// it, the ground floor (todo) included. Its functions are pure: workflow code
// calls them.
package text

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// FirstLine is s's first line that is not blank, trimmed.
func FirstLine(s string) string {
	for line := range strings.Lines(s) {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}

// FirstLineAfterTrim is s trimmed of white space, up to its first newline:
// the same line as FirstLine, but the blanks that end it (a "\r" of CRLF
// text) are kept when more lines follow.
func FirstLineAfterTrim(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// OneLine is s on one line: its runs of white space, newlines included, made
// one space, and none at either end.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// SpaceControls is s with each ASCII control character (below 0x20, and
// DEL) replaced by a space, so that a value cannot break a log line; unlike
// OneLine it keeps every other character where it was.
func SpaceControls(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// Shorten is s on one line (its runs of white space made one space), cut
// to at most n bytes between runes and marked with "…" when cut.
func Shorten(s string, n int) string {
	s = OneLine(s)
	if len(s) <= n {
		return s
	}
	return Cut(s, n) + "…"
}

// Cut is s cut to at most n bytes, between runes: a search attribute, a
// payload or a terminal line must stay valid UTF-8. It backs over every
// continuation byte, so a stray one of text that is not valid UTF-8 moves
// the cut too; CutIndex counts such a byte as a rune of its own.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// CutIndex returns the largest i <= n such that s[:i] does not end inside
// a UTF-8 encoded rune (len(s) when n >= len(s), 0 when n <= 0). Bytes that
// are not valid UTF-8 count as one rune each, as decoders read them (and as
// encoding/json replaces them), so a cut never changes how either side
// decodes. For valid UTF-8 it is len(Cut(s, n)).
func CutIndex(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	if n <= 0 {
		return 0
	}
	// A byte that is not a continuation byte always begins a rune (valid
	// or not). The rune n may be inside begins at most UTFMax-1 bytes
	// before it; if no byte back to there begins one, n is inside none.
	for i := n; i >= 0 && i > n-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			if _, size := utf8.DecodeRuneInString(s[i:]); i < n && i+size > n {
				return i
			}
			return n
		}
	}
	return n
}

// NextRuneStart is the first index at or after i where a rune of s begins:
// i moved forward over continuation bytes, len(s) when none is left. The
// start of a tail cut between runes.
func NextRuneStart[S ~string | ~[]byte](s S, i int) int {
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return i
}

// SortedKeys returns m's keys in order. It ranges over the map only to
// collect them, so workflow code may call it: the order of the range cannot
// reach the result.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// IsAlnum says c is an ASCII letter or digit.
func IsAlnum(c rune) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
