package replystream

// Assembled is a reply as a follower has put it together from its frames:
// its last MaxBytes at most (Text), the bytes left out before them (Cut),
// and whether the call has ended.
type Assembled struct {
	Call int
	Text string
	Cut  int
	End  bool
}

// Apply places f's text at its offset: after what a has, in place of a
// tail sent again, or, when a missed something, instead of all of it.
func (a *Assembled) Apply(f Frame) {
	a.Call, a.End = f.Call, a.End || f.End
	have := a.Cut + len(a.Text)
	switch {
	case f.At == have:
		a.Text += f.Text
	case f.At < a.Cut || f.At > have:
		a.Text, a.Cut = f.Text, f.At
	default:
		a.Text = a.Text[:f.At-a.Cut] + f.Text
	}
	if start := tailStart([]byte(a.Text), MaxBytes); start > 0 {
		a.Text, a.Cut = a.Text[start:], a.Cut+start
	}
}
