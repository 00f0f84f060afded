package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/todoflow/todoflow/internal/patient"
	"github.com/todoflow/todoflow/internal/text"
	"github.com/todoflow/todoflow/model"
)

// The transcript lives in the workflow; activities that need part of it
// (CallModel's messages, RunTool's call by reference) find it in their
// worker's cache or read it from the run's history (transcripthistory.go),
// and what history cannot tell with a query. A query answer is capped by
// the server at 2 MiB ("Blob data size exceeds limit"), and one message can
// hold a whole file, so answers are sized in bytes, not in messages.

// TranscriptQuery is the name of the internal workflow query that the
// activities read what history cannot tell them with (see TranscriptPage).
// It is a query, not an update or a signal, because reading must leave
// nothing in history; it is the last resort, because a run that no worker
// has cached is replayed to answer it.
const TranscriptQuery = "transcript"

// DefaultPageBytes bounds the JSON of the messages in one query answer. It is
// far below the server's 2 MiB cap, so that the answer's envelope, the
// payload metadata and a message whose other fields cannot be split (see
// TranscriptPage) still fit.
const DefaultPageBytes = 512 << 10

// PageRequest asks the transcript query for the messages [Start, End).
// ContentOffset, when not 0, asks for the rest of message Start's content
// from that byte on: a message too large for one answer is sent in parts.
type PageRequest struct {
	Start int `json:"start"`
	End   int `json:"end"`
	// MaxBytes bounds the JSON of the page's messages; 0 means
	// DefaultPageBytes.
	MaxBytes      int `json:"max_bytes"`
	ContentOffset int `json:"content_offset"`
}

// Page is one answer of the transcript query.
//
// Either Messages are whole messages, Next is the index of the message after
// them and NextContentOffset is 0; or Messages holds one part of message
// Start: a copy of it whose Content is a slice of the content. Then Next is
// Start and NextContentOffset the byte where the next part begins, except
// for the last part, which has Next = Start+1 and NextContentOffset 0. The
// parts' contents, concatenated, are the message's content.
type Page struct {
	Messages          []model.Message `json:"messages"`
	Next              int             `json:"next"`
	NextContentOffset int             `json:"next_content_offset"`
}

// TranscriptPage answers the transcript query on msgs: the messages from
// req.Start, up to req.End (and the end of msgs), whose JSON encodings sum
// to at most req.MaxBytes. A page holds at least one message, or one part of
// one, when Start < End, so that a reader always advances.
//
// A message that does not fit alone is sent in parts (see Page), each sized
// to fit, cut between runes so that every part is valid UTF-8 where the
// content is. A message whose fields other than its content already take
// MaxBytes is sent whole: nothing can be cut from it, and it did fit in the
// history event that recorded it, so it fits a query answer.
//
// TranscriptPage is pure (no I/O, no clock, no map iteration), so that the
// workflow can answer the query with it.
func TranscriptPage(msgs []model.Message, req PageRequest) (Page, error) {
	if err := req.validate(len(msgs)); err != nil {
		return Page{}, err
	}
	maxBytes := req.MaxBytes
	if maxBytes == 0 {
		maxBytes = DefaultPageBytes
	}
	end := min(req.End, len(msgs))
	page := Page{Messages: []model.Message{}, Next: req.Start}
	if req.Start >= end {
		return page, nil
	}
	if req.ContentOffset > 0 {
		return part(msgs[req.Start], req.Start, req.ContentOffset, maxBytes)
	}
	total := 0
	for i := req.Start; i < end; i++ {
		n, err := encodedSize(msgs[i])
		if err != nil {
			return Page{}, fmt.Errorf("transcript message %d: %w", i, err)
		}
		if total+n > maxBytes {
			if i == req.Start {
				return part(msgs[i], i, 0, maxBytes)
			}
			break
		}
		total += n
		page.Messages = append(page.Messages, msgs[i])
		page.Next = i + 1
	}
	return page, nil
}

