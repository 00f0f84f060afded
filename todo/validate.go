package todo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// rawItem is an item as a model sends it: loosely typed, so that a wrong type
// becomes a clear error for the model instead of a decoding failure.
type rawItem struct {
	ID          json.RawMessage `json:"id"`
	Content     *string         `json:"content"`
	Description *string         `json:"description"` // Gemini CLI's name for content
	Status      *string         `json:"status"`
	Priority    *string         `json:"priority"`
}

// ParseWrite decodes the arguments of a write_todos call: the payload-shape
// step of the validation. It does not judge the list; Validate does.
func ParseWrite(args json.RawMessage) ([]Item, error) {
	var payload struct {
		Todos json.RawMessage `json:"todos"`
	}
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, fmt.Errorf(`arguments must be a JSON object like {"todos": [...]}`)
	}
	if err := json.Unmarshal(trimmed, &payload); err != nil {
		return nil, fmt.Errorf("arguments are not valid JSON: %v", err)
	}
	if len(payload.Todos) == 0 || string(payload.Todos) == "null" {
		return nil, fmt.Errorf(`"todos" is missing: send the whole list, e.g. {"todos": [{"content": "...", "status": "in_progress"}]}`)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(payload.Todos, &raws); err != nil {
		return nil, fmt.Errorf(`"todos" must be an array of items`)
	}
	if len(raws) > MaxItems {
		return nil, fmt.Errorf("the list has %d items; a list holds at most %d: merge small steps, or keep later work out of the list until the first items are done", len(raws), MaxItems)
	}
	items := make([]Item, 0, len(raws))
	for i, raw := range raws {
		it, err := parseItem(raw)
		if err != nil {
			return nil, fmt.Errorf("todos[%d]: %v", i, err)
		}
		items = append(items, it)
	}
	fillIDs(items)
	return items, nil
}

// fillIDs gives every item written without an id one (LLxprt): its 1-based
// position, or, when an explicit id of the same list already uses that
// number, the next number no item of the list uses. Explicit ids are never
// changed, so a filled-in id can never collide with one; duplicates among
// explicit ids are Validate's to refuse.
func fillIDs(items []Item) {
	used := make(map[string]bool, len(items)) // lookups only: order never matters
	for _, it := range items {
		if it.ID != "" {
			used[it.ID] = true
		}
	}
	for i := range items {
		if items[i].ID != "" {
			continue
		}
		n := i + 1
		for used[strconv.Itoa(n)] {
			n++
		}
		items[i].ID = strconv.Itoa(n)
		used[items[i].ID] = true
	}
}

func parseItem(raw json.RawMessage) (Item, error) {
	var r rawItem
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return Item{}, fmt.Errorf("must be an object with content and status")
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return Item{}, wrongType(err)
	}
	var it Item
	switch {
	case r.Content != nil:
		it.Content = *r.Content
	case r.Description != nil:
		it.Content = *r.Description
	default:
		return Item{}, fmt.Errorf("content is missing")
	}
	if r.Status == nil {
		return Item{}, fmt.Errorf("status is missing: want pending, in_progress, completed, cancelled or blocked")
	}
	it.Status = Status(*r.Status)
	if !it.Status.Valid() {
		return Item{}, fmt.Errorf("status %q is not one of pending, in_progress, completed, cancelled, blocked", *r.Status)
	}
	if r.Priority != nil {
		it.Priority = Priority(*r.Priority)
		if !it.Priority.Valid() {
			return Item{}, fmt.Errorf("priority %q is not one of high, medium, low", *r.Priority)
		}
	}
	id, err := parseID(r.ID)
	if err != nil {
		return Item{}, err
	}
	it.ID = id
	return it, nil
}

// wrongType words an item's decoding error for the model: the field and the
// JSON type it got, not the Go types of the decoder's message.
func wrongType(err error) error {
	te, ok := errors.AsType[*json.UnmarshalTypeError](err)
	if !ok || te.Field == "" {
		return errors.New("has a field of the wrong type: content, status, priority and id are strings")
	}
	got := map[string]string{"number": "a number", "bool": "a boolean", "array": "an array", "object": "an object"}[te.Value]
	if got == "" {
		got = te.Value
	}
	// Every field of rawItem that can fail is a string: id takes any JSON.
	return fmt.Errorf("%s must be a string, not %s", te.Field, got)
}

// parseID accepts a string or a number: models write both.
func parseID(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s), nil
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String(), nil
	}
	return "", fmt.Errorf("id must be a string or a number")
}

// Validate judges a new list against the old one in cubepi's order (after the
// payload shape, which ParseWrite checks): an empty list over unfinished items,
// blank content, duplicate ids, then the in-progress policy. It returns the
// list to store, which differs from next only under the Normalize policy.
func Validate(old, next []Item, s Settings) ([]Item, error) {
	if len(next) == 0 {
		if !s.AllowEmptyOverUnfinished && !AllFinished(old) {
			return nil, fmt.Errorf("an empty list would drop %d unfinished item(s); mark them completed or cancelled instead of clearing the list", len(Unfinished(old)))
		}
		return []Item{}, nil
	}
	seen := make(map[string]int, len(next))
	for i, it := range next {
		if strings.TrimSpace(it.Content) == "" {
			return nil, fmt.Errorf("todos[%d]: content is blank; every item needs a short description", i)
		}
		if n := len(it.Content); n > MaxItemBytes {
			return nil, fmt.Errorf("todos[%d]: an item's content is %d bytes, over %d; keep each item a short description, and put the details in your messages or in files", i, n, MaxItemBytes)
		}
		if n := len(it.ID); n > MaxItemIDBytes {
			return nil, fmt.Errorf("todos[%d]: an item's id is %d bytes, over %d; an id is a short name, such as \"tests\"", i, n, MaxItemIDBytes)
		}
		if j, dup := seen[it.ID]; dup {
			return nil, fmt.Errorf("todos[%d]: id %q is already used by todos[%d]; ids must be unique", i, it.ID, j)
		}
		seen[it.ID] = i
	}
	out := slices.Clone(next)
	active := CountStatus(out, InProgress)
	switch s.InProgressPolicy {
	case ExactlyOne:
		// Exactly one in progress while an item can be worked on: one is
		// pending or in progress. Blocked items wait on something outside
		// the agent's control and cannot be worked on, so a list whose
		// unfinished items are all blocked (or that has none) may have zero
		// in progress; one pending item makes the rule apply again. Two in
		// progress are refused whatever the rest of the list holds.
		switch {
		case active > 1:
			return nil, fmt.Errorf("%d items are in_progress; exactly one item may be in_progress at a time", active)
		case active == 0 && CountStatus(out, Pending) > 0:
			return nil, fmt.Errorf("no item is in_progress; mark exactly one item in_progress (the one you are working on) while pending items remain (blocked items do not count)")
		}
	case AtMostOne:
		if active > 1 {
			return nil, fmt.Errorf("%d items are in_progress; at most one item may be in_progress at a time", active)
		}
	case Normalize:
		if active > 1 {
			last := -1
			for i, it := range out {
				if it.Status == InProgress {
					last = i
				}
			}
			for i := range out {
				if out[i].Status == InProgress && i != last {
					out[i].Status = Pending
				}
			}
		}
	}
	return out, nil
}
