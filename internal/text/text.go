// Package text holds the small string helpers that several packages need:
// cutting at rune boundaries, first lines, one-line forms, sorted keys.
package text

import (
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

// Shorten is s on one line (its runs of white space made one space), cut
// to at most n bytes between runes and marked with "…" when cut.
func Shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return Cut(s, n) + "…"
}

// Cut is s cut to at most n bytes, between runes: a search attribute, a
// payload or a terminal line must stay valid UTF-8.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// IsAlnum says c is an ASCII letter or digit.
func IsAlnum(c rune) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
