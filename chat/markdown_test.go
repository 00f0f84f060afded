package chat

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/internal/termtext"
)

// Each construct, with colours (the text, and one styled piece that must be
// there) and without (the text, no escape sequence at all).
func TestRenderMarkdown(t *testing.T) {
	for _, tt := range []struct {
		name   string
		src    string
		colour string // the lines with colours, their styles taken off
		styled string // a piece of the coloured lines, styles and all
		plain  string // the lines without colours
	}{
		{"heading", "# Plan\n## Steps ##\n### Details",
			"Plan\nSteps\nDetails", "\x1b[1;4mPlan\x1b[m", "# Plan\n## Steps\n### Details"},
		{"bold and italic", "a **bold** and *italic* and __b__ and _i_ and ***both***",
			"a bold and italic and b and i and both", "\x1b[1mbold\x1b[m", "a bold and italic and b and i and both"},
		{"emphasis inside", "**a *b* c**", "a b c", "\x1b[1;3mb\x1b[m", "a b c"},
		{"not emphasis", "snake_case_name, 2 * 3 * 4, a ** b, *", "snake_case_name, 2 * 3 * 4, a ** b, *", "", "snake_case_name, 2 * 3 * 4, a ** b, *"},
		{"strike", "~~old~~ new", "old new", "\x1b[9mold\x1b[m", "old new"},
		{"inline code", "run `go test ./...` now, ``a ` b``", "run go test ./... now, a ` b", "\x1b[32mgo test ./...\x1b[m",
			"run `go test ./...` now, ``a ` b``"},
		{"code hides stars", "`a*b` and *c*", "a*b and c", "\x1b[3mc\x1b[m", "`a*b` and c"},
		{"escapes", `\*not italic\* and \_x\_`, "*not italic* and _x_", "", "*not italic* and _x_"},
		{"link", "see [the docs](https://example.com/a_(b)) and <https://x.org>",
			"see the docs (https://example.com/a_(b)) and https://x.org", "\x1b[4mthe docs\x1b[m (\x1b[2mhttps://example.com/a_(b)\x1b[m)",
			"see the docs (https://example.com/a_(b)) and https://x.org"},
		{"link as its address", "[https://x.org](https://x.org)", "https://x.org", "\x1b[4mhttps://x.org\x1b[m", "https://x.org"},
		{"image", "![a cat](cat.png)", "a cat (cat.png)", "", "a cat (cat.png)"},
		{"not a link", "[x] done, [y]", "[x] done, [y]", "", "[x] done, [y]"},
		{"bullets", "- one\n* two\n  - nested\n    + deeper\n- back",
			"• one\n• two\n  ◦ nested\n    ▪ deeper\n• back", "\x1b[2m•\x1b[m one", "• one\n• two\n  ◦ nested\n    ▪ deeper\n• back"},
		{"numbered", "1. first\n2) second\n   - under it\n10. tenth",
			"1. first\n2) second\n  ◦ under it\n10. tenth", "\x1b[2m1.\x1b[m first", "1. first\n2) second\n  ◦ under it\n10. tenth"},
		// As in markdown, a line right under an item's is the item's.
		{"an item's next lines", "- one\n  goes on\n\n  and on\nlazy",
			"• one\n  goes on\n\n  and on\n  lazy", "", "• one\n  goes on\n\n  and on\n  lazy"},
		{"a list ends", "- one\n\nafter", "• one\n\nafter", "", "• one\n\nafter"},
		{"fenced code", "before\n```go\nfunc f() {\n\treturn  **x**\n}\n```\nafter",
			"before\n    func f() {\n        return  **x**\n    }\nafter", "\x1b[35mfunc\x1b[m \x1b[34mf\x1b[m",
			"before\n    func f() {\n        return  **x**\n    }\nafter"},
		{"code in a language chroma does not know: dim", "```nosuchlang\nfunc f() {}\n```", "    func f() {}", "\x1b[2mfunc f() {}\x1b[m", "    func f() {}"},
		{"code without a language: dim", "```\nfunc f() {}\n```", "    func f() {}", "\x1b[2mfunc f() {}\x1b[m", "    func f() {}"},
		{"a string and a comment", "```python\nx = \"hi\"  # why\n```", "    x = \"hi\"  # why", "\x1b[32m\"hi\"\x1b[m", "    x = \"hi\"  # why"},
		{"tilde fence in a list", "- step\n  ~~~\n  make\n  ~~~", "• step\n      make", "", "• step\n      make"},
		{"indented code", "text\n\n    x := 1\n    y := 2", "text\n\n    x := 1\n    y := 2", "\x1b[2mx := 1\x1b[m", "text\n\n    x := 1\n    y := 2"},
		{"quote", "> said **this**\n> - and that", "│ said this\n│ • and that", "\x1b[1;3mthis\x1b[m", "│ said this\n│ • and that"},
		{"rule", "a\n\n---\n\n***\nb", "a\n\n" + strings.Repeat("─", 40) + "\n\n" + strings.Repeat("─", 40) + "\nb", "", "a\n\n" + strings.Repeat("─", 40) + "\n\n" + strings.Repeat("─", 40) + "\nb"},
		{"table", "| a | **b** |\n|---|:-:|\n| 1 | `2` |", " a │ **b**\n───┼───────\n 1 │  `2`", "\x1b[1m**b**\x1b[m", " a │ **b**\n───┼───────\n 1 │  `2`"},
		{"table without edges", "a | b\n--|--\n1 | 2", " a │ b\n───┼───\n 1 │ 2", "", " a │ b\n───┼───\n 1 │ 2"},
		{"table aligned", "| file | lines |\n|------|------:|\n| auth/token.go | 12 |\n| a\\|b | 3 | extra |",
			" file          │ lines\n───────────────┼───────┼───────\n auth/token.go │    12\n a|b           │     3 │ extra", "",
			" file          │ lines\n───────────────┼───────┼───────\n auth/token.go │    12\n a|b           │     3 │ extra"},
		{"a table being written: as it is", "| a | b |", "| a | b |", "", "| a | b |"},
		{"a table too wide: as it is", "| " + strings.Repeat("x", 70) + " | y |\n|---|---|", "| " + strings.Repeat("x", 58) + "\n" + strings.Repeat("x", 12) + " | y |\n|---|---|", "",
			"| " + strings.Repeat("x", 58) + "\n" + strings.Repeat("x", 12) + " | y |\n|---|---|"},
		{"blank lines", "a\n\n\n\nb\n\n", "a\n\nb", "", "a\n\nb"},
		{"line breaks kept", "one\ntwo  \nthree", "one\ntwo\nthree", "", "one\ntwo\nthree"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			coloured := strings.Join(renderMarkdown(tt.src, 60, true), "\n")
			if got := ansi.Strip(coloured); got != tt.colour {
				t.Errorf("with colours:\n%s\nwant:\n%s", got, tt.colour)
			}
			if !strings.Contains(coloured, tt.styled) {
				t.Errorf("with colours: %q\nwant in it %q", coloured, tt.styled)
			}
			plain := strings.Join(renderMarkdown(tt.src, 60, false), "\n")
			if plain != tt.plain {
				t.Errorf("without colours:\n%s\nwant:\n%s", plain, tt.plain)
			}
			if strings.ContainsRune(plain, '\x1b') {
				t.Errorf("without colours, an escape sequence: %q", plain)
			}
		})
	}
}