// validate checks a request against a transcript of n messages.
func (r PageRequest) validate(n int) error {
	switch {
	case r.Start < 0:
		return fmt.Errorf("transcript page: start must not be negative (got %d)", r.Start)
	case r.End < 0:
		return fmt.Errorf("transcript page: end must not be negative (got %d)", r.End)
	case r.MaxBytes < 0:
		return fmt.Errorf("transcript page: max_bytes must not be negative (got %d)", r.MaxBytes)
	case r.ContentOffset < 0:
		return fmt.Errorf("transcript page: content_offset must not be negative (got %d)", r.ContentOffset)
	case r.Start > n:
		return fmt.Errorf("transcript page: start %d is past the end of the transcript (%d messages)", r.Start, n)
	case r.End < r.Start:
		return fmt.Errorf("transcript page: end %d is before start %d", r.End, r.Start)
	case r.ContentOffset > 0 && r.Start == min(r.End, n):
		return fmt.Errorf("transcript page: content_offset %d asks for a part of message %d, which is not in [start, end) = [%d, %d) of %d messages",
			r.ContentOffset, r.Start, r.Start, r.End, n)
	}
	return nil
}

// part returns the part of m (message i of the transcript) that starts at
// byte off of its content and fits in maxBytes.
func part(m model.Message, i, off, maxBytes int) (Page, error) {
	content := m.Content
	if off > 0 && (off >= len(content) || text.CutIndex(content, off) != off) {
		return Page{}, fmt.Errorf("transcript page: content_offset %d of message %d is not the start of a part (its content has %d bytes)", off, i, len(content))
	}
	m.Content = ""
	fixed, err := encodedSize(m)
	if err != nil {
		return Page{}, fmt.Errorf("transcript message %d: %w", i, err)
	}
	rest := content[off:]
	n := len(rest)
	if room := maxBytes - fixed; room > 0 {
		n = fitJSON(rest, room)
		// fitJSON mirrors encoding/json's escaping; measure the result
		// anyway, so that a difference costs a smaller part, never an
		// answer over the limit.
		for n > 0 {
			m.Content = rest[:n]
			size, err := encodedSize(m)
			if err != nil {
				return Page{}, fmt.Errorf("transcript message %d: %w", i, err)
			}
			if size <= maxBytes {
				break
			}
			n = text.CutIndex(rest, n-(size-maxBytes))
		}
		if n == 0 {
			// Not even one rune fits beside the other fields: send one
			// anyway, a few bytes over, so that the reader advances.
			_, n = utf8.DecodeRuneInString(rest)
		}
	}
	m.Content = rest[:n]
	if off+n == len(content) {
		return Page{Messages: []model.Message{m}, Next: i + 1}, nil
	}
	return Page{Messages: []model.Message{m}, Next: i, NextContentOffset: off + n}, nil
}

// encodedSize is the length of m's JSON, as a query answer carries it.
func encodedSize(m model.Message) (int, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return 0, fmt.Errorf("encode message: %w", err)
	}
	return len(b), nil
}

// fitJSON returns the length of the longest prefix of s, ending between
// runes, whose JSON string encoding (without the quotes) takes at most room
// bytes. The escaping is encoding/json's: HTML-safe, invalid bytes as
// \ufffd, U+2028 and U+2029 escaped.
func fitJSON(s string, room int) int {
	used := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		w := size
		switch {
		case r < utf8.RuneSelf:
			switch {
			case r == '"' || r == '\\' || r == '\b' || r == '\f' || r == '\n' || r == '\r' || r == '\t':
				w = 2
			case r < 0x20 || r == '<' || r == '>' || r == '&':
				w = 6 // \u00XX
			}
		case r == utf8.RuneError && size == 1, r == '\u2028', r == '\u2029':
			w = 6
		}
		if used+w > room {
			return i
		}
		used += w
		i += size
	}
	return len(s)
}

// MessagesPage answers the public messages query: the transcript from
// offset, at most limit messages (0: no limit), and at most DefaultPageBytes
// of JSON, so that the answer stays under the server's 2 MiB cap.
//
// A client therefore may get fewer messages than it asked for, even with
// limit 0 ("all"): it reads the whole transcript by asking again with offset
// advanced by the number of messages it got, until a page comes back empty.
// A page holds at least one whole message while offset is inside the
// transcript, however large that message is; messages are never cut here.
func MessagesPage(msgs []model.Message, offset, limit int) ([]model.Message, error) {
	if offset < 0 || limit < 0 {
		return nil, fmt.Errorf("messages query: offset and limit must not be negative (got %d, %d)", offset, limit)
	}
	if offset >= len(msgs) {
		return []model.Message{}, nil
	}
	end := len(msgs)
	if limit > 0 {
		end = min(end, offset+limit)
	}
	total := 0
	for i := offset; i < end; i++ {
		n, err := encodedSize(msgs[i])
		if err != nil {
			return nil, fmt.Errorf("messages query: message %d: %w", i, err)
		}
		if total += n; total > DefaultPageBytes && i > offset {
			return msgs[offset:i], nil
		}
	}
	return msgs[offset:end], nil
}

