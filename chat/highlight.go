package chat

import (
	"strings"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/charmbracelet/x/ansi"
)

// Code in a fence that names its language is coloured by kind of token
// (chroma's lexers: keywords, names, strings, numbers, comments), in the
// terminal's own sixteen colours, so that a theme of the user's applies;
// the rest of it stays dim as any code block. Without colour, or for a
// language chroma does not know, the block is as before. Lines are never
// rewrapped: a long one is cut into pieces, a token's colour started
// again on each.

// segment is text of one token kind on one line: sgr its style.
type segment struct {
	text string
	sgr  string
}

var (
	sgrDim      = ansi.Style{}.Faint().String()
	sgrKeyword  = ansi.Style{}.ForegroundColor(ansi.Magenta).String()
	sgrName     = ansi.Style{}.ForegroundColor(ansi.Blue).String()
	sgrBuiltin  = ansi.Style{}.ForegroundColor(ansi.Cyan).String()
	sgrString   = ansi.Style{}.ForegroundColor(ansi.Green).String()
	sgrNumber   = ansi.Style{}.ForegroundColor(ansi.Yellow).String()
	sgrComment  = ansi.Style{}.Faint().Italic(true).String()
	sgrOperator = ""
)

// tokenSGR is the style of a token of type t.
func tokenSGR(t chroma.TokenType) string {
	switch {
	case t.InCategory(chroma.Keyword):
		return sgrKeyword
	case t.InCategory(chroma.Comment):
		return sgrComment
	case t.InSubCategory(chroma.LiteralString):
		return sgrString
	case t.InSubCategory(chroma.LiteralNumber):
		return sgrNumber
	case t == chroma.NameFunction || t == chroma.NameClass || t == chroma.NameFunctionMagic:
		return sgrName
	case t == chroma.NameBuiltin || t == chroma.NameBuiltinPseudo || t.InCategory(chroma.KeywordType):
		return sgrBuiltin
	case t.InCategory(chroma.Operator):
		return sgrOperator
	}
	return sgrDim
}

// highlight is lines of code in language lang as segments, line by line;
// nil when chroma has no lexer for lang.
func highlight(lang string, lines []string) [][]segment {
	words := strings.Fields(lang) // "go title=x": the first word names it
	if len(words) == 0 {
		return nil
	}
	lexer := lexers.Get(words[0])
	if lexer == nil {
		return nil
	}
	it, err := chroma.Coalesce(lexer).Tokenise(nil, strings.Join(lines, "\n"))
	if err != nil {
		return nil
	}
	out := make([][]segment, len(lines))
	row := 0
	for tok := it(); tok != chroma.EOF; tok = it() {
		sgr := tokenSGR(tok.Type)
		for i, part := range strings.Split(tok.Value, "\n") {
			if i > 0 {
				row++
			}
			if row >= len(lines) {
				return out // the lexer's own last line end
			}
			if part != "" {
				out[row] = append(out[row], segment{part, sgr})
			}
		}
	}
	return out
}

// codeLine shows one highlighted line after indent columns, cut into
// pieces of the room left when it is wider.
func codeLine(segs []segment, indent, width int) []string {
	pad := strings.Repeat(" ", indent)
	room := max(width-indent, 1)
	var out []string
	var b strings.Builder
	used := 0
	flush := func() {
		out = append(out, pad+b.String())
		b.Reset()
		used = 0
	}
	for _, s := range segs {
		text := s.text
		for text != "" {
			if used >= room {
				flush()
			}
			head := text
			if textWidth(text) > room-used {
				head = cutWidth(text, room-used)
				if used > 0 && textWidth(head) > room-used {
					flush() // a wide character that does not fit here
					continue
				}
			}
			if s.sgr == "" || strings.TrimSpace(head) == "" {
				b.WriteString(head)
			} else {
				b.WriteString(s.sgr + head + ansi.ResetStyle)
			}
			used += textWidth(head)
			text = text[len(head):]
		}
	}
	if used > 0 || len(out) == 0 {
		flush()
	}
	return out
}
