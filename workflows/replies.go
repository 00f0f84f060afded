package workflows

import (
	"fmt"
	"slices"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// How a turn's reply reaches the caller who waits for it.
//
// send_message and retry_turn are answered with the reply of the turn they
// start. An update lives in one run and cannot cross continue-as-new, so a
// turn whose wait is handed over (an approval that takes a day, steps
// blocked on subagents that work for a week) cannot keep its caller
// waiting: the run would never be at rest to hand over, and its history
// would grow with the children's news until the server ends it. Instead:
//
//   - the update is answered with a TurnGoesOn failure that names the
//     caller's own update id, and the turn is carried with that id
//     (Inbound.ReplyTo);
//   - the run that ends the turn keeps its reply under that id, carried
//     (cut to keptReplyBytes) to later runs until someone took it;
//   - the turn_reply update {"update_id"} waits for that reply and returns
//     it, or is itself answered TurnGoesOn when the turn is handed over
//     again. The typed client (client.Sent.Reply) does this for its
//     caller: a chat sees its reply, whatever the runs in between;
//   - a session that ends with a reply not taken waits for its caller as
//     long as for its reporters (windDown), then completes: the result
//     has the reply.
//
// The same caller is never left waiting and no reply is lost: it is either
// the update's answer or kept under the update's id, and a turn_reply for
// an id no turn answers is refused.

// ErrTypeTurnGoesOn is the type of the failure a send_message, retry_turn
// or turn_reply is answered with when its turn was handed over to the
// session's next run: the reply comes from turn_reply (TurnReplyArgs).
const ErrTypeTurnGoesOn = "TurnGoesOn"

// TurnGoesOn is the detail of a TurnGoesOn failure.
type TurnGoesOn struct {
	// UpdateID is what turn_reply asks for: the id of the update that
	// started the turn.
	UpdateID string `json:"update_id"`
}

// TurnReplyArgs is the argument of the turn_reply update.
type TurnReplyArgs struct {
	UpdateID string `json:"update_id"`

	unknown string // strict.go
}

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

// enqueue puts a message (or a retry) in the inbox and waits for the reply
// of its turn: the body of the send_message and retry_turn updates.
func (a *agent) enqueue(ctx workflow.Context, in Inbound) (string, error) {
	a.nextSeq++
	in.Seq = a.nextSeq
	if u := workflow.GetCurrentUpdateInfo(ctx); u != nil {
		in.ReplyTo = u.ID
	}
	a.inbox = append(a.inbox, in)
	if err := workflow.Await(ctx, func() bool { _, ok := a.replies[in.Seq]; return ok || a.goesOn(in.ReplyTo) }); err != nil {
		return "", err
	}
	if reply, ok := a.replies[in.Seq]; ok {
		delete(a.replies, in.Seq)
		return reply, nil
	}
	// The turn's reply is now kept under the update's id, not its seq.
	if m := a.carried(in.ReplyTo); m != nil {
		m.Seq = 0
	}
	return "", turnGoesOn(in.ReplyTo)
}

// goesOn reports whether the turn whose reply update id waits for is being
// handed over to the next run, where it stood or still queued: its callers
// are answered TurnGoesOn.
func (a *agent) goesOn(id string) bool {
	return id != "" && a.handing && a.carried(id) != nil
}

// carried is the turn started by update id that a handover carries: the
// turn handed over where it stood (first in the inbox), or a message still
// waiting for its turn.
func (a *agent) carried(id string) *Inbound {
	if i := slices.IndexFunc(a.inbox, func(m Inbound) bool { return m.ReplyTo == id }); i >= 0 {
		return &a.inbox[i]
	}
	return nil
}

func turnGoesOn(id string) error {
	msg := fmt.Sprintf("the turn goes on in the session's next run (it waited past this run's history limits); its reply comes from the %s update with {\"update_id\": %q}", TurnReplyUpdate, id)
	return temporal.NewNonRetryableApplicationError(msg, ErrTypeTurnGoesOn, nil, TurnGoesOn{UpdateID: id})
}

// replied hands the reply of turn m to whoever waits for it: the update
// that started it in this run, or, for a turn an update of an earlier run
// (or this one, before a handover it then did not make) started, the
// kept replies.
func (a *agent) replied(m Inbound, reply string) {
	switch {
	case m.Seq != 0:
		a.replies[m.Seq] = reply
	case m.ReplyTo != "":
		a.kept = append(a.kept, KeptReply{UpdateID: m.ReplyTo, Reply: reply})
		if n := len(a.kept) - maxKeptReplies; n > 0 {
			a.kept = slices.Delete(a.kept, 0, n)
		}
	}
}

// keptReply returns the index of the reply kept for update id, or -1.
func (a *agent) keptReply(id string) int {
	return slices.IndexFunc(a.kept, func(k KeptReply) bool { return k.UpdateID == id })
}

// answers reports whether a turn of this run will answer update id: the
// running one, one handed over, or one waiting in the inbox.
func (a *agent) answers(id string) bool {
	return a.cur != nil && a.cur.in.ReplyTo == id || a.carried(id) != nil
}

func (a *agent) validateTurnReply(args TurnReplyArgs) error {
	switch {
	case args.unknown != "":
		return unknownField(TurnReplyUpdate, args.unknown)
	case args.UpdateID == "":
		return fmt.Errorf(`%s takes {"update_id": "..."}: the id a %s failure named`, TurnReplyUpdate, ErrTypeTurnGoesOn)
	case a.keptReply(args.UpdateID) < 0 && !a.answers(args.UpdateID):
		return fmt.Errorf("no turn of this session answers update %q: its reply was dropped for %d later ones or left behind in an earlier run once taken, or the turn never went on here; the messages query has every reply", args.UpdateID, maxKeptReplies)
	}
	return nil
}

// onTurnReply waits for the reply of the turn update id started, and takes
// it.
func (a *agent) onTurnReply(ctx workflow.Context, args TurnReplyArgs) (string, error) {
	id := args.UpdateID
	if err := workflow.Await(ctx, func() bool { return a.keptReply(id) >= 0 || a.goesOn(id) }); err != nil {
		return "", err
	}
	i := a.keptReply(id)
	if i < 0 {
		return "", turnGoesOn(id)
	}
	a.kept[i].Taken = true
	return a.kept[i].Reply, nil
}

// untaken reports whether a kept reply waits for its caller.
func (a *agent) untaken() bool {
	return slices.ContainsFunc(a.kept, func(k KeptReply) bool { return !k.Taken })
}

// carriedReplies are the kept replies as a carry holds them: those not
// taken yet, each cut to keptReplyBytes.
func (a *agent) carriedReplies() []KeptReply {
	var out []KeptReply
	for _, k := range a.kept {
		if !k.Taken {
			out = append(out, KeptReply{UpdateID: k.UpdateID, Reply: cutReply(k.Reply, keptReplyBytes)})
		}
	}
	return out
}

// cutReply fits a reply into n bytes: the reply, or its head with a note
// that says where the whole one is.
func cutReply(reply string, n int) string {
	if len(reply) <= n {
		return reply
	}
	note := fmt.Sprintf("\n\n[This reply was %d bytes; its first %%d are kept here. The whole reply is the transcript's assistant message (messages query).]", len(reply))
	head := cutUTF8(reply, n-len(note)-8)
	return head + fmt.Sprintf(note, len(head))
}

// UnmarshalJSON decodes turn_reply's arguments, keeping an unknown field for
// the validator.
func (r *TurnReplyArgs) UnmarshalJSON(b []byte) error {
	type plain TurnReplyArgs
	unknown, err := strictly(b, (*plain)(r))
	r.unknown = unknown
	return err
}
