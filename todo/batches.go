package todo

import "encoding/json"

// Batches splits events, in order, into runs of at most budget bytes of
// JSON each, so that a tree message carrying them (one signal) stays under
// its cap however many events one tool call or one backlog yields. An event
// larger than budget travels alone: its size is bounded where it is made
// (the plan's caps), not here.
func Batches(events []Event, budget int) [][]Event {
	var out [][]Event
	start, size := 0, 0
	for i, ev := range events {
		b, _ := json.Marshal(ev)
		n := len(b) + 1 // the comma between events
		if i > start && size+n > budget {
			out = append(out, events[start:i])
			start, size = i, 0
		}
		size += n
	}
	if len(events) > start {
		out = append(out, events[start:])
	}
	return out
}

// Latest is the longest tail of events of at most n events and budget bytes
// of JSON: what a state or a carry shows of a log whose events, each bounded
// by the plan's caps, could together pass the payload's cap.
func Latest(events []Event, n, budget int) []Event {
	start, size := len(events), 0
	for start > 0 && len(events)-start < n {
		b, _ := json.Marshal(events[start-1])
		if size+len(b)+1 > budget {
			break
		}
		size += len(b) + 1
		start--
	}
	return events[start:]
}
