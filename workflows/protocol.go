package workflows

import (
	"crypto/fips140"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/workflow"
)

// A worker that meets a history or an input it cannot serve refuses it by
// a panic before the run makes any command (docs/protocol.md, "Older
// builds"): the default WorkflowPanicPolicy blocks the workflow task, and
// the run stays open; a returned error would fail the run for good, and a
// nondeterminism error further on says nothing a user can act on.
//
// Which protocol wrote a history is read without a command of its own: from
// the build id of the worker that completed the run's first workflow task
// (GetCurrentBuildID while that task is replayed), else from the input's
// Protocol. A run's first task, not a replay, is refused only for what its
// input cannot say to this build.

// buildMark starts the build id an unversioned worker records, before its
// protocol and its binary's checksum.
const buildMark = "todoflow-p"

// MarkBuild is the build id an unversioned worker of this build records in
// the workflow tasks it completes (worker.Options.BuildID): its protocol,
// then sum, which tells builds of one protocol apart.
func MarkBuild(sum string) string {
	return buildMark + strconv.Itoa(api.Protocol) + "-" + sum
}

// DefaultBuildID is the build id a worker of this process records when it is
// given none: the SDK's default, a digest of the executable (MD5, SHA-256
// in FIPS mode); "" when the executable cannot be read. A worker of another
// main that registers the workflow (WithOptions) takes it as its own, so
// that a history whose first task this binary completed is served whatever
// its input says. Read once, at registration, never by workflow code.
var DefaultBuildID = sync.OnceValue(binaryDigest)

func binaryDigest() string {
	path, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var h hash.Hash = md5.New()
	if fips140.Enabled() {
		h = sha256.New()
	}
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// builtProtocol is the protocol a build id says its worker speaks; false
// for one that says none.
func builtProtocol(id string) (int, bool) {
	rest, ok := strings.CutPrefix(id, buildMark)
	if !ok {
		return 0, false
	}
	n, _, _ := strings.Cut(rest, "-")
	p, err := strconv.Atoi(n)
	return p, err == nil && p >= 0
}

// started is what refusal knows of a run: its input, whether its first
// workflow task is being replayed, the build id that completed that task,
// and whether a parent started it.
type started struct {
	in         handover
	replaying  bool
	firstBuild string
	child      bool
}

// refusal is the protocol of what this worker cannot serve, and whether it
// cannot.
func refusal(s started, opts Options) (int, bool) {
	if s.replaying {
		p := s.in.Protocol
		if bp, ok := builtProtocol(s.firstBuild); ok {
			p = bp
		} else if opts.BuildID != "" && s.firstBuild == opts.BuildID {
			p = api.Protocol
		}
		return p, p != api.Protocol
	}
	switch {
	case s.in.Protocol > api.Protocol:
		return s.in.Protocol, true
	case s.in.Carry != nil && s.in.Carry.Protocol > api.Protocol:
		return s.in.Carry.Protocol, true
	case s.child && s.in.Carry == nil && s.in.Protocol != api.Protocol:
		// Its parent runs another protocol's tree, and its input may
		// hold fields this build cannot know (tree_bus).
		return s.in.Protocol, true
	}
	return 0, false
}

// RefusalMessage is the message of a workflow task refused for a run
// started by a build that speaks protocol p.
func RefusalMessage(p int) string {
	return fmt.Sprintf("this run was started by a todoflow build that speaks protocol %d; run that build's worker for it, or move sessions with Worker Versioning (docs/protocol.md: Versions and upgrades). This worker speaks protocol %d.", p, api.Protocol)
}

// refuseForeign blocks the workflow task of a run this worker cannot serve
// (see above). It makes no command and reads only what history recorded,
// so a run this build started replays through it unchanged.
func refuseForeign(ctx workflow.Context, in handover, opts Options) {
	info := workflow.GetInfo(ctx)
	s := started{in: in, replaying: workflow.IsReplaying(ctx), firstBuild: info.GetCurrentBuildID(), child: info.ParentWorkflowExecution != nil}
	if p, refused := refusal(s, opts); refused {
		panic(RefusalMessage(p))
	}
	if ignored := in.Ignored(); ignored != "" {
		workflow.GetLogger(ctx).Warn("the carry of another protocol held what this build does not know; ignored", "carry_protocol", in.Carry.Protocol, "ignored", ignored)
	}
}
