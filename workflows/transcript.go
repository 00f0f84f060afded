package workflows

import (
	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
)

// The two queries that read the transcript. Their logic is pure and lives
// beside its reader in package activities, so that the paging rules are
// written, and tested, once.

// transcriptPage answers the internal transcript query
// (activities.TranscriptQuery), with which CallModel and RunTool read
// messages back: a page bounded in bytes, a large message in parts.
func (a *agent) transcriptPage(req activities.PageRequest) (activities.Page, error) {
	return activities.TranscriptPage(a.window.msgs, req)
}

// messagesQuery answers the public messages query (MessagesQuery): the
// transcript from offset, at most limit messages (0: all) and at most
// activities.DefaultPageBytes of JSON; see activities.MessagesPage for what
// a client sees.
func (a *agent) messagesQuery(offset, limit int) ([]model.Message, error) {
	return activities.MessagesPage(a.window.msgs, offset, limit)
}
