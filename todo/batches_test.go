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

func TestLatest(t *testing.T) {
	ev := func(n, size int) Event {
		return Event{EventID: n, Type: EventStepAdded, AgentID: "a", Data: json.RawMessage(fmt.Sprintf("%q", strings.Repeat("x", size)))}
	}
	one, _ := json.Marshal(ev(1, 100))
	per := len(one) + 1
	many := []Event{ev(1, 100), ev(2, 100), ev(3, 100), ev(4, 100)}
	tests := []struct {
		name      string
		events    []Event
		n, budget int
		want      []int // event ids
	}{
		{"none", nil, 10, per, nil},
		{"all", many, 10, 10 * per, []int{1, 2, 3, 4}},
		{"by count", many, 2, 10 * per, []int{3, 4}},
		{"by bytes", many, 10, 3*per - 1, []int{3, 4}},
		{"a large event stops the tail", []Event{ev(1, 100), ev(2, 5*per), ev(3, 100)}, 10, 3 * per, []int{3}},
		{"the last alone over the budget", []Event{ev(1, 100), ev(2, 5*per)}, 10, 3 * per, []int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []int
			for _, e := range Latest(tt.events, tt.n, tt.budget) {
				got = append(got, e.EventID)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("Latest = %v, want %v", got, tt.want)
			}
		})
	}
}
