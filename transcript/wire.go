package transcript

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/todoflow/todoflow/model"
)

// Span selects the transcript messages [Start, End).
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// CallRef locates a tool call: call Index of message Message.
type CallRef struct {
	Message int
	Index   int
	// Digest, when set, is CallDigest of the call: a copy that does not
	// match it is not used.
	Digest string `json:",omitempty"`
}

// CallDigest hashes a tool call's name and arguments, encoded as a payload
// holds them, so that the model client's copy and the workflow's decoded
// one agree.
func CallDigest(tc model.ToolCall) string {
	h := sha256.New()
	h.Write([]byte(tc.Name))
	h.Write([]byte{0})
	h.Write(canonicalArgs(tc.Arguments))
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// HeldOver is the size over which a message's content is left out of
// NewMessages, and a tool call's arguments out of its tool's input (read
// by CallRef): what is sent twice stays small.
const HeldOver = 16 << 10

// Budget bounds the fields one model call's NewMessages carries: a turn of
// 64 results of 16 KiB (1 MiB) would make one event of history near the
// server's 2 MiB limit. Past it the fields are left out too.
const Budget = 256 << 10

// minHeld is the size under which a field is always sent: its digest would
// be nearly as large, and a response's few calls cannot spend the budget.
const minHeld = 64

// NewMessages are the messages [From, From+len(Messages)) of the calling
// workflow's transcript, added since its previous model call.
type NewMessages struct {
	From     int             `json:"from"`
	Messages []model.Message `json:"messages"`
	// Held lists the messages whose large fields were left out (empty in
	// Messages).
	Held []Held `json:"held,omitempty"`
	// Epoch counts the times the workflow took back a message it had sent.
	Epoch int `json:"epoch,omitempty"`
	// Carried, in a continued run's first call, has the MessageDigest of
	// each message [0, From): those the run's input carries.
	Carried []string `json:"carried,omitempty"`
}

// Held names the fields left out of Messages[Index] by their Digests.
type Held struct {
	Index   int    `json:"i"`
	Content string `json:"content,omitempty"`
	// Args has one entry per tool call: the digest of its arguments when
	// they were left out, else "".
	Args []string `json:"args,omitempty"`
}

// NewMessagesOf returns the new messages msgs[from:] of a model call, with
// the contents over HeldOver or past Budget left out, and the tool calls'
// arguments too: they are in the model's answer already.
func NewMessagesOf(msgs []model.Message, from, epoch int) *NewMessages {
	nm := &NewMessages{From: from, Epoch: epoch, Messages: make([]model.Message, len(msgs)-from)}
	total := 0
	for i, m := range msgs[from:] {
		h := Held{Index: i}
		if n := len(m.Content); n < minHeld || (n <= HeldOver && total+n <= Budget) {
			total += n
		} else {
			h.Content, m.Content = Digest(m.Content), ""
		}
		for j, tc := range m.ToolCalls {
			if len(tc.Arguments) < minHeld {
				continue
			}
			if h.Args == nil {
				h.Args = make([]string, len(m.ToolCalls))
				m.ToolCalls = slices.Clone(m.ToolCalls)
			}
			h.Args[j] = ArgsDigest(tc.Arguments)
			m.ToolCalls[j].Arguments = nil
		}
		if h.Content != "" || h.Args != nil {
			nm.Held = append(nm.Held, h)
		}
		nm.Messages[i] = m
	}
	return nm
}

// Whole sends message i of msgs (the transcript nm was made of) whole: one
// an older build's call left out, which no reader can find.
func (nm *NewMessages) Whole(msgs []model.Message, i int) {
	at := i - nm.From
	if at < 0 || at >= len(nm.Messages) {
		return
	}
	nm.Messages[at] = msgs[i]
	nm.Held = slices.DeleteFunc(nm.Held, func(h Held) bool { return h.Index == at })
}

// Unheard returns the fields nm left out of msgs (the transcript it was
// made of) that h does not know, and the index in msgs of each: fields of
// the workflow's own making, in no payload of history, which the workflow
// records before the call (workflows/modelcall.go).
func (nm *NewMessages) Unheard(msgs []model.Message, h Heard) (at []int, values []string) {
	for _, held := range nm.Held {
		i := nm.From + held.Index
		if held.Content != "" && !h[held.Content] {
			at, values = append(at, i), append(values, msgs[i].Content)
		}
		for j, d := range held.Args {
			if d != "" && !h[d] {
				at, values = append(at, i), append(values, string(canonicalArgs(msgs[i].ToolCalls[j].Arguments)))
			}
		}
	}
	return at, values
}

// Heard holds the digests of values that entered the run's history as
// they are (a model's answer, a tool's result, a user's message), where a
// reader finds them.
type Heard map[string]bool

// Text notes a value that entered history as it is.
func (h *Heard) Text(v string) {
	if len(v) < minHeld {
		return // never left out
	}
	if *h == nil {
		*h = Heard{}
	}
	(*h)[Digest(v)] = true
}

// Answer notes a model's answer: its content and its calls' arguments.
func (h *Heard) Answer(content string, calls []model.ToolCall) {
	h.Text(content)
	for _, tc := range calls {
		h.Text(string(canonicalArgs(tc.Arguments)))
	}
}

// Digest identifies a value left out of NewMessages: its length, first,
// so that a reader hashes only values of a length it looks for, and a hash.
func Digest(v string) string {
	sum := sha256.Sum256([]byte(v))
	return strconv.Itoa(len(v)) + ":" + hex.EncodeToString(sum[:12])
}

// digestLen is the length a digest names, -1 when it names none.
func digestLen(d string) int {
	n, _, ok := strings.Cut(d, ":")
	if l, err := strconv.Atoi(n); ok && err == nil {
		return l
	}
	return -1
}

// ArgsDigest is the Digest of a tool call's arguments as every payload of
// history holds them, whichever copy the caller has.
func ArgsDigest(args json.RawMessage) string {
	return Digest(string(canonicalArgs(args)))
}

// canonicalArgs encodes args as JSON does (compact, HTML-escaped).
func canonicalArgs(args json.RawMessage) []byte {
	b, err := json.Marshal(args)
	if err != nil {
		return args // not JSON: it cannot be in a payload either
	}
	return b
}

// MessageDigests returns the MessageDigest of each message of msgs.
func MessageDigests(msgs []model.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = MessageDigest(m)
	}
	return out
}

