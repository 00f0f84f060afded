package api

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/todoflow/todoflow"

// internal reports whether a package is workflow or activity code, which the
// clients must not link: they speak to a run through this package.
func internal(path string) bool {
	for _, p := range []string{module + "/workflows", module + "/activities"} {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// The clients depend on the contract, not on the workflow: a change inside
// the workflow cannot break their build, and their binaries do not link it.
// starter also runs an in-process worker (`starter run` without --address),
// so it reaches the workflow, but only through the worker's wiring.
func TestClientsImportNoWorkflowInternals(t *testing.T) {
	for _, tt := range []struct {
		pkg string
		// through is where the workflow may be reached from; "" for nowhere.
		through string
	}{
		{"client", ""},
		{"chat", ""},
		{"scenario", ""},
		{"starter", module + "/worker/"},
	} {
		cmd := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./"+tt.pkg)
		cmd.Dir = ".."
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps ./%s: %v", tt.pkg, err)
		}
		for line := range strings.Lines(string(out)) {
			fields := strings.Fields(line)
			importer := fields[0]
			if internal(importer) || (tt.through != "" && strings.HasPrefix(importer, tt.through)) {
				continue
			}
			for _, imp := range fields[1:] {
				if internal(imp) {
					t.Errorf("%s depends on %s through %s; it must use package api", tt.pkg, imp, importer)
				}
			}
		}
	}
}
