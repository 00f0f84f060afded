package activities

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"

	"github.com/todoflow/todoflow/model"
)

// The worker's copy of the model answers it was paid for.
//
// A model call's attempt can get its answer and still fail: the worker
// reports the completion to the Temporal server, and when the server is
// down for longer than the SDK keeps trying (a minute), or the report is
// lost, the server knows nothing of the answer; once the attempt's
// heartbeat timeout passes it schedules the call again. Without a copy the
// next attempt asks the provider again: a second bill, and an answer that
// may differ from the one already streamed to the user.
//
// So CallModel keeps each answer, keyed by what makes it the answer to one
// attempt's request and no other:
//
//   - the workflow id and run id, so that an answer never leaves its run
//     (a continued run, or a reset one, asks afresh);
//   - the activity id, which the server keeps across the attempts of one
//     call and never gives two calls of a run;
//   - a digest of the request (model, messages, tools, call number), so
//     that an attempt that would send something else (the tools the worker
//     offers changed, another model) is not answered with a copy.
//
// The copy lives in the worker's memory only: an attempt that lands on
// another worker, or on this one after a restart, asks the provider again.
// The cache is bounded in bytes and in age; the oldest answers leave first.

// DefaultAnswerCacheBytes bounds the answer cache of a worker that sets no
// bound of its own: some hundred typical answers, or 16 of the largest
// (MaxAnswerBytes).
const DefaultAnswerCacheBytes = 16 << 20

// DefaultAnswerCacheAge is how long an answer is kept when the worker sets
// no age: past a server outage of that length, the call is asked again.
const DefaultAnswerCacheAge = time.Hour

// AnswerKey names one model call of a run and the request it sent.
type AnswerKey struct {
	WorkflowID string
	RunID      string
	ActivityID string
	// Request is RequestDigest of the request sent.
	Request string
}

// AnswerCache keeps the answers of a worker's model calls for the next
// attempt of the same call. It is safe for concurrent use.
type AnswerCache struct {
	max    int64
	maxAge time.Duration
	now    func() time.Time

	mu      sync.Mutex
	size    int64
	entries map[AnswerKey]*list.Element // of *keptAnswer
	byAge   *list.List                  // newest first
}

type keptAnswer struct {
	key  AnswerKey
	resp model.Response
	at   time.Time
	size int64
}

// NewAnswerCache returns a cache of at most maxBytes of answers (estimated),
// each kept at most maxAge; zero values mean DefaultAnswerCacheBytes and
// DefaultAnswerCacheAge.
func NewAnswerCache(maxBytes int64, maxAge time.Duration) *AnswerCache {
	if maxBytes == 0 {
		maxBytes = DefaultAnswerCacheBytes
	}
	if maxAge == 0 {
		maxAge = DefaultAnswerCacheAge
	}
	return &AnswerCache{max: maxBytes, maxAge: maxAge, now: time.Now, entries: map[AnswerKey]*list.Element{}, byAge: list.New()}
}

// Get returns the answer kept for key, if it is there and young enough.
func (c *AnswerCache) Get(key AnswerKey) (model.Response, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.evict()
	el, ok := c.entries[key]
	if !ok {
		return model.Response{}, false
	}
	// A copy: the caller may fill in what the answer lacks.
	resp := el.Value.(*keptAnswer).resp
	resp.ToolCalls = append([]model.ToolCall(nil), resp.ToolCalls...)
	return resp, true
}

// Put keeps resp as the answer for key. An answer larger than the whole
// cache is not kept.
func (c *AnswerCache) Put(key AnswerKey, resp model.Response) {
	size := int64(answerSize(resp)) + int64(len(key.WorkflowID)+len(key.RunID)+len(key.ActivityID)+len(key.Request)) + 160
	if size > c.max {
		return
	}
	resp.ToolCalls = append([]model.ToolCall(nil), resp.ToolCalls...)
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.remove(el)
	}
	c.entries[key] = c.byAge.PushFront(&keptAnswer{key: key, resp: resp, at: c.now(), size: size})
	c.size += size
	c.evict()
}

// evict drops the oldest answers while the cache is over its bound or they
// are over its age. c.mu is held.
func (c *AnswerCache) evict() {
	for el := c.byAge.Back(); el != nil; el = c.byAge.Back() {
		if c.size <= c.max && c.now().Sub(el.Value.(*keptAnswer).at) <= c.maxAge {
			return
		}
		c.remove(el)
	}
}

// remove drops one answer. c.mu is held.
func (c *AnswerCache) remove(el *list.Element) {
	a := el.Value.(*keptAnswer)
	c.byAge.Remove(el)
	delete(c.entries, a.key)
	c.size -= a.size
}

// RequestDigest is a model request's fingerprint: a hash of what the
// provider is sent (the model, the messages, the tools, the call's number
// and whether it summarises), never of the Stream callback. It is "" for a
// request that does not encode (a tool call's arguments that are not
// JSON): such a request is never answered from the cache.
func RequestDigest(req model.Request) string {
	h := sha256.New()
	// Encoding to the hash, not to a buffer: the messages may be
	// megabytes.
	err := json.NewEncoder(h).Encode(struct {
		Model     string           `json:"model"`
		Messages  []model.Message  `json:"messages"`
		Tools     []model.ToolSpec `json:"tools"`
		Call      int              `json:"call"`
		Summarize bool             `json:"summarize"`
	}{req.Model, req.Messages, req.Tools, req.Call, req.Summarize})
	if err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}
