package activities

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/internal/text"
)

// What names a session's folders on a worker: the workspace of a run that
// names none (<state folder>/sessions/<key>) and its file reports
// (<state folder>/reports/<key>/).
//
// A workflow id is chosen by whoever starts a session, and a closed
// session's id may be taken again by a new one: a folder named by the id
// would hand the new session the old one's files. So a session is named by
// its root workflow's id and that workflow's first run id, which the server
// draws at random for each new session and keeps through continue-as-new,
// hashed into a key of fixed length and alphabet: two ids never share a
// folder however long they are, or whatever characters they hold, and the
// key is a folder name whatever the id. The root computes it (SessionKey)
// and hands it to its subagents, which share its workspace.

// SessionsFolder is the folder of the state folder that holds the
// workspaces of runs that name none, one per session. It is not a
// workspace root, so that no run can name another session's folder as its
// workspace.
const SessionsFolder = "sessions"

// ReportsFolder is the folder of the state folder that holds the file
// reporters' files, in a folder per session.
const ReportsFolder = "reports"

// SessionKey is the key of the session whose root workflow is workflowID
// and began with run firstRunID: the SHA-256 of both, in hex. The id's
// length comes first, so that no other pair of id and run id hashes the
// same text.
func SessionKey(workflowID, firstRunID string) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%d:%s%s", len(workflowID), workflowID, firstRunID))
	return hex.EncodeToString(sum[:])
}

// sessionFolder is the name of the folder of a call's session: its key,
// or, for a call scheduled by a build from before session keys (which
// sends none), legacy, the folder that build used.
func sessionFolder(key, legacy string) (string, error) {
	if key == "" {
		return legacy, nil
	}
	if err := api.CheckSessionKey(key); err != nil {
		return "", err
	}
	return key, nil
}

// maxLegacyFolder keeps legacy folder names well under the usual limit of
// 255 bytes.
const maxLegacyFolder = 128

// legacyFolder is the folder builds before session keys gave a workflow
// id: letters, digits, '-', '_' and '.' kept, every other byte %XX, and a
// name too long cut and made unique with a hash of the id. Kept only so
// that such a build's calls, on a worker upgraded under them, find their
// files.
func legacyFolder(id string) string {
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		c := id[i]
		if text.IsAlnum(rune(c)) || c == '-' || c == '_' || c == '.' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	name := b.String()
	switch name {
	case ".", "..": // the folder itself or its parent
		name = strings.ReplaceAll(name, ".", "%2E")
	}
	if len(name) > maxLegacyFolder {
		sum := sha256.Sum256([]byte(id))
		name = name[:maxLegacyFolder-17] + "-" + hex.EncodeToString(sum[:8])
	}
	return name
}
