package transcript

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/todoflow/todoflow/model"
)

// Span selects the transcript messages [Start, End).
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// CallRef locates a tool call: the index of the assistant message in the
// transcript and of the call in that message.
type CallRef struct {
	Message int
	Index   int
	// Digest, when set, is CallDigest of the call: a copy of it the reader
	// finds is used only when it matches.
	Digest string `json:",omitempty"`
}

// CallDigest is a tool call's fingerprint: a hash of its name and
// arguments (as a payload encodes them, so that the model client's copy and
// the workflow's decoded one agree), which a copy of the call must match.
func CallDigest(tc model.ToolCall) string {
	h := sha256.New()
	h.Write([]byte(tc.Name))
	h.Write([]byte{0})
	h.Write(canonicalArgs(tc.Arguments))
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// HeldOver is the size over which a message's content is left out of
// NewMessages, and a tool call's arguments are left out of its tool's input
// (read by CallRef): what is sent twice stays small.
const HeldOver = 16 << 10

// Budget bounds the bytes of the fields one model call's input
// carries (NewMessages): a turn of many tool results (64 of 16 KiB each is
// 1 MiB) would otherwise make one activity input, an event of history,
// near the server's 2 MiB limit. Past it the fields are left out too.
const Budget = 256 << 10

// minHeld is the size under which a field is always sent: its digest would
// be nearly as large, and the budget cannot be spent by fields this small
// (a response has at most todo.MaxToolCalls calls).
const minHeld = 64

// NewMessages are the messages added to the calling workflow's transcript
// since its previous model call: messages [From, From+len(Messages)).
type NewMessages struct {
	From     int             `json:"from"`
	Messages []model.Message `json:"messages"`
	// Held lists the messages whose large fields were left out: Messages
	// holds them with those fields empty.
	Held []Held `json:"held,omitempty"`
	// Epoch counts the times the workflow took back a message it had sent
	// (see the package's transcript cache).
	Epoch int `json:"epoch,omitempty"`
	// Carried, in a continued run's first call, has the MessageDigest of
	// each message [0, From): the messages the run's input carries, which
	// a worker finds in its copy of the run before.
	Carried []string `json:"carried,omitempty"`
}

// MessageDigests returns the MessageDigest of each message of msgs.
func MessageDigests(msgs []model.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = MessageDigest(m)
	}
	return out
}

// MessageDigest identifies a whole message: the Digest of its JSON, whose
// tool call arguments are encoded as every payload holds them.
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

// Held names the fields left out of message Index of a NewMessages (an
// index into its Messages) by the digests of their values (see Digest).
type Held struct {
	Index   int    `json:"i"`
	Content string `json:"content,omitempty"`
	// Args has one entry per tool call: the digest of its arguments when
	// they were left out, else "".
	Args []string `json:"args,omitempty"`
}

