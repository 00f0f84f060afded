package termtext

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClean(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain ascii", "Fixed the check in auth.go.\n\tdone", "Fixed the check in auth.go.\n\tdone"},
		{"unicode", "héllo wörld, 修复, Привет, 🚀👍🏽, ⎿ ● ✓", "héllo wörld, 修复, Привет, 🚀👍🏽, ⎿ ● ✓"},
		{"right-to-left text", "שלום עולם مرحبا", "שלום עולם مرحبا"},
		{"empty", "", ""},
		{"OSC 52 with BEL", "copy \x1b]52;c;aGk=\x07this", "copy this"},
		{"OSC 52 with ST", "copy \x1b]52;c;aGk=\x1b\\this", "copy this"},
		{"OSC 8 link", "see \x1b]8;;https://evil.example/\x07docs\x1b]8;;\x07 here", "see docs here"},
		{"OSC title", "\x1b]0;owned\x07title", "title"},
		{"OSC unterminated", "a\x1b]52;c;aGk=", "a"},
		{"OSC ended by another sequence", "a\x1b]52;c;aGk=\x1b[2Kb", "ab"},
		{"CSI erase line", "fine\x1b[2K\x1b[1Agone", "finegone"},
		{"CSI colour", "\x1b[31mred\x1b[0m", "red"},
		{"CSI private", "\x1b[?1049hscreen\x1b[?25l", "screen"},
		{"CSI with intermediate", "\x1b[2 qcursor", "cursor"},
		{"CSI cut short", "a\x1b[12", "a"},
		{"CSI malformed", "a\x1b[1\nb", "a\nb"},
		{"8-bit CSI", "a\u009b2Kb", "ab"},
		{"8-bit OSC", "a\u009d52;c;aGk=\u009cb", "ab"},
		{"8-bit OSC ended by BEL", "a\u009d8;;http://x\x07b", "ab"},
		{"DCS", "a\x1bP1$r0m\x1b\\b", "ab"},
		{"8-bit DCS", "a\u0090q#0;2;0;0;0\u009cb", "ab"},
		{"APC", "a\x1b_Gf=100;AAAA\x1b\\b", "ab"},
		{"PM and SOS", "a\x1b^pm\x1b\\b\x1bXsos\x1b\\c", "abc"},
		{"two-byte ESC", "a\x1b7b\x1b8c\x1bcd", "abcd"},
		{"charset designation", "a\x1b(0lqk\x1b(Bb", "alqkb"},
		{"ESC at the end", "a\x1b", "a"},
		{"ESC before unicode", "a\x1bé", "aé"},
		{"other C1", "a\u0085b\u008ec", "abc"},
		{"carriage return", "real\rfake\r\n", "realfake\n"},
		{"backspace", "rm -rf ~\b\b\b\bls", "rm -rf ~ls"},
		{"bell, NUL, DEL", "a\x07b\x00c\x7fd", "abcd"},
		{"bidi override", "file\u202egnp.exe", "filegnp.exe"},
		{"bidi isolates and embeddings", "\u2066a\u2069\u202ab\u202c\u2067c\u2068d", "abcd"},
		{"invalid UTF-8", "a\x9b2Kb\xffc", "a\uFFFD2Kb\uFFFDc"},
	}
	for _, tt := range tests {
		if got := Clean(tt.in); got != tt.want {
			t.Errorf("%s: Clean(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

// Text with nothing to remove is the string it was, not a copy: the
// clients clean every line they print.
func TestCleanKeepsCleanText(t *testing.T) {
	s := strings.Repeat("héllo 修复 🚀\n\t", 100)
	if got := Clean(s); got != s {
		t.Fatalf("Clean changed clean text: %q", got)
	}
	if n := testing.AllocsPerRun(100, func() { _ = Clean(s) }); n != 0 {
		t.Errorf("Clean of clean text allocates %v times", n)
	}
}

// checkClean fails t unless out, the cleaned in, holds nothing a terminal
// obeys, and cleaning it again changes nothing.
func checkClean(t *testing.T, in, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("Clean(%q) = %q: not UTF-8", in, out)
	}
	for _, r := range out {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || isC1(r) || isBidi(r) {
			t.Fatalf("Clean(%q) = %q: keeps %U", in, out, r)
		}
	}
	if again := Clean(out); again != out {
		t.Fatalf("Clean(%q) = %q, and cleaned again %q", in, out, again)
	}
}

// Random texts of the pieces sequences are made of.
func TestCleanRandom(t *testing.T) {
	pieces := []string{"\x1b", "[", "]", "P", "_", "\\", "\x07", ";", "2K", "52;c;", "aGk=", "\u009b", "\u009c", "\u009d",
		"\u0090", "\u202e", "\u2066", "\r", "\n", "\t", "\b", "\x7f", "\x00", "\xc2", "\xe2\x80", "é", "修", "🚀", "text ", "1", "?", " ", "m"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		checkClean(t, b.String(), Clean(b.String()))
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b]52;c;aGk=\x07", "\x1b]8;;http://x\x1b\\a\x1b]8;;\x1b\\", "\x1b[2K\x1b[1A",
		"\u009b2K", "\x1bP1$r\x1b\\", "\u202eabc", "héllo 修复 🚀", "\x9b\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := Clean(in)
		checkClean(t, in, out)
		if firstUnsafe(in) < 0 && out != in {
			t.Fatalf("Clean(%q) = %q: changed clean text", in, out)
		}
	})
}
