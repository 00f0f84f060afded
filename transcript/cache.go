package transcript

import (
	"container/list"
	"sync"

	"github.com/todoflow/todoflow/model"
)

// The worker's copy of the transcripts it has seen.
//
// AgentWorkflow sends each model call the messages added since its previous
// one (NewMessages), and the worker keeps what it was sent: a call then
// reads its spans from the cache, and the run's history only for what the
// cache lacks (history.go).
//
// What the cache holds is always what the workflow holds:
//
//   - Entries are per run (workflow id and run id). A continued run's first
//     call names the messages its input carries by digest (Carried), and
//     the cache takes them from its entry of the run before.
//   - A run's transcript only grows, except when a failed turn is run again
//     and its failure notice is taken back; the workflow then counts a new
//     epoch, and an entry of another epoch is dropped.
//   - NewMessages.From is where the added messages start: the cache cuts
//     its copy there before it appends them, so a retried call never
//     leaves anything stale behind. A model's answer is kept apart until
//     it comes back as a new message (see Cache.Answer), and a
//     tool's result until the next call (Cache.Remember): each
//     is found by digest when the workflow left it out of the new
//     messages. What the cache has not seen (another worker took some
//     calls, the worker restarted) are holes, read from history when a
//     call needs them.
//   - A tool call read from the cache is checked against its digest (the
//     workflow's hash of its name and arguments, CallRef.Digest), so a
//     cached answer of an attempt the workflow did not take is never run.
//
// The cache is bounded in bytes; the runs used least recently leave first.

// DefaultCacheBytes bounds the transcript cache of a worker that
// sets no bound of its own.
const DefaultCacheBytes = 64 << 20

// Cache keeps the transcripts the worker's model calls were sent.
// It is safe for concurrent use.
type Cache struct {
	max  int64
	mu   sync.Mutex
	size int64
	runs map[runKey]*list.Element // of *cachedRun
	// byWorkflow holds the runs of each workflow id: a continued run finds
	// what it carries in the run before, without a walk of every entry.
	byWorkflow map[string]map[*cachedRun]bool
	lru        *list.List // most recently used first
}

type runKey struct{ workflowID, runID string }

type cachedRun struct {
	key   runKey
	epoch int
	msgs  []*model.Message // nil where the cache has not seen the message
	// answer is the latest model answer, which the workflow is expected to
	// append as message answerAt; only tool calls checked against their
	// digest are read from it (see Answer).
	answer   *model.Message
	answerAt int
	// values are large tool results of the run's current turn, by digest
	// (see Remember), until its next model call.
	values map[string]string
	size   int64
}

// NewCache returns a cache of at most maxBytes of messages
// (estimated); 0 means DefaultCacheBytes, a negative bound keeps nothing
// past the call that uses it.
func NewCache(maxBytes int64) *Cache {
	if maxBytes == 0 {
		maxBytes = DefaultCacheBytes
	}
	return &Cache{max: maxBytes, runs: map[runKey]*list.Element{}, byWorkflow: map[string]map[*cachedRun]bool{}, lru: list.New()}
}

// messageSize estimates what a message takes in memory.
func messageSize(m *model.Message) int64 {
	n := 96 + len(m.Role) + len(m.Name) + len(m.Content) + len(m.ToolCallID)
	for _, tc := range m.ToolCalls {
		n += 48 + len(tc.ID) + len(tc.Name) + len(tc.Arguments)
	}
	return int64(n)
}

// entry returns the run's entry, made the most recent, creating it (or
// starting it over, for another epoch) as needed. c.mu is held.
func (c *Cache) entry(key runKey, epoch int) *cachedRun {
	if el, ok := c.runs[key]; ok {
		c.lru.MoveToFront(el)
		r := el.Value.(*cachedRun)
		if r.epoch != epoch {
			c.size -= r.size
			r.msgs, r.answer, r.values, r.size, r.epoch = nil, nil, nil, 0, epoch
		}
		return r
	}
	r := &cachedRun{key: key, epoch: epoch}
	c.runs[key] = c.lru.PushFront(r)
	if c.byWorkflow[key.workflowID] == nil {
		c.byWorkflow[key.workflowID] = map[*cachedRun]bool{}
	}
	c.byWorkflow[key.workflowID][r] = true
	return r
}

