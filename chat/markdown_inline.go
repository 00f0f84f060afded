package chat

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// The inside of a line of markdown: its spans of text, each with its
// styles, wrapped into lines and painted.

// bits are the styles of a span.
type bits uint8

const (
	bBold bits = 1 << iota
	bItalic
	bStrike
	bCode      // `inline code`
	bLink      // a link's text
	bFaint     // a link's address, a code block, a bullet, a rule, a quote's bar
	bHeading   // a heading's text
	bUnderline // a first or second level heading's text
)

// mdSGR is the sequence that sets every combination of bits, made once: a
// reply is painted span by span at every redraw of the reply being
// written. (Not lipgloss: it underlines a text one character at a time.)
var mdSGR = func() (seqs [256]string) {
	for b := range seqs {
		var st ansi.Style
		if b&int(bBold|bHeading) != 0 {
			st = st.Bold()
		}
		if b&int(bFaint) != 0 {
			st = st.Faint()
		}
		if b&int(bItalic) != 0 {
			st = st.Italic(true)
		}
		if b&int(bStrike) != 0 {
			st = st.Strikethrough(true)
		}
		if b&int(bLink|bUnderline) != 0 {
			st = st.Underline(true)
		}
		if b&int(bCode) != 0 {
			st = st.ForegroundColor(ansi.Green)
		}
		seqs[b] = st.String()
	}
	return seqs
}()

// span is text in one set of styles.
type span struct {
	text string
	b    bits
}

// inline parses a line's inline markup into spans in the styles b and the
// block's (r.base). What it does not recognise, an unclosed delimiter
// included, is text.
func (r *mdRenderer) inline(s string, b bits) []span {
	p := inlineParser{r: r}
	return p.parse(s, b|r.base)
}

// nested parses the inside of an emphasis or a link: what was looked for
// in vain up to the end of the line may be there before the inside ends.
func (p *inlineParser) nested(s string, b bits) {
	outer := p.failed
	p.failed = nil
	p.parse(s, b)
	p.failed = outer
}

// fail notes that delim was looked for in vain.
func (p *inlineParser) fail(delim string) {
	if p.failed == nil {
		p.failed = map[string]bool{}
	}
	p.failed[delim] = true
}

type inlineParser struct {
	r   *mdRenderer
	out []span
	// failed are the delimiters already looked for in vain: each is looked
	// for once, so that a line of a thousand lone "*" costs a thousand
	// steps, not a million.
	failed map[string]bool
}

// text adds s in the styles b. Spans in the same styles are joined only
// when a line is painted: joining here would copy a long line once per
// escaped character.
func (p *inlineParser) text(s string, b bits) {
	if s != "" {
		p.out = append(p.out, span{s, b})
	}
}

func (p *inlineParser) parse(s string, b bits) []span {
	plain := 0 // the start of the text not yet added
	for i := 0; i < len(s); {
		c := s[i]
		var (
			end  int  // where what was recognised ends
			done bool // it was
			add  func()
		)
		switch {
		case c == '\\' && i+1 < len(s) && strings.IndexByte("\\`*_~[]()#!<>|-+.", s[i+1]) >= 0:
			end, done = i+2, true
			add = func() { p.text(s[i+1:i+2], b) }
		case c == '`':
			end, done, add = p.code(s, i, b)
		case c == '*' || c == '_' || c == '~':
			end, done, add = p.emphasis(s, i, b)
		case c == '[' || c == '!' && strings.HasPrefix(s[i:], "!["):
			end, done, add = p.link(s, i, b)
		case c == '<':
			if j := strings.IndexByte(s[i:], '>'); j > 0 {
				if u := s[i+1 : i+j]; strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") {
					end, done = i+j+1, true
					add = func() { p.text(u, b|bLink) }
				}
			}
		}
		if !done {
			i++
			continue
		}
		p.text(s[plain:i], b)
		add()
		i, plain = end, end
	}
	p.text(s[plain:], b)
	return p.out
}

// repeats is how many times s[i] repeats from i on (a delimiter run).
func repeats(s string, i int) int {
	n := 1
	for i+n < len(s) && s[i+n] == s[i] {
		n++
	}
	return n
}

// code is a code span: n backticks, its text, n backticks. Without
// colour the backticks stay: they are what says it is code.
func (p *inlineParser) code(s string, i int, b bits) (int, bool, func()) {
	n := repeats(s, i)
	delim := s[i : i+n]
	if !p.failed[delim] {
		for j := i + n; j < len(s); {
			k := strings.Index(s[j:], delim)
			if k < 0 {
				break
			}
			j += k
			if repeats(s, j) != n {
				j += repeats(s, j)
				continue
			}
			text := s[i+n : j]
			if p.r.colour {
				if len(text) > 2 && text[0] == ' ' && text[len(text)-1] == ' ' {
					text = text[1 : len(text)-1]
				}
				return j + n, true, func() { p.text(text, b|bCode) }
			}
			return j + n, true, func() { p.text(s[i:j+n], b) }
		}
		p.fail(delim)
	}
	return i + n, true, func() { p.text(delim, b) }
}

