package chat

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/todoflow/todoflow/internal/termtext"
)

// Markdown as the terminal view shows a reply: the markup a model writes
// (headings, **bold**, *italic*, `code`, fenced code, lists, quotes, links,
// rules) becomes styles, and every word the model wrote stays on the
// screen. It is our own, not glamour: glamour pads every line to the width
// with styled spaces, turns links into OSC 8 hyperlinks, rewraps code,
// redraws tables, brings ten modules and takes about 30 ms for a reply of
// 200 lines, where this takes under 0.5 ms (BenchmarkReply200Lines).
//
// Rules that keep it safe to show anything:
//   - Line breaks are kept as the model wrote them (a terminal reply reads
//     better so than joined into paragraphs), and a delimiter is matched
//     only within its line: a reply cut mid-stream (an unclosed ** or ```)
//     shows its marker as text, or the rest as code, until the rest comes.
//   - Every line is wrapped here, at the view's width, wide characters
//     counted as two, so that the view counts its own lines right; a style
//     never spans a line break, so that any line can be cut off.
//   - Code and tables are never rewrapped, only cut at the width; a table
//     that fits is aligned (table.go).
//   - Without colour (NO_COLOR, a terminal that has none) there is no
//     escape sequence at all: the layout is the same, emphasis markers go,
//     `code` and the # of a heading stay (they say what colour said).

// replyView renders replies at the view's width and colours, and keeps the
// latest: the view redraws the reply being written at every key and every
// look, and it changes only when more of it comes.
type replyView struct {
	width  int
	colour bool
	last   struct {
		text   string
		width  int
		colour bool
		lines  []string
	}
}

// replies is the ui's replyView, set to the view's width and colours.
func (u *ui) replies() *replyView {
	u.rv.width = u.width
	u.rv.colour = u.profile == colorprofile.Unknown || u.profile >= colorprofile.ANSI
	return &u.rv
}

// lines is a reply as it shows: "● " before its first line, its other lines
// under the first's text, all at most the view's width.
func (v *replyView) lines(text string) []string {
	width := max(v.width, 20)
	if l := &v.last; l.lines != nil && l.text == text && l.width == width && l.colour == v.colour {
		return l.lines
	}
	out := renderMarkdown(termtext.Clean(strings.Trim(text, "\n")), width-2, v.colour)
	for i := range out {
		if i == 0 {
			out[i] = "● " + out[i]
		} else if out[i] != "" {
			out[i] = "  " + out[i]
		}
	}
	v.last.text, v.last.width, v.last.colour, v.last.lines = text, width, v.colour, out
	return out
}

// renderMarkdown lays src out in lines of at most width columns, styled
// when colour is set.
func renderMarkdown(src string, width int, colour bool) []string {
	r := &mdRenderer{colour: colour}
	return r.blocks(strings.Split(src, "\n"), max(width, 8))
}

type mdRenderer struct {
	colour bool
	base   bits // the styles of the block around: a quote's italics
}

var (
	reFence     = regexp.MustCompile("^( *)(```+|~~~+)(.*)$")
	reHeading   = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	reRule      = regexp.MustCompile(`^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$`)
	reItem      = regexp.MustCompile(`^( *)([-*+]|\d{1,9}[.)])(?:[ \t]+(.*))?$`)
	reQuote     = regexp.MustCompile(`^ {0,3}> ?(.*)$`)
	reTableRule = regexp.MustCompile(`^ *\|? *:?-+:? *(\| *:?-+:? *)+\|? *$`)
)

// bullets are the marks of unordered items, by depth.
var bullets = []string{"•", "◦", "▪"}

