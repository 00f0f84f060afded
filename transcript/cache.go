package transcript

import (
	"container/list"
	"fmt"
	"sync"

	"go.temporal.io/sdk/temporal"

	"github.com/todoflow/todoflow/model"
)

// DefaultCacheBytes bounds the transcript cache of a worker that sets no
// bound of its own.
const DefaultCacheBytes = 64 << 20

// Cache keeps the transcripts the worker's model calls were sent (see the
// package doc). It is bounded in bytes; the runs used least recently leave
// first. It is safe for concurrent use.
type Cache struct {
	max  int64
	mu   sync.Mutex
	size int64
	// runs are the entries by workflow id, then run id: a continued run
	// finds what it carries in the runs before it.
	runs map[string]map[string]*cachedRun
	lru  *list.List // of *cachedRun, most recently used first
}

type cachedRun struct {
	workflowID, runID string
	el                *list.Element
	epoch             int
	msgs              []*model.Message // nil where the cache has not seen the message
	// answer is the latest model answer, expected as message answerAt;
	// reads of the transcript never see it (see Cache.Answer).
	answer   *model.Message
	answerAt int
	// values are the turn's large tool results by digest, until its next
	// model call (see Cache.Remember).
	values map[string]string
	size   int64
}

// NewCache returns a cache of at most maxBytes of messages (estimated); 0
// means DefaultCacheBytes, a negative bound keeps nothing past the call
// that uses it.
func NewCache(maxBytes int64) *Cache {
	if maxBytes == 0 {
		maxBytes = DefaultCacheBytes
	}
	return &Cache{max: maxBytes, runs: map[string]map[string]*cachedRun{}, lru: list.New()}
}

// Read applies the new messages of a model call of the run, when the call
// has them (a retried call does not), and returns the messages of spans:
// from the cache where it has them, and by fetch for the rest, which it
// then keeps.
func (c *Cache) Read(workflowID, runID string, nm *NewMessages, spans []Span, fetch func([]Span) ([]model.Message, error)) ([]model.Message, error) {
	c.mu.Lock()
	r := c.runs[workflowID][runID]
	switch {
	case nm != nil:
		r = c.entry(workflowID, runID, nm.Epoch)
		c.apply(r, *nm)
	case r == nil:
		r = c.entry(workflowID, runID, -1) // of no known epoch: the next new messages start it over
	default:
		c.lru.MoveToFront(r.el)
	}
	out, holes := gather(spans, r.message)
	epoch := r.epoch
	c.evict()
	c.mu.Unlock()
	if len(holes) == 0 {
		return fill(out, nil), nil
	}
	got, err := fetch(holes)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, h := range holes {
		n += h.End - h.Start
	}
	if len(got) != n {
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("transcript: read %d messages where %d were asked for", len(got), n), ErrTypeMismatch, nil)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// The entry may have moved on meanwhile (a later call, an eviction):
	// what was read is kept where the entry, of this epoch, lacks it, as
	// within an epoch a message never changes.
	r = c.entry(workflowID, runID, epoch)
	k := 0
	for _, h := range holes {
		for i := h.Start; i < h.End; i, k = i+1, k+1 {
			if r.message(i) == nil {
				r.set(i, got[k])
			}
		}
	}
	c.resize(r)
	c.evict()
	return fill(out, got), nil
}