// MessageDigest identifies a whole message: the Digest of its JSON.
func MessageDigest(m model.Message) string {
	if m.ToolCalls == nil {
		m.ToolCalls = []model.ToolCall{}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return ""
	}
	return Digest(string(b))
}

// apply brings a transcript copy up to date with a model call's new
// messages: it is cut at nm.From, and each new message set; a held one is
// the copy's own (within an epoch a message never changes), else filled
// from find, which returns a digest's value, else nil. The cache and the
// reader of history share it, so that both rebuild the same transcript.
func apply(msgs []*model.Message, nm NewMessages, find func(digest string) (string, bool)) []*model.Message {
	prev := slices.Clone(msgs[min(nm.From, len(msgs)):])
	out := msgs[:min(nm.From, len(msgs))]
	for len(out) < nm.From {
		out = append(out, nil)
	}
	for i, m := range nm.Messages {
		k := slices.IndexFunc(nm.Held, func(h Held) bool { return h.Index == i })
		switch {
		case k < 0:
			out = append(out, &m)
		case i < len(prev) && prev[i] != nil:
			out = append(out, prev[i])
		default:
			out = append(out, nm.Held[k].fill(m, find))
		}
	}
	return out
}

// fill returns m with the fields h left out set from find, or nil when
// find lacks one.
func (h Held) fill(m model.Message, find func(digest string) (string, bool)) *model.Message {
	var ok bool
	if h.Content != "" {
		if m.Content, ok = find(h.Content); !ok {
			return nil
		}
	}
	if h.Args == nil {
		return &m
	}
	if len(h.Args) != len(m.ToolCalls) {
		return nil
	}
	m.ToolCalls = slices.Clone(m.ToolCalls)
	for j, d := range h.Args {
		if d == "" {
			continue
		}
		v, ok := find(d)
		if !ok {
			return nil
		}
		m.ToolCalls[j].Arguments = json.RawMessage(v)
	}
	return &m
}