// emphasis is *italic*, **bold**, ***both*** (or with _), ~~struck~~: an
// opening run followed by a non-space, closed on the same line by a run as
// long preceded by one; "_" only between words (snake_case stays).
func (p *inlineParser) emphasis(s string, i int, b bits) (int, bool, func()) {
	n := repeats(s, i)
	delim := s[i : i+n]
	literal := func() { p.text(delim, b) }
	var style bits
	switch {
	case s[i] == '~' && n == 2:
		style = bStrike
	case s[i] == '~' || n > 3:
		return i + n, true, literal
	case n == 1:
		style = bItalic
	case n == 2:
		style = bBold
	default:
		style = bBold | bItalic
	}
	under := s[i] == '_'
	if i+n >= len(s) || s[i+n] == ' ' || under && i > 0 && isWordByte(s[i-1]) || p.failed[delim] {
		return i + n, true, literal
	}
	for j := i + n + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
			continue
		case '`': // a code span hides its stars
			m := repeats(s, j)
			if k := strings.Index(s[j+m:], s[j:j+m]); k >= 0 {
				j += m + k
			}
			j += m - 1
			continue
		case s[i]:
		default:
			continue
		}
		m := repeats(s, j)
		if m != n || s[j-1] == ' ' || under && j+m < len(s) && isWordByte(s[j+m]) {
			j += m - 1
			continue
		}
		inner := s[i+n : j]
		return j + n, true, func() { p.nested(inner, b|style) }
	}
	p.fail(delim)
	return i + n, true, literal
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// link is [text](url), shown as its text and its address in brackets (an
// image, ![alt](url), as its alt text and address): the terminal shows
// where a link goes, and no hyperlink hides it.
func (p *inlineParser) link(s string, i int, b bits) (int, bool, func()) {
	open := i
	if s[i] == '!' {
		open++
	}
	literal := func() { p.text(s[i:open+1], b) }
	if p.failed["]("] {
		return open + 1, true, literal
	}
	// The text's brackets may nest, as in [a [b] c](url).
	depth := 0
	for j := open; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '[':
			depth++
		case ']':
			if depth--; depth > 0 {
				continue
			}
			if j+1 >= len(s) || s[j+1] != '(' {
				return open + 1, true, literal
			}
			k := closingParen(s, j+1)
			if k < 0 {
				p.fail("](")
				return open + 1, true, literal
			}
			text, url := s[open+1:j], strings.TrimSpace(s[j+2:k])
			url = strings.Trim(url, "<>")
			return k + 1, true, func() {
				p.nested(text, b|bLink)
				if url != "" && url != text {
					p.text(" (", b)
					p.text(url, b|bFaint)
					p.text(")", b)
				}
			}
		}
	}
	p.fail("](")
	return open + 1, true, literal
}

// closingParen is the index of the ")" that closes the "(" at i, -1 when
// none does.
func closingParen(s string, i int) int {
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return j
			}
		}
	}
	return -1
}

// wrap lays spans out in lines of at most width columns, words kept whole
// where they fit: lead starts the first line, hang the others. A word
// wider than a line is cut where the line ends.
func (r *mdRenderer) wrap(spans []span, width int, lead, hang []span) []string {
	var (
		out     []string
		cur     = append(make([]span, 0, 16), lead...)
		w       = spansWidth(lead)
		start   = w // the width of the line's lead
		pending []span
	)
	newline := func() {
		out = append(out, r.paint(cur))
		cur = append(cur[:0], hang...)
		w = spansWidth(hang)
		start, pending = w, pending[:0]
	}
	pieces, ends := words(spans)
	from := 0
	for _, end := range ends {
		word := pieces[from:end]
		from = end
		if word[0].text[0] == ' ' {
			if w > start {
				pending = append(pending, word...)
			}
			continue
		}
		ww, pw := spansWidth(word), spansWidth(pending)
		if w > start && w+pw+ww > width {
			newline()
		} else {
			cur = append(cur, pending...)
			w += pw
		}
		pending = pending[:0]
		for _, piece := range word {
			for piece.text != "" {
				pw := textWidth(piece.text)
				if w+pw <= width {
					cur = append(cur, piece)
					w += pw
					break
				}
				if ansi.Truncate(piece.text, width-w, "") == "" && w > start {
					newline()
					continue
				}
				head := cutWidth(piece.text, width-w)
				cur = append(cur, span{head, piece.b})
				newline()
				piece.text = piece.text[len(head):]
			}
		}
	}
	if w > start || len(out) == 0 {
		out = append(out, r.paint(cur))
	}
	return out
}

// words splits spans into words and runs of spaces: pieces[ends[i-1]:ends[i]]
// is the i-th, each piece in one style (a word may change styles, as in
// **bold**, or `code`.).
func words(spans []span) (pieces []span, ends []int) {
	pieces = make([]span, 0, len(spans)*2)
	ends = make([]int, 0, len(spans)*2)
	last := false // the latest piece is spaces
	for _, sp := range spans {
		t := sp.text
		for t != "" {
			space := t[0] == ' '
			n := strings.IndexFunc(t, func(c rune) bool { return (c == ' ') != space })
			if n < 0 {
				n = len(t)
			}
			if len(pieces) > 0 && last != space {
				ends = append(ends, len(pieces))
			}
			pieces, last = append(pieces, span{t[:n], sp.b}), space
			t = t[n:]
		}
	}
	if len(pieces) > 0 {
		ends = append(ends, len(pieces))
	}
	return pieces, ends
}

func spansWidth(spans []span) int {
	w := 0
	for _, s := range spans {
		w += textWidth(s.text)
	}
	return w
}

// paint is a line of spans in their styles; without colour, their text.
// A style never spans two lines: each line can be shown alone.
func (r *mdRenderer) paint(spans []span) string {
	var b strings.Builder
	for i := 0; i < len(spans); i++ {
		sp := spans[i]
		for i+1 < len(spans) && spans[i+1].b == sp.b {
			sp.text += spans[i+1].text
			i++
		}
		if !r.colour || sp.b == 0 || strings.TrimSpace(sp.text) == "" && sp.b&(bLink|bUnderline|bStrike) == 0 {
			b.WriteString(sp.text)
			continue
		}
		b.WriteString(mdSGR[sp.b])
		b.WriteString(sp.text)
		b.WriteString(ansi.ResetStyle)
	}
	return strings.TrimRight(b.String(), " ")
}
