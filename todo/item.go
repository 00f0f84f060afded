package todo

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
)

// Status is the state of one todo item.
type Status string

// Statuses. Completed and cancelled items are finished; blocked items are
// unfinished but waiting on something outside the agent's control, so they are
// never a target of continuation.
const (
	Pending    Status = "pending"
	InProgress Status = "in_progress"
	Completed  Status = "completed"
	Cancelled  Status = "cancelled"
	Blocked    Status = "blocked"
)

// Valid reports whether s is one of the known statuses.
func (s Status) Valid() bool {
	switch s {
	case Pending, InProgress, Completed, Cancelled, Blocked:
		return true
	}
	return false
}

// Finished reports whether an item in this status needs no more work.
func (s Status) Finished() bool { return s == Completed || s == Cancelled }

// Priority is LLxprt's optional item priority; empty means none was given.
type Priority string

// Priorities.
const (
	High   Priority = "high"
	Medium Priority = "medium"
	Low    Priority = "low"
)

// Valid reports whether p is empty or a known priority.
func (p Priority) Valid() bool {
	switch p {
	case "", High, Medium, Low:
		return true
	}
	return false
}

// Item is one entry of the todo list.
type Item struct {
	ID       string   `json:"id"`
	Content  string   `json:"content"`
	Status   Status   `json:"status"`
	Priority Priority `json:"priority"`
}

// Unfinished returns the items that still need work, in list order.
func Unfinished(items []Item) []Item {
	var out []Item
	for _, it := range items {
		if !it.Status.Finished() {
			out = append(out, it)
		}
	}
	return out
}

// AllFinished reports whether no item needs more work (true for an empty list).
func AllFinished(items []Item) bool { return len(Unfinished(items)) == 0 }

// CountStatus counts the items in status s.
func CountStatus(items []Item, s Status) int {
	n := 0
	for _, it := range items {
		if it.Status == s {
			n++
		}
	}
	return n
}

// Current returns the first in-progress item, if any.
func Current(items []Item) (Item, bool) { return first(items, InProgress) }

// Next returns the item continuation should name: the in-progress one, else
// the first pending one. Blocked items are never a target.
func Next(items []Item) (Item, bool) {
	if it, ok := Current(items); ok {
		return it, true
	}
	return first(items, Pending)
}

func first(items []Item, s Status) (Item, bool) {
	i := slices.IndexFunc(items, func(it Item) bool { return it.Status == s })
	if i < 0 {
		return Item{}, false
	}
	return items[i], true
}

// Equal reports whether two lists hold the same items in the same order.
func Equal(a, b []Item) bool { return slices.Equal(a, b) }

// ListDigest names a list by its content: two lists have the same digest
// when they are Equal.
func ListDigest(items []Item) string {
	b, _ := json.Marshal(items)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