// current returns the run's entry as it is, made the most recent, creating
// it when there is none (its epoch is then unknown: the next call's new
// messages start it over). c.mu is held.
func (c *Cache) current(key runKey) *cachedRun {
	if el, ok := c.runs[key]; ok {
		c.lru.MoveToFront(el)
		return el.Value.(*cachedRun)
	}
	return c.entry(key, -1)
}

// set stores m as message i of r. c.mu is held.
func (c *Cache) set(r *cachedRun, i int, m model.Message) {
	for len(r.msgs) <= i {
		r.msgs = append(r.msgs, nil)
	}
	if old := r.msgs[i]; old != nil {
		r.size -= messageSize(old)
		c.size -= messageSize(old)
	}
	r.msgs[i] = &m
	r.size += messageSize(&m)
	c.size += messageSize(&m)
}

// setAnswer keeps m as the answer expected at index i; nil forgets it.
// c.mu is held.
func (c *Cache) setAnswer(r *cachedRun, i int, m *model.Message) {
	if r.answer != nil {
		r.size -= messageSize(r.answer)
		c.size -= messageSize(r.answer)
	}
	r.answer, r.answerAt = m, i
	if m != nil {
		r.size += messageSize(m)
		c.size += messageSize(m)
	}
}

// evict drops the least recently used runs until the cache is within its
// bound. c.mu is held.
func (c *Cache) evict() {
	for c.size > c.max && c.lru.Len() > 0 {
		el := c.lru.Back()
		r := el.Value.(*cachedRun)
		c.lru.Remove(el)
		delete(c.runs, r.key)
		if delete(c.byWorkflow[r.key.workflowID], r); len(c.byWorkflow[r.key.workflowID]) == 0 {
			delete(c.byWorkflow, r.key.workflowID)
		}
		c.size -= r.size
	}
}

// Read applies the new messages of a model call of run (workflowID,
// runID), when the call has them (a retried call does not), and returns
// the messages of spans: from the cache where it has them, and by fetch
// for the rest, which it then keeps.
func (c *Cache) Read(workflowID, runID string, nm *NewMessages, spans []Span, fetch func([]Span) ([]model.Message, error)) ([]model.Message, error) {
	key := runKey{workflowID, runID}
	c.mu.Lock()
	var r *cachedRun
	if nm != nil {
		r = c.entry(key, nm.Epoch)
		c.apply(r, *nm)
	} else {
		r = c.current(key)
	}
	out, holes, at := gather(spans, func(i int) *model.Message {
		if i < len(r.msgs) {
			return r.msgs[i]
		}
		return nil
	})
	epoch := r.epoch
	c.evict()
	c.mu.Unlock()
	if len(holes) == 0 {
		return out, nil
	}
	got, err := fetch(holes)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// The entry may have moved on meanwhile (a later call of the run, or
	// an eviction); the fetched messages are kept where the entry, of
	// this epoch, lacks them: a message once made never changes within an
	// epoch.
	r = c.entry(key, epoch)
	err = fillHoles(out, holes, at, got, func(i int, m model.Message) {
		if i >= len(r.msgs) || r.msgs[i] == nil {
			c.set(r, i, m)
		}
	})
	if err != nil {
		return nil, err
	}
	c.evict()
	return out, nil
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
			if m == nil {
				continue
			}
			if v, ok := fieldOf(m, d); ok {
				return v, true
			}
		}
		return "", false
	}
	if nm.Carried != nil {
		c.fillCarried(r, nm.Carried)
	}
	from := min(nm.From, len(r.msgs))
	for _, m := range r.msgs[from:] {
		if m != nil {
			r.size -= messageSize(m)
			c.size -= messageSize(m)
		}
	}
	r.msgs = apply(r.msgs, nm, find)
	for _, m := range r.msgs[from:] {
		if m != nil {
			r.size += messageSize(m)
			c.size += messageSize(m)
		}
	}
	c.setAnswer(r, -1, nil) // appended, or not taken: the new messages say
	for _, v := range r.values {
		r.size -= int64(len(v))
		c.size -= int64(len(v))
	}
	r.values = nil
}