// What a model writes, every construct at once.
const sampleReply = "# Fixing the token check\n\n" +
	"The check ran **after** the session lookup, so *expired* tokens passed. See [the RFC](https://www.rfc-editor.org/rfc/rfc6750) and `auth/token.go`.\n\n" +
	"## What changed\n\n" +
	"1. Moved `checkToken` before `lookupSession`.\n" +
	"2. Added a test:\n" +
	"   - an expired token is refused with **401**\n" +
	"   - a valid one passes, even with a very long name that has to wrap at the width of the view somewhere\n\n" +
	"```go\nfunc TestExpired(t *testing.T) {\n\tif err := check(expired); !errors.Is(err, ErrExpired) { // a comment long enough to be cut at the width of the view\n\t\tt.Fatal(err)\n\t}\n}\n```\n\n" +
	"> **Note:** the old order is still in `v1`.\n\n" +
	"| file | lines |\n|------|------:|\n| auth/token.go | 12 |\n\n---\n\n" +
	"漢字の説明も折り返されます。漢字の説明も折り返されます。漢字の説明も折り返されます。 And an unbrokenwordthatislongerthananylineoftheviewcanholdatall.\n"

// letters are the letters and digits of s in order, the markup's characters
// taken out: what the reader must find on the screen.
func letters(s string) []string {
	return strings.FieldsFunc(ansi.Strip(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r >= 0x3000)
	})
}