// NewMessagesOf returns the new messages msgs[from:] of a model call, with
// the contents over HeldOver, and those past Budget, left out, and the
// arguments of tool calls too: they are in the model's answer already. It
// is pure: the workflow builds a call's input with it.
func NewMessagesOf(msgs []model.Message, from, epoch int) *NewMessages {
	nm := &NewMessages{From: from, Epoch: epoch, Messages: make([]model.Message, len(msgs)-from)}
	total := 0
	keep := func(n int) bool {
		if n < minHeld || (n <= HeldOver && total+n <= Budget) {
			total += n
			return true
		}
		return false
	}
	for i, m := range msgs[from:] {
		h := Held{Index: i}
		if !keep(len(m.Content)) {
			h.Content, m.Content = Digest(m.Content), ""
		}
		for j, tc := range m.ToolCalls {
			if len(tc.Arguments) < minHeld {
				continue // else in the model's answer, and in a tool's input
			}
			if h.Args == nil {
				h.Args = make([]string, len(m.ToolCalls))
				m.ToolCalls = append([]model.ToolCall(nil), m.ToolCalls...)
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

// Whole sends message i of msgs (the transcript nm was made of) whole, its
// fields left out no more: a message an older build's call left out, which
// no reader can find.
func (nm *NewMessages) Whole(msgs []model.Message, i int) {
	at := i - nm.From
	if at < 0 || at >= len(nm.Messages) {
		return
	}
	nm.Messages[at] = msgs[i]
	nm.Held = slices.DeleteFunc(nm.Held, func(h Held) bool { return h.Index == at })
}

// Digest identifies a value left out of NewMessages: its length and a hash
// of its bytes. The length comes first so that a reader hashes only values
// of a length it looks for.
func Digest(v string) string {
	sum := sha256.Sum256([]byte(v))
	return strconv.Itoa(len(v)) + ":" + hex.EncodeToString(sum[:12])
}

// ArgsDigest is the Digest of a tool call's arguments as JSON encodes them
// (compact, HTML-escaped), which is how every payload of history holds
// them, whichever copy the caller has.
func ArgsDigest(args json.RawMessage) string {
	return Digest(string(canonicalArgs(args)))
}

func canonicalArgs(args json.RawMessage) []byte {
	b, err := json.Marshal(args)
	if err != nil {
		return args // not JSON: it cannot be in a payload either
	}
	return b
}

// digestLen is the length a digest names, -1 when it names none.
func digestLen(d string) int {
	for i := 0; i < len(d); i++ {
		if d[i] == ':' {
			n, err := strconv.Atoi(d[:i])
			if err != nil {
				return -1
			}
			return n
		}
	}
	return -1
}

// held returns the fields left out of message i of nm, if any.
func (nm *NewMessages) held(i int) (Held, bool) {
	for _, h := range nm.Held {
		if h.Index == i {
			return h, true
		}
	}
	return Held{}, false
}

// fill returns m with the fields h left out set from find, which returns
// the value of a digest; ok is false when find lacks one of them.
func (h Held) fill(m model.Message, find func(digest string) (string, bool)) (model.Message, bool) {
	if h.Content != "" {
		v, ok := find(h.Content)
		if !ok {
			return m, false
		}
		m.Content = v
	}
	if h.Args != nil {
		if len(h.Args) != len(m.ToolCalls) {
			return m, false
		}
		m.ToolCalls = append([]model.ToolCall(nil), m.ToolCalls...)
		for j, d := range h.Args {
			if d == "" {
				continue
			}
			v, ok := find(d)
			if !ok {
				return m, false
			}
			m.ToolCalls[j].Arguments = json.RawMessage(v)
		}
	}
	return m, true
}

// apply brings a transcript copy up to date with a model call's new
// messages: it is cut at nm.From, and each new message set, a held one from
// the copy's own message at that index when it had one (within an epoch a
// message never changes once made), else from find, else left a hole (nil).
// It is shared by the worker's cache and the reader of history, which must
// rebuild the same transcript.
func apply(msgs []*model.Message, nm NewMessages, find func(digest string) (string, bool)) []*model.Message {
	// prev is a copy: out reuses msgs' array, and writes each slot after
	// prev's message for it was read, but a copy keeps that out of doubt.
	prev := slices.Clone(msgs[min(nm.From, len(msgs)):])
	out := msgs[:min(nm.From, len(msgs))]
	for len(out) < nm.From {
		out = append(out, nil)
	}
	for i, m := range nm.Messages {
		h, isHeld := nm.held(i)
		switch {
		case !isHeld:
			out = append(out, &m)
		case i < len(prev) && prev[i] != nil:
			out = append(out, prev[i])
		default:
			if full, ok := h.fill(m, find); ok {
				out = append(out, &full)
			} else {
				out = append(out, nil)
			}
		}
	}
	return out
}

// Heard holds the digests of values that entered the run's history as
// they are (a model's answer, a tool's result, a user's message as it was
// sent): a reader finds such a field there when NewMessages leaves it out.
// The workflow keeps one, from its previous model call on.
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

// Unheard returns the values of the fields nm left out of msgs (the
// transcript it was made of) that h does not know, and the index in msgs of
// the message of each: fields of the workflow's own making (a guard's note
// on a tool's result, a message cut to fit, a summary). No payload of
// history holds them, so the workflow records each (workflows/modelcall.go)
// before the call that leaves it out, where a reader finds it by its digest
// like any other.
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