// siblingMessages are the messages the cache holds of the other runs of
// r's workflow. c.mu is held.
func (c *Cache) siblingMessages(r *cachedRun) []*model.Message {
	var out []*model.Message
	for o := range c.byWorkflow[r.key.workflowID] {
		if o != r {
			out = append(out, o.msgs...)
		}
	}
	return out
}

// fillCarried sets the messages a continued run carries, where r lacks
// them, from the runs of its workflow that the cache holds: carried are
// their MessageDigests. c.mu is held.
func (c *Cache) fillCarried(r *cachedRun, carried []string) {
	want := map[string][]int{} // a message may be carried more than once
	for i, d := range carried {
		if d != "" && (i >= len(r.msgs) || r.msgs[i] == nil) {
			want[d] = append(want[d], i)
		}
	}
	if len(want) == 0 {
		return
	}
	for _, m := range c.siblingMessages(r) {
		if m == nil {
			continue
		}
		d := MessageDigest(*m)
		for _, i := range want[d] {
			c.set(r, i, *m)
		}
		delete(want, d)
	}
}

// fieldOf returns the field of m (its content, a tool call's arguments)
// whose digest is d.
func fieldOf(m *model.Message, d string) (string, bool) {
	n := digestLen(d)
	if len(m.Content) == n && Digest(m.Content) == d {
		return m.Content, true
	}
	for _, tc := range m.ToolCalls {
		// A copy's arguments may not be encoded as the digest's were
		// (see ArgsDigest): compare what a payload would hold.
		if len(tc.Arguments) > 0 {
			if b := canonicalArgs(tc.Arguments); len(b) == n && Digest(string(b)) == d {
				return string(b), true
			}
		}
	}
	return "", false
}

// Remember keeps a large tool result of a run's turn (its content as the
// workflow will get it) until the run's next model call, which finds it
// there when the workflow left it out of the new messages. Only a worker
// that keeps the run's transcript (it took the run's model calls) keeps
// it: another would hold it for a call it does not take.
func (c *Cache) Remember(workflowID, runID, v string) {
	if len(v) < minHeld {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.runs[runKey{workflowID, runID}]
	if !ok {
		return
	}
	r := el.Value.(*cachedRun)
	if r.values == nil {
		r.values = map[string]string{}
	}
	d := Digest(v)
	if _, ok := r.values[d]; !ok {
		r.values[d] = v
		r.size += int64(len(v))
		c.size += int64(len(v))
	}
	c.evict()
}

// Answer keeps a model call's answer as the message the workflow is about
// to append at index i (the end of the transcript the call was sent), so
// that the tool calls it makes can be read from the cache. It is not a
// message of the transcript yet: the workflow may have taken another
// attempt's answer (this one's result was lost), so reads of the
// transcript never see it, and a tool call is read from it only when its
// digest matches. The next model call's new messages replace it.
func (c *Cache) Answer(workflowID, runID string, epoch, i int, m model.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.entry(runKey{workflowID, runID}, epoch)
	c.setAnswer(r, i, &m)
	c.evict()
}

// Call returns tool call ref.Index of message ref.Message of the run, when
// the cache has it and it matches id and ref.Digest.
func (c *Cache) Call(workflowID, runID string, ref CallRef, id string) (model.ToolCall, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.runs[runKey{workflowID, runID}]
	if !ok || ref.Digest == "" {
		return model.ToolCall{}, false
	}
	r := el.Value.(*cachedRun)
	var m *model.Message
	switch {
	case r.answer != nil && r.answerAt == ref.Message:
		m = r.answer
	case ref.Message >= 0 && ref.Message < len(r.msgs):
		m = r.msgs[ref.Message]
	}
	if m == nil {
		return model.ToolCall{}, false
	}
	calls := m.ToolCalls
	if ref.Index < 0 || ref.Index >= len(calls) || calls[ref.Index].ID != id || CallDigest(calls[ref.Index]) != ref.Digest {
		return model.ToolCall{}, false
	}
	c.lru.MoveToFront(el)
	return calls[ref.Index], true
}
