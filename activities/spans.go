package activities

import "github.com/todoflow/todoflow/model"

// Reading spans of a transcript from a copy that may lack some of its
// messages (the worker's cache, the run's history): what the copy has is
// taken, the rest is read at once, as the fewest spans.

func spanLen(spans []Span) int {
	n := 0
	for _, sp := range spans {
		n += max(sp.End-sp.Start, 0)
	}
	return n
}

// gather returns the messages of spans that have has, in order, with an
// empty message in place of each it lacks; holes are the spans it lacks,
// and at says where each hole's messages go in out.
func gather(spans []Span, has func(i int) *model.Message) (out []model.Message, holes []Span, at []int) {
	out = make([]model.Message, 0, spanLen(spans))
	for _, sp := range spans {
		for i := sp.Start; i < sp.End; i++ {
			if m := has(i); m != nil {
				out = append(out, *m)
				continue
			}
			if n := len(holes); n > 0 && holes[n-1].End == i {
				holes[n-1].End++
			} else {
				holes = append(holes, Span{Start: i, End: i + 1})
				at = append(at, len(out))
			}
			out = append(out, model.Message{}) // filled by fillHoles
		}
	}
	return out, holes, at
}

// fillHoles puts got, the messages of holes read elsewhere, in their places
// in out, calling keep with each message's index.
func fillHoles(out []model.Message, holes []Span, at []int, got []model.Message, keep func(i int, m model.Message)) error {
	if len(got) != spanLen(holes) {
		return errShortRead(len(got), spanLen(holes))
	}
	k := 0
	for h, sp := range holes {
		for i := sp.Start; i < sp.End; i++ {
			out[at[h]+i-sp.Start] = got[k]
			keep(i, got[k])
			k++
		}
	}
	return nil
}
