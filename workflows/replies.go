package workflows

import (
	"fmt"
	"slices"
	"strings"

	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/internal/text"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// How a turn's reply reaches the caller who waits for it (docs/protocol.md,
// "The carry"). An update cannot cross continue-as-new, and a turn whose
// wait is handed over cannot keep its caller waiting: the run would never
// be at rest to hand over. So the update is answered TurnGoesOn, naming its
// id (Inbound.ReplyTo), and the run that ends the turn keeps the reply under
// that id for turn_reply: it is either the update's answer or kept, never
// lost.

// KeptReply is the reply of a handed-over turn. It is kept while newer ones
// leave it room: a second caller following the same turn (two clients, a
// lost answer asked again) gets it too.
type KeptReply struct {
	UpdateID string `json:"update_id"`
	Reply    string `json:"reply"`
	// Taken: a turn_reply has returned it; it is carried no more.
	Taken bool `json:"taken,omitempty"`
}

// Bounds of the kept replies: the most kept, oldest dropped first (a caller
// that never asks must not grow the carry), and the most of each a carry
// holds. A reply cut says where the whole one is.
const (
	maxKeptReplies  = 4
	keptReplyBytes  = 16 << 10
	shortReplyBytes = 2 << 10 // a carry past its cap (fit.go)
)

// inbox is the run's messages waiting for their turn and the replies owed
// for them, a component of the run: it answers send_message, retry_turn and
// turn_reply, and the loop takes its turns from it, one at a time.
type inbox struct {
	queue   []Inbound
	waiting map[int]string // send_message seq -> reply; looked up, never ranged
	nextSeq int
	// taken is the update id the turn the loop took last answers, until
	// it replies or is carried back.
	taken string
	kept  []KeptReply
	// handing says a handover is under way: the callers of the turns it
	// carries are answered so.
	handing bool
}

// InboxCarry is the inbox's part of a carry: the queue, the turn handed
// over where it stood first, and the kept replies.
type InboxCarry struct {
	Queue []Inbound `json:"queue,omitempty"`
	// Replies are the replies of handed-over turns that turn_reply has
	// not taken yet.
	Replies []KeptReply `json:"replies,omitempty"`
}

// newInbox is the inbox of a run: an earlier run's queue and kept replies,
// or the run's prompt.
func newInbox(c *Carry, prompt string) *inbox {
	b := &inbox{waiting: map[int]string{}}
	switch {
	case c != nil:
		b.queue, b.kept = c.Inbox.Queue, c.Inbox.Replies
	case strings.TrimSpace(prompt) != "":
		b.queue = []Inbound{{Text: prompt}}
	}
	return b
}

func (b *inbox) empty() bool { return len(b.queue) == 0 }

// push queues a message that came by signal, or the resume of a pause.
func (b *inbox) push(m Inbound) { b.queue = append(b.queue, m) }

// take hands the loop the next turn.
func (b *inbox) take() Inbound {
	m := b.queue[0]
	b.queue = b.queue[1:]
	b.taken = m.ReplyTo
	return m
}

// putBack queues a turn handed over where it stood, first: the
// continuation (or this run, should the handover not happen) takes it up.
func (b *inbox) putBack(m Inbound) {
	b.queue = append([]Inbound{m}, b.queue...)
	b.taken = ""
}

// retryWaits reports whether a retry of the failed turn is queued.
func (b *inbox) retryWaits() bool {
	return slices.ContainsFunc(b.queue, func(m Inbound) bool { return m.Retry })
}

// enqueue puts a message (or a retry) in the inbox and waits for the reply
// of its turn: the body of the send_message and retry_turn updates.
func (b *inbox) enqueue(ctx workflow.Context, in Inbound) (string, error) {
	b.nextSeq++
	in.Seq = b.nextSeq
	if u := workflow.GetCurrentUpdateInfo(ctx); u != nil {
		in.ReplyTo = u.ID
	}
	b.queue = append(b.queue, in)
	if err := workflow.Await(ctx, func() bool { _, ok := b.waiting[in.Seq]; return ok || b.goesOn(in.ReplyTo) }); err != nil {
		return "", err
	}
	if reply, ok := b.waiting[in.Seq]; ok {
		delete(b.waiting, in.Seq)
		return reply, nil
	}
	// The turn's reply is now kept under the update's id, not its seq.
	if m := b.carried(in.ReplyTo); m != nil {
		m.Seq = 0
	}
	return "", turnGoesOn(in.ReplyTo)
}

// goesOn reports whether the turn whose reply update id waits for is being
// handed over to the next run, where it stood or still queued: its callers
// are answered TurnGoesOn.
func (b *inbox) goesOn(id string) bool {
	return id != "" && b.handing && b.carried(id) != nil
}

// carried is the turn started by update id that a handover carries: the
// turn handed over where it stood (first in the queue), or a message still
// waiting for its turn.
func (b *inbox) carried(id string) *Inbound {
	if i := slices.IndexFunc(b.queue, func(m Inbound) bool { return m.ReplyTo == id }); i >= 0 {
		return &b.queue[i]
	}
	return nil
}

func turnGoesOn(id string) error {
	msg := fmt.Sprintf("the turn goes on in the session's next run (it waited past this run's history limits); its reply comes from the %s update with {\"update_id\": %q}", api.TurnReplyUpdate, id)
	return temporal.NewNonRetryableApplicationError(msg, api.ErrTypeTurnGoesOn, nil, api.TurnGoesOn{UpdateID: id})
}

// replied hands the reply of turn m to whoever waits for it: the update
// that started it in this run, or else the kept replies.
func (b *inbox) replied(m Inbound, reply string) {
	b.taken = ""
	switch {
	case m.Seq != 0:
		b.waiting[m.Seq] = reply
	case m.ReplyTo != "":
		b.kept = append(b.kept, KeptReply{UpdateID: m.ReplyTo, Reply: reply})
		if n := len(b.kept) - maxKeptReplies; n > 0 {
			b.kept = slices.Delete(b.kept, 0, n)
		}
	}
}

// keptReply returns the index of the reply kept for update id, or -1.
func (b *inbox) keptReply(id string) int {
	return slices.IndexFunc(b.kept, func(k KeptReply) bool { return k.UpdateID == id })
}

// answers reports whether a turn of this run will answer update id: the
// running one, one handed over, or one waiting in the queue.
func (b *inbox) answers(id string) bool {
	return id != "" && b.taken == id || b.carried(id) != nil
}

func (b *inbox) validateTurnReply(args api.TurnReplyArgs) error {
	switch {
	case args.UnknownField() != nil:
		return args.UnknownField()
	case args.UpdateID == "":
		return fmt.Errorf(`%s takes {"update_id": "..."}: the id a %s failure named`, api.TurnReplyUpdate, api.ErrTypeTurnGoesOn)
	case b.keptReply(args.UpdateID) < 0 && !b.answers(args.UpdateID):
		return fmt.Errorf("no turn of this session answers update %q: its reply was dropped for %d later ones or left behind in an earlier run once taken, or the turn never went on here; the messages query has every reply", args.UpdateID, maxKeptReplies)
	}
	return nil
}

// onTurnReply waits for the reply of the turn update id started, and takes
// it.
func (b *inbox) onTurnReply(ctx workflow.Context, args api.TurnReplyArgs) (string, error) {
	id := args.UpdateID
	if err := workflow.Await(ctx, func() bool { return b.keptReply(id) >= 0 || b.goesOn(id) }); err != nil {
		return "", err
	}
	i := b.keptReply(id)
	if i < 0 {
		return "", turnGoesOn(id)
	}
	b.kept[i].Taken = true
	return b.kept[i].Reply, nil
}

// untaken reports whether a kept reply waits for its caller.
func (b *inbox) untaken() bool {
	return slices.ContainsFunc(b.kept, func(k KeptReply) bool { return !k.Taken })
}

// queuedBytes is what the messages waiting for their turn take.
func (b *inbox) queuedBytes() int {
	n := 0
	for _, in := range b.queue {
		n += len(in.Text)
	}
	return n
}

// carry is the inbox's part of a carry: the queue, with no seq (its
// callers were answered, and the next run numbers its own: a seq that
// crossed could reach another run's caller), and the kept replies not
// taken yet, each cut to keptReplyBytes.
func (b *inbox) carry() InboxCarry {
	queue := slices.Clone(b.queue)
	for i := range queue {
		queue[i].Seq = 0
	}
	var kept []KeptReply
	for _, k := range b.kept {
		if !k.Taken {
			kept = append(kept, KeptReply{UpdateID: k.UpdateID, Reply: cutReply(k.Reply, keptReplyBytes)})
		}
	}
	return InboxCarry{Queue: queue, Replies: kept}
}

// cutReply fits a reply into n bytes: the reply, or its head with a note
// that says where the whole one is.
func cutReply(reply string, n int) string {
	if len(reply) <= n {
		return reply
	}
	note := fmt.Sprintf("\n\n[This reply was %d bytes; its first %%d are kept here. The whole reply is the transcript's assistant message (messages query).]", len(reply))
	head := text.Cut(reply, n-len(note)-8)
	return head + fmt.Sprintf(note, len(head))
}