// Nothing the model wrote is lost, and no line is wider than the view, at
// any width, with colours or without.
func TestRenderMarkdownKeepsEveryWord(t *testing.T) {
	// The fence's language is markup.
	want := strings.Join(letters(strings.Replace(sampleReply, "```go", "```", 1)), " ")
	for _, width := range []int{8, 13, 20, 37, 80, 200} {
		for _, colour := range []bool{true, false} {
			lines := renderMarkdown(sampleReply, width, colour)
			// A word cut at the end of a line continues on the next.
			got := strings.Join(letters(strings.Join(lines, "")), " ")
			if stripSpaces(got) != stripSpaces(want) {
				t.Errorf("width %d, colour %v: the words differ:\n got %s\nwant %s", width, colour, got, want)
			}
			for _, l := range lines {
				if w := ansi.StringWidth(l); w > width {
					t.Errorf("width %d, colour %v: a line %d wide: %q", width, colour, w, l)
				}
			}
		}
	}
}

func stripSpaces(s string) string { return strings.ReplaceAll(s, " ", "") }

// fenceInfo matches a fence and its language, which is markup.
var fenceInfo = regexp.MustCompile("(?m)^( *```)[a-z]*")

// styleOpen matches an SGR sequence that sets a style (not the reset).
var styleOpen = regexp.MustCompile(`\x1b\[[0-9;]+m`)

// A reply being written is rendered at every step of its stream: an
// unclosed fence, **, ` or [ never breaks a line's width, never leaves a
// style open past its line, and every character written so far shows.
func TestRenderMarkdownStreamed(t *testing.T) {
	for i := range len(sampleReply) {
		if !utf8.RuneStart(sampleReply[i]) {
			continue
		}
		part := sampleReply[:i]
		for _, colour := range []bool{true, false} {
			lines := renderMarkdown(part, 40, colour)
			for _, l := range lines {
				if w := ansi.StringWidth(l); w > 40 {
					t.Fatalf("after %d bytes: a line %d wide: %q", i, w, l)
				}
				if opens := len(styleOpen.FindAllString(l, -1)); opens != strings.Count(l, ansi.ResetStyle) {
					t.Fatalf("after %d bytes: a style left open: %q", i, l)
				}
				if !colour && strings.ContainsRune(l, '\x1b') {
					t.Fatalf("after %d bytes, without colours: %q", i, l)
				}
			}
			if got, want := stripSpaces(strings.Join(letters(strings.Join(lines, "")), "")), stripSpaces(strings.Join(letters(fenceInfo.ReplaceAllString(part, "$1")), "")); got != want {
				t.Fatalf("after %d bytes (%q), words lost:\n got %s\nwant %s", i, part[max(i-20, 0):], got, want)
			}
		}
	}
	// Mid-fence, the rest is code: shown as it is.
	got := ansi.Strip(strings.Join(renderMarkdown("Here:\n```sh\nrm -rf **/*.tmp", 40, true), "\n"))
	if want := "Here:\n    rm -rf **/*.tmp"; got != want {
		t.Errorf("an open fence: %q, want %q", got, want)
	}
	// Mid-emphasis, the marker shows until its end comes.
	if got := strings.Join(renderMarkdown("it is **very", 40, false), "\n"); got != "it is **very" {
		t.Errorf("an open **: %q", got)
	}
}

// A line that is all delimiters costs one look per kind of delimiter, not
// one per pair of them.
func TestRenderMarkdownManyDelimiters(t *testing.T) {
	line := strings.Repeat("*a _b `c [d ~~e ", 20000)
	lines := renderMarkdown(line, 80, true)
	if got, want := len(letters(strings.Join(lines, " "))), 5*20000; got != want {
		t.Errorf("%d words, want %d", got, want)
	}
	escaped := strings.Repeat(`\*`, 100000)
	if got := strings.Join(renderMarkdown(escaped, 80, false), ""); got != strings.Repeat("*", 100000) {
		t.Errorf("escaped stars: %d bytes", len(got))
	}
}

