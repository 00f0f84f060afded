package todo

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestBatches(t *testing.T) {
	ev := func(n int) Event {
		return Event{EventID: n, Type: EventStepAdded, AgentID: "a", Data: json.RawMessage(fmt.Sprintf("%q", strings.Repeat("x", 100)))}
	}
	one, _ := json.Marshal(ev(1))
	per := len(one) + 1
	many := make([]Event, 10)
	for i := range many {
		many[i] = ev(i + 1)
	}
	huge := Event{EventID: 99, Type: EventStepAdded, Data: json.RawMessage(fmt.Sprintf("%q", strings.Repeat("y", 10*per)))}
	tests := []struct {
		name   string
		events []Event
		budget int
		sizes  []int
	}{
		{"none", nil, per, nil},
		{"all fit", many, 11 * per, []int{10}},
		{"three per batch", many, 3*per + 2, []int{3, 3, 3, 1}},
		{"one per batch", many, per + 1, []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
		{"an event over the budget goes alone", []Event{ev(1), huge, ev(2)}, 2 * per, []int{1, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Batches(tt.events, tt.budget)
			var sizes []int
			var order []int
			for _, b := range got {
				sizes = append(sizes, len(b))
				for _, e := range b {
					order = append(order, e.EventID)
				}
				if data, _ := json.Marshal(b); len(b) > 1 && len(data) > tt.budget+2 {
					t.Errorf("a batch of %d events is %d bytes, over %d", len(b), len(data), tt.budget)
				}
			}
			if fmt.Sprint(sizes) != fmt.Sprint(tt.sizes) {
				t.Errorf("batch sizes %v, want %v", sizes, tt.sizes)
			}
			var want []int
			for _, e := range tt.events {
				want = append(want, e.EventID)
			}
			if fmt.Sprint(order) != fmt.Sprint(want) {
				t.Errorf("events in order %v, want %v", order, want)
			}
		})
	}
}
