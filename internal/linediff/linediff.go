package linediff

import (
	"fmt"
	"strings"

	"github.com/todoflow/todoflow/internal/text"
)

// Options bound a diff; a zero field takes its default.
type Options struct {
	// Context is how many unchanged lines show around each change
	// (default 3).
	Context int
	// MaxLines and MaxBytes bound the output, its last line (the note of
	// what was left out) included (defaults 200 and 16 KiB).
	MaxLines int
	MaxBytes int
	// MaxLineBytes cuts a longer line, marking the cut (default 512).
	MaxLineBytes int
	// MaxEdits is the most edits the search looks for before it reports
	// the changed lines as replaced (default 1000); the search's memory
	// grows with its square.
	MaxEdits int
	// MaxSteps bounds the search's time: lines compared and edits tried
	// (default 4,000,000).
	MaxSteps int
}

func (o Options) withDefaults() Options {
	set := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	set(&o.Context, 3)
	set(&o.MaxLines, 200)
	set(&o.MaxBytes, 16<<10)
	set(&o.MaxLineBytes, 512)
	set(&o.MaxEdits, 1000)
	set(&o.MaxSteps, 4_000_000)
	return o
}

// Stats counts the lines a diff adds and removes, all of them, shown or
// not.
type Stats struct {
	Added, Removed int
	// Replaced is set when the change was too large to compare line by
	// line: Added and Removed count the lines of the middle that differs.
	Replaced bool
}

// Unified returns the hunks from a to b in unified form (see the package
// comment), within o's bounds, and what they add and remove; "" when the
// texts are equal.
func Unified(a, b string, o Options) (string, Stats) {
	if a == b {
		return "", Stats{}
	}
	o = o.withDefaults()
	la, lb := splitLines(a), splitLines(b)
	ia, ib := intern(la, lb)

	// The common head and tail are set aside: the search runs on the
	// middle only.
	head := 0
	for head < len(ia) && head < len(ib) && ia[head] == ib[head] {
		head++
	}
	tail := 0
	for tail < len(ia)-head && tail < len(ib)-head && ia[len(ia)-1-tail] == ib[len(ib)-1-tail] {
		tail++
	}
	ma, mb := ia[head:len(ia)-tail], ib[head:len(ib)-tail]
	mid, ok := script(ma, mb, o.MaxEdits, o.MaxSteps)
	if !ok {
		// Too large to compare: the middle stands as replaced.
		w := newWriter(o)
		w.line(fmt.Sprintf("@@ -%s +%s @@", span(head, len(ma)), span(head, len(mb))))
		w.line(fmt.Sprintf("\\ %d lines replaced by %d lines (too many changes to compare line by line)", len(ma), len(mb)))
		return w.String(), Stats{Added: len(mb), Removed: len(ma), Replaced: true}
	}
	ops := make([]op, 0, head+len(mid)+tail)
	for i := range head {
		ops = append(ops, op{' ', i, i})
	}
	var st Stats
	for _, p := range mid {
		switch p.kind {
		case '+':
			st.Added++
		case '-':
			st.Removed++
		}
		ops = append(ops, op{p.kind, p.a + head, p.b + head})
	}
	for i := range tail {
		ops = append(ops, op{' ', len(la) - tail + i, len(lb) - tail + i})
	}
	return hunks(ops, la, lb, st, o), st
}

// hunks writes the changes of ops with their context, within o's bounds.
func hunks(ops []op, la, lb []string, st Stats, o Options) string {
	w := newWriter(o)
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		// A hunk: from Context lines before this change to Context lines
		// after the last change that is at most 2*Context lines from the
		// one before it.
		start := max(i-o.Context, 0)
		end := i
		for j := i; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				end = j + 1
			} else if j-end >= 2*o.Context {
				break
			}
		}
		end = min(end+o.Context, len(ops))
		var na, nb int
		for _, p := range ops[start:end] {
			if p.kind != '+' {
				na++
			}
			if p.kind != '-' {
				nb++
			}
		}
		w.line(fmt.Sprintf("@@ -%s +%s @@", span(firstA(ops, start), na), span(firstB(ops, start), nb)))
		for _, p := range ops[start:end] {
			var text string
			if p.kind == '-' {
				text = la[p.a]
			} else {
				text = lb[p.b]
			}
			w.line(string(p.kind) + w.cut(strings.TrimSuffix(text, "\n")))
			if !strings.HasSuffix(text, "\n") {
				w.line(`\ No newline at end of file`)
			}
		}
		i = end
	}
	if w.left > 0 {
		w.note(fmt.Sprintf("\\ %d more lines of the diff not shown (in all +%d -%d lines)", w.left, st.Added, st.Removed))
	}
	return w.String()
}

// firstA is where ops[start:] begins in a: the index of its first line
// that is in a, or the number of lines of a before it.
func firstA(ops []op, start int) int {
	for _, p := range ops[start:] {
		if p.kind != '+' {
			return p.a
		}
	}
	return ops[start].a
}

func firstB(ops []op, start int) int {
	for _, p := range ops[start:] {
		if p.kind != '-' {
			return p.b
		}
	}
	return ops[start].b
}

// span is one side of a hunk's header: the first line (1-based) and the
// count, as diff writes them (",1" left out; an empty side names the line
// before it).
func span(first, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", first)
	case 1:
		return fmt.Sprint(first + 1)
	}
	return fmt.Sprintf("%d,%d", first+1, n)
}

// splitLines splits s after each "\n"; the last line may lack it.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// intern numbers the lines of a and b, equal lines alike, so that the
// search compares numbers.
func intern(a, b []string) ([]int, []int) {
	ids := map[string]int{}
	num := func(lines []string) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	return num(a), num(b)
}

// writer keeps the lines of a diff that fit its bounds, and counts the
// others.
type writer struct {
	o     Options
	b     strings.Builder
	lines int
	left  int // lines that did not fit
}

// noteRoom is kept free of MaxBytes for the note of what was left out.
const noteRoom = 100

func newWriter(o Options) *writer { return &writer{o: o} }

func (w *writer) line(s string) {
	if w.left > 0 || w.lines+1 >= w.o.MaxLines || w.b.Len()+len(s)+1 > w.o.MaxBytes-noteRoom {
		w.left++
		return
	}
	w.add(s)
}

// note adds the last line, which the room kept for it holds.
func (w *writer) note(s string) { w.add(s) }

func (w *writer) add(s string) {
	if w.lines > 0 {
		w.b.WriteByte('\n')
	}
	w.b.WriteString(s)
	w.lines++
}

func (w *writer) String() string { return w.b.String() }

// cut shortens a line over MaxLineBytes, where a character begins.
func (w *writer) cut(s string) string {
	if len(s) <= w.o.MaxLineBytes {
		return s
	}
	head := text.Cut(s, w.o.MaxLineBytes)
	return head + fmt.Sprintf(" … (%d more bytes)", len(s)-len(head))
}
