package workflows

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Until the first release the workflow has one command sequence: a change
// to it re-records the replay corpus instead of adding a version branch
// (doc.go, "Versions"). A GetVersion that creeps in fails here, so that the
// policy is changed on purpose, with the release that removes the branch.
func TestNoVersionBranches(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(src), "workflow.GetVersion(") {
			t.Errorf("%s calls workflow.GetVersion: no release has shipped, so re-record the corpus instead (TestRecordHistories -record)", f)
		}
	}
}