// The view shows a reply as markdown (the one printed above and the one
// being written), wrapped at its width, cached while it does not change,
// and without colours when the terminal has none.
func TestReplyView(t *testing.T) {
	u := newUI(context.Background(), &session{id: "chat-1"}, nil)
	u.width, u.height = 30, 20
	lines := u.replies().lines(sampleReply)
	if again := u.replies().lines(sampleReply); &again[0] != &lines[0] {
		t.Errorf("the same reply was rendered again")
	}
	if !strings.HasPrefix(ansi.Strip(lines[0]), "● Fixing the token check") {
		t.Errorf("first line %q", lines[0])
	}
	for _, l := range lines[1:] {
		if l != "" && !strings.HasPrefix(l, "  ") {
			t.Errorf("a line not under the first's text: %q", l)
		}
		if ansi.StringWidth(l) > 30 {
			t.Errorf("a line wider than the view: %q", l)
		}
	}
	block := printed([]entry{{kindReply, sampleReply}}, u.replies())
	if strings.Contains(block, "**") || strings.Contains(block, "```") {
		t.Errorf("markup left in the printed reply:\n%s", block)
	}

	u.Update(lookMsg{ev: client.StreamChanged{Running: true, Call: 1, Text: "## Half\n\n- **done** and `x`, then"}})
	u.Update(lookMsg{ev: client.Looked{}})
	if view := ansi.Strip(u.View().Content); !strings.Contains(view, "● Half\n\n  • done and x, then") {
		t.Errorf("the reply being written, not as markdown:\n%s", view)
	}

	// NO_COLOR (the profile Detect gives it): no sequence at all.
	u.Update(tea.ColorProfileMsg{Profile: colorprofile.ASCII})
	block = printed([]entry{{kindReply, sampleReply}}, u.replies())
	if strings.ContainsRune(block, '\x1b') {
		t.Errorf("NO_COLOR: an escape sequence in the printed reply:\n%q", block)
	}
	if !strings.Contains(block, "# Fixing the token check") || !strings.Contains(block, "`auth/token.go`") {
		t.Errorf("NO_COLOR: the heading's # and the code's backticks should stay:\n%s", block)
	}
}

// A long reply being written, an open fence at its end, in a small window:
// the view still fits it, every line no wider than the window.
func TestReplyViewFitsWhileStreaming(t *testing.T) {
	long := strings.Repeat("A paragraph that is long enough to wrap twice in a narrow window, **bold**.\n\n", 30) + "```\n" + strings.Repeat("x", 200)
	for _, size := range [][2]int{{40, 12}, {32, 8}, {100, 30}} {
		u := newUI(context.Background(), &session{id: "chat-1"}, nil)
		u.width, u.height = size[0], size[1]
		u.input.SetWidth(size[0] - 1)
		for n := 10; n <= len(long); n += 97 {
			u.Update(lookMsg{ev: client.StreamChanged{Running: true, Call: 1, Text: long[:n]}})
			u.Update(lookMsg{ev: client.Looked{}})
			view := u.View().Content
			lines := strings.Split(view, "\n")
			if len(lines) > u.height {
				t.Fatalf("%dx%d, %d bytes: the view is %d lines:\n%s", size[0], size[1], n, len(lines), view)
			}
			for _, l := range lines {
				if w := ansi.StringWidth(l); w > u.width {
					t.Fatalf("%dx%d, %d bytes: a line %d wide: %q", size[0], size[1], n, w, l)
				}
			}
		}
	}
}

// Text the model wrote to control the terminal stays text in a rendered
// reply: it is cleaned before the markup is read.
func TestRenderMarkdownCleans(t *testing.T) {
	u := newUI(context.Background(), &session{id: "chat-1"}, nil)
	out := strings.Join(u.replies().lines("**a**\x1b]52;c;aGk=\x07 `b\x1b[2J`"), "\n")
	if strings.Contains(out, "\x1b]") || strings.Contains(out, "\x1b[2J") {
		t.Errorf("a control reached the screen: %q", out)
	}
}

// The price of rendering: a 200-line reply, as markdown (without the
// cache) and as it was shown before, plain.
func BenchmarkReply200Lines(b *testing.B) {
	reply := reply200()
	b.Run("markdown", func(b *testing.B) {
		for b.Loop() {
			v := replyView{width: 100, colour: true}
			_ = v.lines(reply)
		}
	})
	b.Run("markdown-cached", func(b *testing.B) {
		v := replyView{width: 100, colour: true}
		for b.Loop() {
			_ = v.lines(reply)
		}
	})
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			_ = "● " + termtext.Clean(reply)
		}
	})
}

func reply200() string {
	var b strings.Builder
	for i := 0; strings.Count(b.String(), "\n") < 200; i++ {
		fmt.Fprintf(&b, "## Step %d\n\nThe check ran **after** the lookup, so *expired* tokens passed; see `auth/token.go` and [the RFC](https://example.com/%d).\n\n- one item\n  - a nested one\n\n```go\nfunc f%d() error { return check(token) }\n```\n\n", i, i, i)
	}
	return b.String()
}
