package transcript

import (
	"encoding/json"
	"fmt"

	"github.com/todoflow/todoflow/model"
)

// PageBytes bounds the JSON of the messages in one answer of the public
// messages query (api.MessagesQuery): far below the server's 2 MiB cap on a
// query's answer, so that the envelope and one larger message still fit.
const PageBytes = 512 << 10

// MessagesPage answers the messages query: the transcript from offset, at
// most limit messages (0: no limit) and PageBytes of JSON, but at least one
// whole message while offset is inside it. A client reads it all by asking
// again from offset plus the messages it got, until a page comes back empty.
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
