package transcript

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Nothing that reads a transcript for a model call or a tool call queries a
// workflow: the reader reaches the server through History, which has no
// query, and neither it nor the activities name a query call or the
// package that retries queries. A model call depends on the server alone,
// never on a live workflow worker (testsuite: TestColdModelCallReadsHistory).
func TestNothingQueries(t *testing.T) {
	for _, dir := range []string{".", "../activities", "../activities/mcp"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in %s: %v", dir, err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				if p, _ := strconv.Unquote(imp.Path.Value); strings.HasSuffix(p, "/internal/patient") {
					t.Errorf("%s imports %s, which queries workflows", fset.Position(imp.Pos()), p)
				}
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok && strings.HasPrefix(sel.Sel.Name, "QueryWorkflow") {
					t.Errorf("%s calls %s", fset.Position(sel.Pos()), sel.Sel.Name)
				}
				return true
			})
		}
	}
}
