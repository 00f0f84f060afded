package workflows

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
// where the caller sees it: at the start (resolve) or in an update's
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

// unknownField is the error of a message that carried an unknown field.
func unknownField(what, unknown string) error {
	return fmt.Errorf("%s: %s", what, unknown)
}

// UnmarshalJSON decodes the input and keeps an unknown field for resolve to
// refuse. The carry of a continue-as-new, written by the previous run, is
// not checked again: it is the run's own, and can be megabytes. One written
// by a build of another protocol may hold fields this build cannot know
// (the input's, the carry's): they are ignored, and the first is kept for
// the log (protocol.go), since a carry that decodes is served.
func (in *AgentInput) UnmarshalJSON(b []byte) error {
	type plain AgentInput
	if err := json.Unmarshal(b, (*plain)(in)); err != nil {
		return err
	}
	if in.Carry == nil {
		unknown, err := strictly(b, (*plain)(in))
		in.unknown = unknown
		return err
	}
	if in.Carry.Protocol != Protocol {
		ignored, err := strictly(b, (*plain)(in))
		in.ignored = ignored
		return err
	}
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
