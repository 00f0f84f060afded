package workflows

import (
	"crypto/rand"
	"encoding/hex"

	"go.temporal.io/sdk/workflow"
)

// A tree's messages are signals, and anyone who may signal a session could
// forge one (a tree_hand "from" the root approving a write_file). So every
// tree message carries the tree's key, a secret the root mints by a side
// effect when it starts its first subagent and hands to each subagent in
// its input; a message without it is dropped. The key is in no query's
// answer, only in the tree's histories, which an encrypting worker seals.

// treeKeyBytes is the key's length before it is written in hex.
const treeKeyBytes = 32

// treeKey is the tree's key, minted at the root the first time a subagent
// needs it.
func (a *agent) treeKey(ctx workflow.Context) string {
	if a.tree.key == "" && a.isRoot() {
		var key string
		_ = workflow.SideEffect(ctx, func(workflow.Context) any {
			b := make([]byte, treeKeyBytes)
			_, _ = rand.Read(b) // crypto/rand does not fail on the platforms Go supports
			return hex.EncodeToString(b)
		}).Get(&key)
		a.tree.key = key
	}
	return a.tree.key
}

// proven reports whether a tree message carries the tree's key, and logs
// one that does not: it is dropped.
func (a *agent) proven(ctx workflow.Context, signal, key string) bool {
	if a.tree.key != "" && key == a.tree.key {
		return true
	}
	workflow.GetLogger(ctx).Warn("a tree message without the tree's key; dropped", "signal", signal)
	return false
}
