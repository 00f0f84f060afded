// Package fuzzcheck holds what the fuzz targets of todoflow check of every
// message they provoke: that it says what was wrong in words, not with Go's
// insides. It is imported by tests only.
//
// Messages quote what the model or the author sent (%q, or JSON), so quoted
// strings are left out of the search: a status "panic" may be echoed.
package fuzzcheck

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// goInsides are texts that show a failure of the code rather than a reason:
// a recovered panic, a runtime error, a bad format verb, a nil printed, and
// encoding/json's messages that name Go types.
var goInsides = []string{"panic", "runtime error", "%!", "<nil>", "Go struct field", "Go value of type"}

// quoted matches a string quoted by %q or by JSON.
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// Message fails t unless msg is a clear message: not empty, valid UTF-8 and
// free of goInsides outside quoted strings. what names the message's source.
func Message(t testing.TB, what, msg string) {
	t.Helper()
	if strings.TrimSpace(msg) == "" {
		t.Fatalf("%s: empty message", what)
	}
	if !utf8.ValidString(msg) {
		t.Fatalf("%s: message is not valid UTF-8: %q", what, msg)
	}
	words := quoted.ReplaceAllString(msg, `""`)
	for _, bad := range goInsides {
		if strings.Contains(words, bad) {
			t.Fatalf("%s: message shows %q: %q", what, bad, msg)
		}
	}
}
