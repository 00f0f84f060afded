package transcript

import (
	"encoding/json"
	"fmt"

	"github.com/todoflow/todoflow/model"
)

// PageBytes bounds the JSON of the messages in one answer of the public
// messages query (api.MessagesQuery). It is far below the server's 2 MiB
// cap on a query's answer, so that the answer's envelope and one message
// larger than a page still fit.
const PageBytes = 512 << 10

// MessagesPage answers the public messages query: the transcript from
// offset, at most limit messages (0: no limit), and at most PageBytes of
// JSON, so that the answer stays under the server's 2 MiB cap.
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
		b, err := json.Marshal(msgs[i])
		if err != nil {
			return nil, fmt.Errorf("messages query: message %d: %w", i, err)
		}
		if total += len(b); total > PageBytes && i > offset {
			return msgs[offset:i], nil
		}
	}
	return msgs[offset:end], nil
}
