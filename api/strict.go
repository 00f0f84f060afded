package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Whoever may start a workflow or send it a message writes its JSON, and a
// field the workflow does not know is a mistake that must not pass quietly:
// {"aproval": {"*": "required"}} once started a run whose writes needed no
// approval. The workflow's input and the arguments of its updates and
// signals are therefore decoded strictly; a decoding error would fail the
// workflow task again and again, so an unknown field is kept and refused
// where the caller sees it: at the start (AgentInput.Settings) or in an update's
// validator. Nested objects (todo, context, ...) are held to it too.

// strictly decodes b into v, as json.Unmarshal does, and returns what a
// decoder that refuses unknown fields says of b ("" when it takes it).
func strictly[T any](b []byte, v *T) (unknown string, err error) {
	if err := json.Unmarshal(b, v); err != nil {
		return "", err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var probe T
	if err := dec.Decode(&probe); err != nil {
		// "json: unknown field "x"" speaks of the decoder, not the message.
		return strings.TrimPrefix(err.Error(), "json: "), nil
	}
	return "", nil
}

// unknownField is the error of a message that carried an unknown field;
// nil when it carried none.
func unknownField(what, unknown string) error {
	if unknown == "" {
		return nil
	}
	return fmt.Errorf("%s: %s", what, unknown)
}

// UnmarshalJSON decodes the input and keeps an unknown field for Settings to
// refuse, a carry or not: a carry is set only by a run's continue-as-new,
// which this build wrote, so an unknown field beside it is still a
// caller's mistake (a carry on a run's first input is refused at its start,
// by the workflow). Only an input written by a build of another protocol
// may hold fields this build cannot know: they are ignored, and the first
// is kept for the log (Ignored), since a carry that decodes is served. The
// carry's own fields are the workflow's to read (workflows/carry_older.go).
func (in *AgentInput) UnmarshalJSON(b []byte) error {
	type plain AgentInput
	unknown, err := strictly(b, (*plain)(in))
	if err != nil {
		return err
	}
	if bytes.Equal(in.Carry, []byte("null")) {
		in.Carry = nil
	}
	if p, ok := carryProtocol(in.Carry); ok && p != Protocol {
		in.ignored = unknown
		return nil
	}
	in.unknown = unknown
	return nil
}

// UnmarshalJSON decodes approve_plan's arguments, keeping an unknown field
// for the validator.
func (a *ApprovalArgs) UnmarshalJSON(b []byte) error {
	type plain ApprovalArgs
	unknown, err := strictly(b, (*plain)(a))
	a.unknown = unknown
	return err
}

// UnmarshalJSON decodes approve_tool's arguments, keeping an unknown field
// for the validator.
func (a *ToolApprovalArgs) UnmarshalJSON(b []byte) error {
	type plain ToolApprovalArgs
	unknown, err := strictly(b, (*plain)(a))
	a.unknown = unknown
	return err
}

// UnmarshalJSON decodes set_continuation's arguments, keeping an unknown
// field for the validator.
func (a *ContinuationArgs) UnmarshalJSON(b []byte) error {
	type plain ContinuationArgs
	unknown, err := strictly(b, (*plain)(a))
	a.unknown = unknown
	return err
}

// Ignored is what the decoding of an input written by a build of another
// protocol ignored (its first unknown field), for the worker's log; "" when
// nothing was.
func (in AgentInput) Ignored() string { return in.ignored }

// UnknownField is the error of an unknown field the arguments carried;
// nil when they had none.
func (a ApprovalArgs) UnknownField() error { return unknownField(ApprovePlanUpdate, a.unknown) }

// UnknownField is the error of an unknown field the arguments carried;
// nil when they had none.
func (a ToolApprovalArgs) UnknownField() error { return unknownField(ApproveToolUpdate, a.unknown) }

// UnknownField is the error of an unknown field the arguments carried;
// nil when they had none.
func (a ContinuationArgs) UnknownField() error { return unknownField(SetContinuationUpdate, a.unknown) }

// UnknownField is the error of an unknown field the arguments carried;
// nil when they had none.
func (a TurnReplyArgs) UnknownField() error { return unknownField(TurnReplyUpdate, a.unknown) }

// UnknownField is the error of an unknown field the arguments carried;
// nil when they had none.
func (r ResumeArgs) UnknownField() error { return unknownField(ResumeSignal, r.unknown) }
