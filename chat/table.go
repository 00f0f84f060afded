package chat

import (
	"strings"
)

// A markdown table shows aligned: its cells padded to their column's
// widest, as its rule row says (left, right ":", centred ":-:"), the
// columns parted by "│" and the header by a line. The cells keep their
// text as the model wrote it, markup and all, since a table's markup is
// rare and its alignment is what a reader needs. A table wider than the
// view, or one being written that has no rule row yet, shows as written
// (cut at the width, never rewrapped).

// tableRows are the lines of the table that starts at lines[i].
func tableRows(lines []string, i int) []string {
	var rows []string
	for ; i < len(lines) && strings.Contains(lines[i], "|"); i++ {
		rows = append(rows, expandTabs(strings.TrimRight(lines[i], " ")))
	}
	return rows
}

// cells splits a table row at its unescaped "|", its outer ones dropped.
func cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, `\|`) {
		row = row[:len(row)-1]
	}
	var out []string
	var cell strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row) && row[i+1] == '|':
			cell.WriteByte('|')
			i++
		case row[i] == '|':
			out = append(out, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteByte(row[i])
		}
	}
	return append(out, strings.TrimSpace(cell.String()))
}

// alignment is how a column's cells sit: by its rule cell's colons.
type alignment int

const (
	alignLeft alignment = iota
	alignRight
	alignCentre
)

func alignOf(rule string) alignment {
	left, right := strings.HasPrefix(rule, ":"), strings.HasSuffix(rule, ":")
	switch {
	case left && right:
		return alignCentre
	case right:
		return alignRight
	}
	return alignLeft
}

// table lays rows out aligned within width, after indent columns; ok is
// false when it cannot (no rule row under the first, or too wide).
func (r *mdRenderer) table(rows []string, indent, width int) ([]string, bool) {
	if len(rows) < 2 || !reTableRule.MatchString(rows[1]) {
		return nil, false
	}
	grid := make([][]string, 0, len(rows)-1)
	grid = append(grid, cells(rows[0]))
	for _, row := range rows[2:] {
		grid = append(grid, cells(row))
	}
	rule := cells(rows[1])
	cols := 0
	for _, row := range grid {
		cols = max(cols, len(row))
	}
	widths := make([]int, cols)
	for _, row := range grid {
		for c, cell := range row {
			widths[c] = max(widths[c], textWidth(cell))
		}
	}
	total := indent
	for _, w := range widths {
		total += w + 3
	}
	if total-1 > width {
		return nil, false
	}
	pad := strings.Repeat(" ", indent)
	line := func(row []string, b bits) string {
		spans := []span{{pad, 0}}
		// Empty cells at the end show nothing, not even their parting
		// (a styled one would leave spaces at the end of the line).
		last := len(row) - 1
		for last > 0 && row[last] == "" {
			last--
		}
		for c := range last + 1 {
			cell := ""
			if c < len(row) {
				cell = row[c]
			}
			if c > 0 {
				spans = append(spans, span{" │ ", bFaint})
			} else {
				spans = append(spans, span{" ", 0})
			}
			a := alignLeft
			if c < len(rule) {
				a = alignOf(rule[c])
			}
			spans = append(spans, span{aligned(cell, widths[c], a), b})
		}
		return r.paint(spans)
	}
	out := []string{line(grid[0], bBold)}
	var sep []string
	for _, w := range widths {
		sep = append(sep, strings.Repeat("─", w+2))
	}
	out = append(out, r.paint([]span{{pad, 0}, {strings.Join(sep, "┼"), bFaint}}))
	for _, row := range grid[1:] {
		out = append(out, line(row, 0))
	}
	return out, true
}

// aligned is cell padded to width columns as a says.
func aligned(cell string, width int, a alignment) string {
	gap := width - textWidth(cell)
	switch a {
	case alignRight:
		return strings.Repeat(" ", gap) + cell
	case alignCentre:
		return strings.Repeat(" ", gap/2) + cell + strings.Repeat(" ", gap-gap/2)
	}
	return cell + strings.Repeat(" ", gap)
}
