package sandbox

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// planTypes are the types a Plan is made of: outside this package, no
// code writes a field of one that a plan holds.
var planTypes = map[string]bool{
	"Plan": true, "Proxy": true, "Mounts": true, "Bind": true, "Mask": true, "Link": true, "Landlock": true,
	"LandlockRule": true, "LandlockTCP": true, "LandlockOnlyPlan": true, "Rules": true, "Watch": true,
	"WorktreeWatch": true, "GitlinkWatch": true, "ProgramIdentity": true, "GlobReport": true, "Forward": true,
	"OuterProxy": true,
}

// TestNoPlanWritesOutsideSandbox scans the module's code for Linux and
// macOS, type-checked: no assignment, increment or address-of outside
// this package reaches into a plan (a field of a plan's part through a
// pointer or a slice). Writing a local copy's own fields is not writing
// the plan; what a run chooses goes into a Runtime.
func TestNoPlanWritesOutsideSandbox(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the module")
	}
	if dir := goEnv(t, "GOMODCACHE"); !exists(dir) {
		// An unprivileged run with no home (as CI's second pass) has
		// no module cache to build the module's export data from; the
		// first pass, with one, runs the scan.
		t.Skipf("no module cache for this user (%s): go list cannot build the module", dir)
	}
	for _, goos := range []string{"linux", "darwin"} {
		for _, w := range planWrites(t, goos) {
			t.Errorf("%s: %s writes into a plan: put it in sandbox.Options (planning) or sandbox.Runtime (running)", goos, w)
		}
	}
}

// listedPackage is what `go list -json` says of a package.
type listedPackage struct {
	ImportPath, Dir, Export string
	GoFiles                 []string
	Module                  *struct{ Path string }
}

// planWrites type-checks every package of the module but this one for
// goos and returns the places that write into a plan.
func planWrites(t *testing.T, goos string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-export", "-json", "github.com/fence-sandbox/fence/...")
	cmd.Env = append(os.Environ(), "GOOS="+goos)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	exports := map[string]string{}
	var ours []listedPackage
	for dec := json.NewDecoder(strings.NewReader(string(out))); dec.More(); {
		var p listedPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
		if p.Module != nil && p.Module.Path == "github.com/fence-sandbox/fence" && p.ImportPath != "github.com/fence-sandbox/fence/sandbox" {
			ours = append(ours, p)
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	})
	var found []string
	for _, p := range ours {
		// Listing the directory makes a file added to it a new input of
		// this test, which go test's cache then does not answer for.
		if _, err := os.ReadDir(p.Dir); err != nil {
			t.Fatal(err)
		}
		var files []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Selections: map[*ast.SelectorExpr]*types.Selection{}, Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}}
		if _, err := (&types.Config{Importer: imp}).Check(p.ImportPath, fset, files, info); err != nil {
			t.Fatalf("type-check %s: %v", p.ImportPath, err)
		}
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				var targets []ast.Expr
				switch n := n.(type) {
				case *ast.AssignStmt:
					if n.Tok != token.DEFINE {
						targets = n.Lhs
					}
				case *ast.IncDecStmt:
					targets = []ast.Expr{n.X}
				case *ast.UnaryExpr:
					if n.Op == token.AND {
						targets = []ast.Expr{n.X}
					}
				case *ast.RangeStmt:
					if n.Tok == token.ASSIGN {
						targets = []ast.Expr{n.Key, n.Value}
					}
				}
				for _, e := range targets {
					if e != nil && writesPlan(info, e) {
						found = append(found, fset.Position(e.Pos()).String())
					}
				}
				return true
			})
		}
	}
	return found
}

// writesPlan reports whether writing e writes into a plan: e selects a
// field of one of planTypes, unless the way to it starts at a local
// variable of a plan's type (a copy) and passes through no pointer and no
// slice.
func writesPlan(info *types.Info, e ast.Expr) bool {
	touches, shared := false, false
	for {
		switch x := e.(type) {
		case *ast.ParenExpr:
			e = x.X
			continue
		case *ast.StarExpr:
			shared = true
			e = x.X
			continue
		case *ast.IndexExpr:
			if _, ok := info.Types[x.X].Type.Underlying().(*types.Array); !ok {
				shared = true // a slice or map: its elements are shared
			}
			e = x.X
			continue
		case *ast.SelectorExpr:
			sel, ok := info.Selections[x]
			if !ok || sel.Kind() != types.FieldVal {
				return touches && shared // a package's variable, or a method value
			}
			recv := sel.Recv()
			if _, ok := recv.(*types.Pointer); ok || sel.Indirect() {
				shared = true
			}
			if isPlanType(recv) {
				touches = true
			}
			e = x.X
			continue
		case *ast.Ident:
			return touches && (shared || !isLocal(info, x))
		}
		return touches
	}
}

// isPlanType reports whether t (or what it points to) is one of planTypes.
func isPlanType(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "github.com/fence-sandbox/fence/sandbox" && planTypes[n.Obj().Name()]
}

// isLocal reports whether id is a variable declared in a function.
func isLocal(info *types.Info, id *ast.Ident) bool {
	v, ok := info.Uses[id].(*types.Var)
	return ok && v.Parent() != nil && v.Parent() != v.Pkg().Scope()
}

// goEnv is the go command's value of the environment variable name.
func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return path != "" && err == nil
}
