package chat

import (
	"fmt"
	"strings"
)

// A long paste (a log, a file) would fill the prompt and push everything
// else off the screen, so it shows there as one marker, "[pasted 200
// lines]", that stands for the text: the message sent holds the text
// whole, and Tab puts it back in the prompt to edit. The transcript shows
// a long message of the user's by its first lines (messageEntries).

// collapseLines is the most lines a paste may have and show whole.
const collapseLines = 10

// pastes are the texts the markers in the prompt stand for.
type pastes struct {
	texts map[string]string // by marker
}

// add returns what a paste of text puts in the prompt: text itself when
// it is short, else a marker of its own.
func (p *pastes) add(text string) string {
	n := strings.Count(text, "\n") + 1
	if n <= collapseLines {
		return text
	}
	if p.texts == nil {
		p.texts = map[string]string{}
	}
	marker := fmt.Sprintf("[pasted %d lines]", n)
	for i := 2; p.texts[marker] != ""; i++ {
		marker = fmt.Sprintf("[pasted %d lines #%d]", n, i)
	}
	p.texts[marker] = text
	return marker
}

// expand is text with each marker replaced by the paste it stands for; a
// marker the user edited is text like any other.
func (p *pastes) expand(text string) string {
	for marker, pasted := range p.texts {
		text = strings.ReplaceAll(text, marker, pasted)
	}
	return text
}

// collapsed reports whether text holds a marker.
func (p *pastes) collapsed(text string) bool {
	for marker := range p.texts {
		if strings.Contains(text, marker) {
			return true
		}
	}
	return false
}

// reset forgets the pastes: the prompt was sent or cleared.
func (p *pastes) reset() { p.texts = nil }
