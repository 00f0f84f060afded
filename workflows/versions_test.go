package workflows

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// A change to the command sequence after the first release is a patch
// (patches.go): GetVersion is called in patches.go alone, once, and every
// patch id is a patch* constant there whose comment names the release that
// removes it. A GetVersion that creeps in elsewhere, or a patch nobody
// plans to remove, fails here.
func TestPatchesAreListed(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			return err
		}
		uses := versionUses(f)
		if path == "patches.go" {
			if len(uses) != 1 {
				t.Errorf("patches.go names workflow.GetVersion %d times, want once (in patched)", len(uses))
			}
			checkPatchConsts(t, fset, f)
			return nil
		}
		for _, pos := range uses {
			t.Errorf("%s uses workflow.GetVersion: a change to the command sequence is a patch in patches.go (docs/protocol.md: Versions and upgrades)", fset.Position(pos))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// removeIn is how a patch's comment names the release that removes it.
var removeIn = regexp.MustCompile(`Remove in v\d+\.\d+\.\d+\.`)

// checkPatchConsts checks that each patch* constant of f says when it goes.
func checkPatchConsts(t *testing.T, fset *token.FileSet, f *ast.File) {
	t.Helper()
	for _, decl := range f.Decls {
		g, ok := decl.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for _, name := range vs.Names {
				if !strings.HasPrefix(name.Name, "patch") {
					continue
				}
				doc := vs.Doc
				if doc == nil && len(g.Specs) == 1 {
					doc = g.Doc
				}
				if doc == nil || !removeIn.MatchString(doc.Text()) {
					t.Errorf("%s: patch %s does not say \"Remove in vX.Y.Z.\"", fset.Position(name.Pos()), name.Name)
				}
			}
		}
	}
}

// sdkWorkflow is the SDK package whose GetVersion branches a workflow's command sequence.
const sdkWorkflow = "go.temporal.io/sdk/workflow"

// versionUses are the places where f names the SDK's GetVersion, called or not (a
// function value taken under another name is a branch all the same): through the
// import's name whatever it is (workflow, an alias), or bare where it is dot-imported.
// Comments and strings that mention it are not uses.
func versionUses(f *ast.File) []token.Pos {
	names, dot := map[string]bool{}, false
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p != sdkWorkflow {
			continue
		}
		switch {
		case imp.Name == nil:
			names["workflow"] = true
		case imp.Name.Name == ".":
			dot = true
		case imp.Name.Name != "_":
			names[imp.Name.Name] = true
		}
	}
	var uses []token.Pos
	selected := map[*ast.Ident]bool{} // names after a dot: fields and methods, not the dot-imported function
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			selected[n.Sel] = true
			if x, ok := n.X.(*ast.Ident); ok && names[x.Name] && n.Sel.Name == "GetVersion" {
				uses = append(uses, n.Pos())
			}
		case *ast.Ident:
			if dot && n.Name == "GetVersion" && !selected[n] {
				uses = append(uses, n.Pos())
			}
		}
		return true
	})
	return uses
}

// The checker finds GetVersion however the SDK's package is named in the file,
// and nothing that only looks like it.
func TestVersionUses(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		want int
	}{
		{"plain", `import "go.temporal.io/sdk/workflow"
func f(ctx workflow.Context) { _ = workflow.GetVersion(ctx, "x", workflow.DefaultVersion, 1) }`, 1},
		{"aliased", `import wf "go.temporal.io/sdk/workflow"
func f(ctx wf.Context) { _ = wf.GetVersion(ctx, "x", wf.DefaultVersion, 1) }`, 1},
		{"dot-imported", `import . "go.temporal.io/sdk/workflow"
func f(ctx Context) { _ = GetVersion(ctx, "x", DefaultVersion, 1) }`, 1},
		{"renamed function value", `import "go.temporal.io/sdk/workflow"
var branch = workflow.GetVersion
func f(ctx workflow.Context) { _ = branch(ctx, "x", workflow.DefaultVersion, 1) }`, 1},
		{"aliased and renamed", `import (
	"go.temporal.io/sdk/workflow"
	sdk "go.temporal.io/sdk/workflow"
)
func f(ctx workflow.Context) { g := sdk.GetVersion; _ = g(ctx, "x", workflow.DefaultVersion, 1); _ = workflow.GetVersion(ctx, "y", workflow.DefaultVersion, 1) }`, 2},
		{"inside another selector", `import wf "go.temporal.io/sdk/workflow"
func f(ctx wf.Context) { _ = wrap(wf.GetVersion).Run }`, 1},
		{"dot-imported, a method of that name", `import . "go.temporal.io/sdk/workflow"
func f(info *Info) { _ = info.GetVersion }`, 0},
		{"comment and string", `import "go.temporal.io/sdk/workflow"
// no workflow.GetVersion( here
func f(ctx workflow.Context) { _ = "workflow.GetVersion(" }`, 0},
		{"another package's GetVersion", `import workflow "example.invalid/other"
func f() { _ = workflow.GetVersion() }`, 0},
		{"a method of that name", `import "go.temporal.io/sdk/workflow"
func f(ctx workflow.Context, info *workflow.Info) { _ = info.GetVersion; _ = ctx }`, 0},
		{"blank import", `import _ "go.temporal.io/sdk/workflow"
func GetVersion() {}`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := parser.ParseFile(token.NewFileSet(), "snippet.go", "package p\n"+tc.src, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(versionUses(f)); got != tc.want {
				t.Errorf("%d uses of GetVersion found; want %d in\n%s", got, tc.want, tc.src)
			}
		})
	}
}