// readTranscript reads the messages of spans from the workflow's
// transcript: from its history where that tells them (transcripthistory.go),
// else with the transcript query.
func (a *Activities) readTranscript(ctx context.Context, workflowID, runID string, spans []Span) ([]model.Message, error) {
	if a.Client == nil {
		return nil, temporal.NewNonRetryableApplicationError("worker has no Temporal client to read the transcript with", ErrTypeModelConfig, nil)
	}
	t, err := a.transcriptFromHistory(ctx, workflowID, runID, spans)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		if activity.IsActivity(ctx) {
			activity.GetLogger(ctx).Warn("Reading the transcript by query: its history could not be read", "Error", err)
		}
		t = &historyTranscript{answerAt: -1}
	}
	out, holes, at := gather(spans, t.message)
	if len(holes) == 0 {
		return out, nil
	}
	// A wait well inside the activity's timeout: a run no worker answers
	// for is a failed attempt, retried, rather than a call that hangs.
	qctx, cancel := context.WithTimeout(ctx, QueryWait)
	defer cancel()
	got, err := a.readByQuery(qctx, workflowID, runID, holes)
	if err != nil {
		return nil, err
	}
	if err := fillHoles(out, holes, at, got, func(int, model.Message) {}); err != nil {
		return nil, err
	}
	return out, nil
}

// QueryWait bounds how long a read of the transcript waits for a worker to
// answer its query.
const QueryWait = 2 * time.Minute

// transcriptFromHistory reads what the run's history tells of the messages
// of spans (historyread.go).
func (a *Activities) transcriptFromHistory(ctx context.Context, workflowID, runID string, spans []Span) (*historyTranscript, error) {
	dc := a.DataConverter
	if dc == nil {
		dc = converter.GetDefaultDataConverter()
	}
	return a.historyFor(ctx, workflowID, runID, spans, dc)
}

// readByQuery reads spans of the transcript with the transcript query, page
// by page, and puts messages that came in parts back together. A page
// answered late is asked for again (patient.Query) until ctx ends: the
// caller heartbeats meanwhile.
func (a *Activities) readByQuery(ctx context.Context, workflowID, runID string, spans []Span) ([]model.Message, error) {
	mismatch := func(detail string) error {
		return temporal.NewNonRetryableApplicationError("transcript of "+workflowID+": "+detail, ErrTypeTranscriptMismatch, nil)
	}
	var out []model.Message
	for _, sp := range spans {
		// pending is the message being read in parts, nil between messages.
		var pending *model.Message
		req := PageRequest{Start: sp.Start, End: sp.End}
		for req.Start < sp.End {
			v, err := patient.Query(ctx, a.Client, workflowID, runID, TranscriptQuery, req)
			if err != nil {
				return nil, fmt.Errorf("read transcript of %s [%d,%d) from content byte %d: %w", workflowID, req.Start, sp.End, req.ContentOffset, err)
			}
			var page Page
			if err := v.Get(&page); err != nil {
				return nil, fmt.Errorf("decode transcript page of %s at %d: %w", workflowID, req.Start, err)
			}
			if len(page.Messages) == 0 {
				return nil, mismatch(fmt.Sprintf("no message at %d (wanted up to %d)", req.Start, sp.End))
			}
			isPart := page.Next == req.Start && page.NextContentOffset > req.ContentOffset
			lastPart := req.ContentOffset > 0 && page.Next == req.Start+1 && page.NextContentOffset == 0
			whole := req.ContentOffset == 0 && page.Next == req.Start+len(page.Messages) && page.NextContentOffset == 0
			switch {
			case (isPart || lastPart) && len(page.Messages) == 1:
				if pending == nil {
					first := page.Messages[0]
					pending = &first
				} else {
					pending.Content += page.Messages[0].Content
				}
				if lastPart {
					out = append(out, *pending)
					pending = nil
				}
			case whole && page.Next <= sp.End:
				out = append(out, page.Messages...)
			default:
				// An answer that does not advance as the protocol says
				// would loop or lose messages; the transcript is not the
				// one the caller meant.
				return nil, mismatch(fmt.Sprintf("the page for [%d,%d) from content byte %d has %d messages, next %d, next content byte %d",
					req.Start, sp.End, req.ContentOffset, len(page.Messages), page.Next, page.NextContentOffset))
			}
			req.Start, req.ContentOffset = page.Next, page.NextContentOffset
		}
	}
	return out, nil
}
