package activities

import "strings"

// Types of the Temporal application errors the activities return. A workflow
// tells failures apart by ApplicationError.Type(), not by message text, so
// these strings are part of the contract between activities and workflows,
// and they are recorded in workflow histories.
const (
	// ErrTypeModel is a failed model call: the server refused the request
	// or did not answer. It is retryable or not as model.Error classified
	// it, with the provider's Retry-After as the next retry delay.
	ErrTypeModel = "ModelError"

	// ErrTypeModelConfig means the worker is misconfigured for the call:
	// the model reference is unknown or its client cannot be built (no API
	// key), or the worker has no model resolver or no Temporal client. It
	// is not retryable, since no retry will fix the worker; the operator
	// must.
	ErrTypeModelConfig = "ModelConfig"

	// ErrTypeContextOverflow means the request does not fit the model's
	// context window. It is not retryable, because the same request will be
	// refused again, but unlike other model errors the workflow can recover:
	// a shorter transcript (summarised or trimmed) will be accepted.
	ErrTypeContextOverflow = "ContextLengthExceeded"

	// ErrTypeTranscriptMismatch means the transcript read back from the
	// calling workflow is not what the activity was told to expect: a span
	// past its end, or a tool call that is not at the message it was said
	// to be. It is not retryable; it points at a bug, not at bad luck.
	ErrTypeTranscriptMismatch = "TranscriptMismatch"
)

// distinctCause returns err when its text adds to msg, and nil when msg
// already quotes it. ApplicationError.Error() prints "msg (type: ...): cause"
// and the workflow shows the innermost message of a failure chain, so a cause
// that repeats the message would either say everything twice or replace a
// clear sentence by a bare Go error.
func distinctCause(msg string, err error) error {
	if err == nil || strings.Contains(msg, err.Error()) {
		return nil
	}
	return err
}
