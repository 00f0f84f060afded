package termtext

import (
	"strings"
	"unicode/utf8"
)

const (
	esc = 0x1b
	bel = 0x07
	st  = "\u009c" // the 8-bit string terminator
)

// Clean returns s without the terminal controls the package comment lists.
func Clean(s string) string {
	i := firstUnsafe(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c == esc {
			i = skipEscape(s, i+1)
			continue
		}
		if c < utf8.RuneSelf {
			if printable(c) {
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case isC1(r):
			i = skipC1(s, r, i+size)
			continue
		case isBidi(r):
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// firstUnsafe is the index of the first byte of s that Clean would not
// copy as it is, -1 when there is none.
func firstUnsafe(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if !printable(c) {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || isC1(r) || isBidi(r) {
			return i
		}
		i += size
	}
	return -1
}

// printable reports whether an ASCII byte is text to a terminal.
func printable(c byte) bool {
	return c >= 0x20 && c != 0x7f || c == '\n' || c == '\t'
}

func isC1(r rune) bool { return r >= 0x80 && r <= 0x9f }

func isBidi(r rune) bool {
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// skipEscape returns the index after the sequence whose ESC is just before
// i. An ESC that begins no sequence (at the end, before a control or a
// non-ASCII character) is skipped alone.
func skipEscape(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[':
		return skipCSI(s, i+1)
	case ']', 'P', 'X', '^', '_':
		return skipString(s, i+1)
	}
	// ESC, intermediate bytes, one final byte (ECMA-35): ESC 7, ESC ( B.
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
		i++
	}
	return i
}

// skipCSI returns the index after the control sequence whose introducer is
// just before i: parameter and intermediate bytes, then a final byte. Any
// other byte ends a malformed sequence without being part of it.
func skipCSI(s string, i int) int {
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x3f {
		i++
	}
	if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
		i++
	}
	return i
}

// skipString returns the index after the control string (OSC, DCS, SOS, PM,
// APC) whose introducer is just before i: its payload up to a BEL or a
// string terminator, or to the end of s. BEL ends only an OSC on most
// terminals, but taking it as the end of any string leaves nothing but text
// behind either way. An ESC that is not ESC \ ends the string and begins a
// sequence of its own, as it does on a terminal.
func skipString(s string, i int) int {
	for i < len(s) {
		switch {
		case s[i] == bel:
			return i + 1
		case s[i] == esc:
			if i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
			return i
		case strings.HasPrefix(s[i:], st):
			return i + len(st)
		}
		i++
	}
	return i
}

// skipC1 returns the index after the C1 control r, which ends just before
// i, with the payload of the sequence it begins.
func skipC1(s string, r rune, i int) int {
	switch r {
	case 0x9b: // CSI
		return skipCSI(s, i)
	case 0x90, 0x98, 0x9d, 0x9e, 0x9f: // DCS, SOS, OSC, PM, APC
		return skipString(s, i)
	}
	return i
}