// blocks renders the lines of a document (or of a quote's inside).
func (r *mdRenderer) blocks(lines []string, width int) []string {
	var (
		out   []string
		list  []int // the indents of the list items we are inside, outermost first
		hang  int   // where the text of the latest item starts
		blank bool  // the line before was blank
	)
	for i := 0; i < len(lines); i++ {
		line := expandTabs(lines[i])
		trimmed := strings.TrimSpace(line)
		indent := len(line) - len(strings.TrimLeft(line, " "))
		if trimmed == "" {
			if len(out) > 0 && !blank {
				out = append(out, "")
			}
			blank = true
			continue
		}
		wasBlank := blank
		blank = false
		// Inside a list, an indented line belongs to its latest item.
		base := 0
		if len(list) > 0 && (indent > list[len(list)-1] || !wasBlank) {
			base = hang
		} else {
			list = nil
		}
		if m := matchIf(reFence, line, "`~"); m != nil {
			end := closingFence(lines, i+1, m[2])
			code := lines[i+1 : end]
			out = append(out, r.code(code, m[3], len(m[1]), base, width)...)
			i = end // the closing fence, or the last line when none came yet
			continue
		}
		if len(list) == 0 && indent >= 4 {
			// Indented code, as markdown has it.
			j := i + 1
			for j < len(lines) && (strings.TrimSpace(lines[j]) == "" || leadingSpaces(expandTabs(lines[j])) >= 4) {
				j++
			}
			for j > i+1 && strings.TrimSpace(lines[j-1]) == "" {
				j--
			}
			out = append(out, r.code(lines[i:j], "", 4, 0, width)...)
			i = j - 1
			continue
		}
		switch m := matchIf(reItem, line, "-*+0123456789"); {
		case m != nil && matchIf(reRule, line, "-*_") == nil:
			for len(list) > 0 && list[len(list)-1] > indent {
				list = list[:len(list)-1]
			}
			if len(list) == 0 || list[len(list)-1] < indent {
				list = append(list, indent)
			}
			depth := min(len(list)-1, 8)
			mark := m[2]
			if strings.ContainsAny(mark, "-*+") {
				mark = bullets[depth%len(bullets)]
			}
			lead := strings.Repeat("  ", depth)
			hang = len(lead) + textWidth(mark) + 1
			out = append(out, r.wrap(r.inline(m[3], 0), width,
				[]span{{lead, 0}, {mark, bFaint}, {" ", 0}}, []span{{strings.Repeat(" ", hang), 0}})...)
			continue
		case matchIf(reRule, line, "-*_") != nil:
			out = append(out, r.paint([]span{{strings.Repeat("─", min(width, 40)), bFaint}}))
			continue
		}
		pad := []span{{strings.Repeat(" ", base), 0}}
		if m := matchIf(reHeading, line, "#"); m != nil {
			b := bHeading
			if len(m[1]) <= 2 {
				b |= bUnderline
			}
			text := r.inline(m[2], b)
			if !r.colour {
				text = append([]span{{m[1] + " ", 0}}, text...)
			}
			out = append(out, r.wrap(text, width, pad, pad)...)
			continue
		}
		if m := matchIf(reQuote, line, ">"); m != nil {
			inner := []string{m[1]}
			for i+1 < len(lines) {
				q := matchIf(reQuote, lines[i+1], ">")
				if q == nil {
					break
				}
				inner = append(inner, q[1])
				i++
			}
			bar := r.paint([]span{{"│", bFaint}}) + " "
			outer := r.base
			r.base |= bItalic
			for _, l := range r.blocks(inner, width-base-2) {
				out = append(out, strings.Repeat(" ", base)+bar+l)
			}
			r.base = outer
			continue
		}
		if isTable(lines, i) {
			rows := tableRows(lines, i)
			i += len(rows) - 1
			if t, ok := r.table(rows, base, width); ok {
				out = append(out, t...)
				continue
			}
			for _, row := range rows {
				out = append(out, r.verbatim(row, base, 0, width)...)
			}
			continue
		}
		out = append(out, r.wrap(r.inline(trimmed, 0), width, pad, pad)...)
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// closingFence is the index of the line that closes a fence opened with
// fence, searched from from; len(lines) when the reply has not closed it
// (yet: it may be streaming).
func closingFence(lines []string, from int, fence string) int {
	for j := from; j < len(lines); j++ {
		t := strings.TrimSpace(lines[j])
		if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
			return j
		}
	}
	return len(lines)
}

// isTable reports whether lines[i] starts a table: a line that starts with
// "|", or one with a "|" above a row of dashes.
func isTable(lines []string, i int) bool {
	t := strings.TrimSpace(lines[i])
	if strings.HasPrefix(t, "|") {
		return true
	}
	return strings.Contains(t, "|") && i+1 < len(lines) && reTableRule.MatchString(lines[i+1])
}

// code shows a code block's lines as they are, their fence's indent taken
// off, indented and dimmed, coloured when its info string names a language
// chroma knows (highlight.go): cut at the width, never rewrapped.
func (r *mdRenderer) code(lines []string, info string, strip, base, width int) []string {
	src := make([]string, len(lines))
	for i, l := range lines {
		l = expandTabs(l)
		src[i] = strings.TrimRight(l[min(strip, leadingSpaces(l)):], " ")
	}
	var segs [][]segment
	if r.colour {
		segs = highlight(info, src)
	}
	var out []string
	for i, l := range src {
		if segs != nil && l != "" {
			out = append(out, codeLine(segs[i], base+4, width)...)
			continue
		}
		out = append(out, r.verbatim(l, base+4, bFaint, width)...)
	}
	return out
}

// verbatim shows line as it is after indent columns, cut into pieces of
// the room left when it is wider.
func (r *mdRenderer) verbatim(line string, indent int, b bits, width int) []string {
	pad := []span{{strings.Repeat(" ", indent), 0}}
	if line == "" {
		return []string{""}
	}
	var out []string
	room := max(width-indent, 1)
	for line != "" {
		head := line
		if textWidth(line) > room {
			head = cutWidth(line, room)
		}
		out = append(out, r.paint(append(pad, span{head, b})))
		line = line[len(head):]
	}
	return out
}

// cutWidth is the longest start of s at most n columns wide, and at least
// its first character (one wider than n has to go somewhere).
func cutWidth(s string, n int) string {
	head := ansi.Truncate(s, n, "")
	if head == "" {
		head, _ = ansi.FirstGraphemeCluster(s, ansi.GraphemeWidth)
	}
	return head
}

// matchIf is re's match of line, tried only when the line's first
// character (after spaces) is one of firsts: most lines are text, and a
// regexp per construct per line would cost more than all the rest.
func matchIf(re *regexp.Regexp, line, firsts string) []string {
	t := strings.TrimLeft(line, " ")
	if t == "" || strings.IndexByte(firsts, t[0]) < 0 {
		return nil
	}
	return re.FindStringSubmatch(line)
}

// textWidth is how many columns s takes: its length when it is ASCII (a
// reply has been cleaned of controls, and its tabs expanded), which most
// text is.
func textWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return ansi.StringWidth(s)
		}
	}
	return len(s)
}

func leadingSpaces(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }

// expandTabs replaces tabs by spaces to the next multiple of four: a
// terminal's tab stops are its own, and the width of a line must be known.
func expandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	col := 0
	for _, c := range s {
		if c == '\t' {
			n := 4 - col%4
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		}
		b.WriteRune(c)
		col += max(textWidth(string(c)), 0)
	}
	return b.String()
}
