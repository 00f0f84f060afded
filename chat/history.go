package chat

// history is what Up and Down recall at the prompt: the lines typed in this
// client (messages and commands) and the user's messages of the session's
// transcript, oldest first, without a line repeated right after itself.
//
// A message sent from here comes back in the transcript a moment later;
// echoes counts those not back yet, so that it is recalled once. A
// message the transcript shows and this client did not send (the
// transcript of a session attached to, another client's) is added when
// it shows.
type history struct {
	lines  []string
	echoes map[string]int
	// at is the line shown while browsing; len(lines) when not browsing,
	// and then draft is what was typed before the first Up.
	at    int
	draft string
}

// typed records a line sent from this client as it was typed; echo is the
// message it sent, as the transcript will show it ("" for a command).
func (h *history) typed(text, echo string) {
	if echo != "" {
		if h.echoes == nil {
			h.echoes = map[string]int{}
		}
		h.echoes[echo]++
	}
	h.add(text)
	h.stop()
}

// seen records a user message of the transcript.
func (h *history) seen(text string) {
	if h.echoes[text] > 0 {
		h.echoes[text]--
		return
	}
	h.add(text)
}

func (h *history) add(text string) {
	browsing := h.browsing()
	if text == "" || (len(h.lines) > 0 && h.lines[len(h.lines)-1] == text) {
		return
	}
	h.lines = append(h.lines, text)
	if !browsing {
		// A line that arrives while the user browses leaves the place as
		// it is; otherwise the next Up starts from the newest.
		h.at = len(h.lines)
	}
}

// prev is the line before the one shown; current is what the prompt holds,
// kept as the draft when browsing starts. ok is false at the oldest line.
func (h *history) prev(current string) (string, bool) {
	if h.at == 0 {
		return "", false
	}
	if h.at == len(h.lines) {
		h.draft = current
	}
	h.at--
	return h.lines[h.at], true
}

// next is the line after the one shown, and past the newest the draft;
// ok is false when not browsing.
func (h *history) next() (string, bool) {
	if h.at >= len(h.lines) {
		return "", false
	}
	h.at++
	if h.at == len(h.lines) {
		return h.draft, true
	}
	return h.lines[h.at], true
}

// browsing says a line of the history is shown (not the draft).
func (h *history) browsing() bool { return h.at < len(h.lines) }

// stop ends browsing, forgetting the draft: the prompt was cleared.
func (h *history) stop() { h.at, h.draft = len(h.lines), "" }