// Remember keeps a large tool result of a run's turn (its content as the
// workflow will get it) until the run's next model call, which finds it
// when the workflow left it out of the new messages. Only a worker that
// keeps the run's transcript keeps it: another would hold it for a call it
// does not take.
func (c *Cache) Remember(workflowID, runID, v string) {
	if len(v) < minHeld {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.runs[workflowID][runID]
	if r == nil {
		return
	}
	if r.values == nil {
		r.values = map[string]string{}
	}
	r.values[Digest(v)] = v
	c.resize(r)
	c.evict()
}

// Answer keeps a model call's answer as the message the workflow is about
// to append at index i, so that the tool calls it makes can be read from
// the cache. The workflow may take another attempt's answer instead (this
// one's result was lost), so it is no message of the transcript yet: a
// tool call is read from it only when its digest matches, and the next
// model call's new messages replace it.
func (c *Cache) Answer(workflowID, runID string, epoch, i int, m model.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.entry(workflowID, runID, epoch)
	r.answer, r.answerAt = &m, i
	c.resize(r)
	c.evict()
}

// Call returns tool call ref.Index of message ref.Message of the run, when
// the cache has it and it matches id and ref.Digest.
func (c *Cache) Call(workflowID, runID string, ref CallRef, id string) (model.ToolCall, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.runs[workflowID][runID]
	if r == nil || ref.Digest == "" {
		return model.ToolCall{}, false
	}
	m := r.message(ref.Message)
	if r.answer != nil && r.answerAt == ref.Message {
		m = r.answer
	}
	call, ok := callOf(m, ref, id)
	if ok {
		c.lru.MoveToFront(r.el)
	}
	return call, ok
}

// entry returns the run's entry, made the most recent, creating it or, for
// another epoch, starting it over. c.mu is held.
func (c *Cache) entry(workflowID, runID string, epoch int) *cachedRun {
	r := c.runs[workflowID][runID]
	if r == nil {
		r = &cachedRun{workflowID: workflowID, runID: runID, epoch: epoch}
		r.el = c.lru.PushFront(r)
		if c.runs[workflowID] == nil {
			c.runs[workflowID] = map[string]*cachedRun{}
		}
		c.runs[workflowID][runID] = r
		return r
	}
	c.lru.MoveToFront(r.el)
	if r.epoch != epoch {
		r.msgs, r.answer, r.values, r.epoch = nil, nil, nil, epoch
		c.resize(r)
	}
	return r
}

// apply brings r up to date with a call's new messages, finding the fields
// they left out in r's answer and remembered values, or in the other runs
// of its workflow (the run it continued). c.mu is held.
func (c *Cache) apply(r *cachedRun, nm NewMessages) {
	find := func(d string) (string, bool) {
		if v, ok := r.values[d]; ok {
			return v, true
		}
		for _, m := range append([]*model.Message{r.answer}, c.siblingMessages(r)...) {
			if v, ok := fieldOf(m, d); ok {
				return v, true
			}
		}
		return "", false
	}
	if nm.Carried != nil {
		c.fillCarried(r, nm.Carried)
	}
	r.msgs = apply(r.msgs, nm, find)
	r.answer, r.values = nil, nil // appended, or not taken: the new messages say
	c.resize(r)
}

// fillCarried sets the messages a continued run carries, whose
// MessageDigests are carried, where r lacks them, from the other runs of
// its workflow. c.mu is held.
func (c *Cache) fillCarried(r *cachedRun, carried []string) {
	want := map[string][]int{} // a message may be carried more than once
	for i, d := range carried {
		if d != "" && r.message(i) == nil {
			want[d] = append(want[d], i)
		}
	}
	for _, m := range c.siblingMessages(r) {
		if len(want) == 0 {
			return
		}
		if m == nil {
			continue
		}
		d := MessageDigest(*m)
		for _, i := range want[d] {
			r.set(i, *m)
		}
		delete(want, d)
	}
}

// siblingMessages are the messages the cache holds of the other runs of
// r's workflow. c.mu is held.
func (c *Cache) siblingMessages(r *cachedRun) []*model.Message {
	var out []*model.Message
	for _, o := range c.runs[r.workflowID] {
		if o != r {
			out = append(out, o.msgs...)
		}
	}
	return out
}

// fieldOf returns the field of m (its content, a tool call's arguments)
// whose digest is d.
func fieldOf(m *model.Message, d string) (string, bool) {
	if m == nil {
		return "", false
	}
	n := digestLen(d)
	if len(m.Content) == n && Digest(m.Content) == d {
		return m.Content, true
	}
	for _, tc := range m.ToolCalls {
		if len(tc.Arguments) == 0 {
			continue
		}
		// A copy's arguments may be encoded otherwise than the digest's.
		if b := canonicalArgs(tc.Arguments); len(b) == n && Digest(string(b)) == d {
			return string(b), true
		}
	}
	return "", false
}

// evict drops the least recently used runs until the cache is within its
// bound. c.mu is held.
func (c *Cache) evict() {
	for c.size > c.max && c.lru.Len() > 0 {
		r := c.lru.Remove(c.lru.Back()).(*cachedRun)
		if delete(c.runs[r.workflowID], r.runID); len(c.runs[r.workflowID]) == 0 {
			delete(c.runs, r.workflowID)
		}
		c.size -= r.size
	}
}

// resize counts r's size again after a change. c.mu is held.
func (c *Cache) resize(r *cachedRun) {
	n := messageSize(r.answer)
	for _, m := range r.msgs {
		n += messageSize(m)
	}
	for _, v := range r.values {
		n += int64(len(v))
	}
	c.size += n - r.size
	r.size = n
}

// messageSize estimates what a message takes in memory.
func messageSize(m *model.Message) int64 {
	if m == nil {
		return 0
	}
	n := 96 + len(m.Role) + len(m.Name) + len(m.Content) + len(m.ToolCallID)
	for _, tc := range m.ToolCalls {
		n += 48 + len(tc.ID) + len(tc.Name) + len(tc.Arguments)
	}
	return int64(n)
}

// message returns message i of r's copy, nil when it has not seen it.
func (r *cachedRun) message(i int) *model.Message {
	if i >= 0 && i < len(r.msgs) {
		return r.msgs[i]
	}
	return nil
}

// set stores m as message i of r's copy.
func (r *cachedRun) set(i int, m model.Message) {
	for len(r.msgs) <= i {
		r.msgs = append(r.msgs, nil)
	}
	r.msgs[i] = &m
}
