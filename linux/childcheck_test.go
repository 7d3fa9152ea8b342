//go:build linux

package linux

import (
	"bufio"
	"bytes"
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
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The sandbox child runs between runtime_BeforeFork and the command's
// exec with no Go runtime of its own (see child_linux.go). What it runs
// is checked three ways:
//
//   - childCode (below) walks the calls from the child's entry, with the
//     types the compiler sees: every function reached must be
//     //go:nosplit, and may call only such functions of this package,
//     the raw system call entry points, conversions and a few builtins
//     that compile to no call (len, cap, min, max, and unsafe's Sizeof,
//     Offsetof, Alignof, Add, SliceData, StringData); no closures, defer
//     or go statements;
//   - escapes (below) builds the package with the compiler's escape
//     analysis report (-gcflags=-m) and fails on anything of those
//     functions moved to or escaping to the heap;
//   - the linker checks that every chain of nosplit calls fits in the
//     stack a goroutine keeps free below its guard, and fails the build
//     with "nosplit stack over limit" otherwise.
//
// TestChildCheckCatches runs the first two on a package made to break
// both rules (testdata/childcheck), so that they are known to fail.

// childRoots are where the child's code starts: forkChild itself is not
// nosplit (its stack check runs before the fork) but is held to the rest.
var childRoots = []string{"forkChild"}

// allowedCalls are the functions outside this package the child may call.
var allowedCalls = map[string]bool{
	"syscall.RawSyscall6": true,
	"syscall.RawSyscall":  true,
}

// allowedBuiltins compile to no call.
var allowedBuiltins = map[string]bool{
	"len": true, "cap": true, "min": true, "max": true,
	"Sizeof": true, "Offsetof": true, "Alignof": true, "Add": true, "SliceData": true, "StringData": true,
}

func TestChildNosplit(t *testing.T) {
	funcs, problems := childCode(t, ".", childRoots)
	for _, p := range problems {
		t.Error(p)
	}
	for _, want := range []string{"childMain", "runSteps", "(*pid1Prog).run"} {
		if _, ok := funcs[want]; !ok {
			t.Errorf("%s is not reached from %v: the check does not see the child", want, childRoots)
		}
	}
}

func TestChildNoAllocation(t *testing.T) {
	funcs, _ := childCode(t, ".", childRoots)
	for _, p := range escapes(t, ".", "github.com/fence-sandbox/fence/linux", funcs) {
		t.Error(p)
	}
}

// TestChildCheckCatches: a package whose child code calls a function
// that is not nosplit and allocates fails both checks.
func TestChildCheckCatches(t *testing.T) {
	dir := filepath.Join("testdata", "childcheck")
	funcs, problems := childCode(t, dir, []string{"entry"})
	if !containsMatch(problems, `notNosplit is not //go:nosplit`) {
		t.Errorf("the nosplit check missed a call of a splittable function: %q", problems)
	}
	if !containsMatch(problems, `calls fmt\.Sprint`) {
		t.Errorf("the nosplit check missed a call out of the package: %q", problems)
	}
	if !containsMatch(problems, `func literal`) {
		t.Errorf("the nosplit check missed a closure: %q", problems)
	}
	if got := escapes(t, dir, "github.com/fence-sandbox/fence/linux/testdata/childcheck", funcs); !containsMatch(got, `allocates.*escapes to heap`) {
		t.Errorf("the escape check missed an allocation: %q", got)
	}
}

func containsMatch(lines []string, re string) bool {
	for _, l := range lines {
		if regexp.MustCompile(re).MatchString(l) {
			return true
		}
	}
	return false
}

// childFunc is a function the child runs: where it is in its file.
type childFunc struct {
	file       string
	start, end int // lines
}

// childCode type-checks the package in dir and walks the calls from
// roots; it returns the functions reached and what breaks the rules.
func childCode(t *testing.T, dir string, roots []string) (map[string]childFunc, []string) {
	t.Helper()
	fset := token.NewFileSet()
	files := parseDir(t, fset, dir)
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Types: map[ast.Expr]types.TypeAndValue{}, Selections: map[*ast.SelectorExpr]*types.Selection{}, Defs: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: exportImporter(t, fset, dir)}
	pkg, err := conf.Check("child", fset, files, info)
	if err != nil {
		t.Fatalf("type-check %s: %v", dir, err)
	}
	decls := map[*types.Func]*ast.FuncDecl{}
	for _, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				if obj, ok := info.Defs[fd.Name].(*types.Func); ok {
					decls[obj] = fd
				}
			}
		}
	}
	reached := map[string]childFunc{}
	var problems []string
	var queue []*types.Func
	for _, r := range roots {
		obj, ok := pkg.Scope().Lookup(r).(*types.Func)
		if !ok {
			t.Fatalf("no function %s in %s", r, dir)
		}
		queue = append(queue, obj)
	}
	seen := map[*types.Func]bool{}
	for len(queue) > 0 {
		fn := queue[0]
		queue = queue[1:]
		if seen[fn] {
			continue
		}
		seen[fn] = true
		fd := decls[fn]
		name := funcName(fn)
		if fd == nil || fd.Body == nil {
			if !isLinknamed(fn, decls, files) && !isNosplitAsm(dir, fn.Name()) {
				problems = append(problems, fmt.Sprintf("%s has no body here", name))
			}
			continue
		}
		pos, end := fset.Position(fd.Pos()), fset.Position(fd.End())
		reached[name] = childFunc{file: filepath.Base(pos.Filename), start: pos.Line, end: end.Line}
		if !slicesContains(roots, fn.Name()) && !hasDirective(fd, "//go:nosplit") {
			problems = append(problems, fmt.Sprintf("%s: %s is not //go:nosplit", pos, name))
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				problems = append(problems, fmt.Sprintf("%s: a func literal in %s", fset.Position(n.Pos()), name))
				return false
			case *ast.DeferStmt, *ast.GoStmt:
				problems = append(problems, fmt.Sprintf("%s: defer or go in %s", fset.Position(n.Pos()), name))
			case *ast.CallExpr:
				callee, problem := calleeOf(n, info)
				switch {
				case problem != "":
					problems = append(problems, fmt.Sprintf("%s: %s %s", fset.Position(n.Pos()), name, problem))
				case callee != nil && callee.Pkg() == pkg:
					if !hasDirectiveObj(callee, decls, "//go:nosplit") && decls[callee] != nil && decls[callee].Body != nil {
						problems = append(problems, fmt.Sprintf("%s: %s calls %s, which is not //go:nosplit", fset.Position(n.Pos()), name, funcName(callee)))
					}
					queue = append(queue, callee)
				case callee != nil && !allowedCalls[callee.Pkg().Path()+"."+callee.Name()]:
					problems = append(problems, fmt.Sprintf("%s: %s calls %s.%s", fset.Position(n.Pos()), name, callee.Pkg().Path(), callee.Name()))
				}
			}
			return true
		})
	}
	sort.Strings(problems)
	return reached, problems
}

// calleeOf is the function a call calls, nil for a conversion or an
// allowed builtin, or what is wrong with the call.
func calleeOf(call *ast.CallExpr, info *types.Info) (*types.Func, string) {
	if tv, ok := info.Types[call.Fun]; ok && tv.IsType() {
		return nil, "" // a conversion
	}
	fun := ast.Unparen(call.Fun)
	var id *ast.Ident
	switch f := fun.(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		if sel, ok := info.Selections[f]; ok && sel.Kind() == types.MethodVal {
			if fn, ok := sel.Obj().(*types.Func); ok {
				if _, isIface := sel.Recv().Underlying().(*types.Interface); isIface {
					return nil, "calls an interface method " + f.Sel.Name
				}
				return fn, ""
			}
		}
		id = f.Sel
	default:
		return nil, "calls a function value"
	}
	switch obj := info.Uses[id].(type) {
	case *types.Builtin:
		if allowedBuiltins[obj.Name()] {
			return nil, ""
		}
		return nil, "calls the builtin " + obj.Name()
	case *types.Func:
		return obj, ""
	}
	return nil, "calls a function value " + id.Name
}

func funcName(fn *types.Func) string {
	sig := fn.Type().(*types.Signature)
	if r := sig.Recv(); r != nil {
		t := r.Type()
		star := ""
		if p, ok := t.(*types.Pointer); ok {
			t, star = p.Elem(), "*"
		}
		return fmt.Sprintf("(%s%s).%s", star, t.(*types.Named).Obj().Name(), fn.Name())
	}
	return fn.Name()
}

func hasDirective(fd *ast.FuncDecl, d string) bool {
	if fd.Doc == nil {
		return false
	}
	for _, c := range fd.Doc.List {
		if strings.TrimSpace(c.Text) == d {
			return true
		}
	}
	return false
}

func hasDirectiveObj(fn *types.Func, decls map[*types.Func]*ast.FuncDecl, d string) bool {
	fd := decls[fn]
	return fd != nil && hasDirective(fd, d)
}

// isLinknamed reports whether fn is declared without a body for a
// //go:linkname to the runtime's side of a fork.
func isLinknamed(fn *types.Func, decls map[*types.Func]*ast.FuncDecl, files []*ast.File) bool {
	want := map[string]bool{"syscall.runtime_BeforeFork": true, "syscall.runtime_AfterFork": true, "syscall.runtime_AfterForkInChild": true}
	for _, f := range files {
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if fields := strings.Fields(c.Text); len(fields) == 3 && fields[0] == "//go:linkname" && fields[1] == fn.Name() && want[fields[2]] {
					return decls[fn] != nil && decls[fn].Body == nil
				}
			}
		}
	}
	return false
}

// isNosplitAsm reports whether fn is written in an assembly file of
// dir for this architecture, as a NOSPLIT function.
func isNosplitAsm(dir, fn string) bool {
	files, _ := filepath.Glob(filepath.Join(dir, "*_"+runtime.GOARCH+".s"))
	text := regexp.MustCompile(`(?m)^TEXT\s+·` + regexp.QuoteMeta(fn) + `\(SB\),\s*NOSPLIT`)
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && text.Match(b) {
			return true
		}
	}
	return false
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// parseDir parses the non-test Go files of dir that build on Linux and
// this machine's architecture.
func parseDir(t *testing.T, fset *token.FileSet, dir string) []*ast.File {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{join .GoFiles "\n"}}`, "./"+dir).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", dir, err)
	}
	var files []*ast.File
	for _, name := range strings.Fields(string(out)) {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// exportImporter imports the dependencies of the package in dir from the
// export data the go command builds for them.
func exportImporter(t *testing.T, fset *token.FileSet, dir string) types.Importer {
	t.Helper()
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}} {{.Export}}", "./"+dir).Output()
	if err != nil {
		t.Fatalf("go list -export %s: %v", dir, err)
	}
	exports := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), " "); ok && file != "" {
			exports[path] = file
		}
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
}

// escapes builds the package pkg in dir with the compiler's escape
// analysis report and returns what of funcs moves to or escapes to the
// heap.
func escapes(t *testing.T, dir, pkg string, funcs map[string]childFunc) []string {
	t.Helper()
	cmd := exec.Command("go", "build", "-gcflags="+pkg+"=-m", "-o", os.DevNull, "./"+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-m %s: %v\n%s", dir, err, out)
	}
	if !bytes.Contains(out, []byte("does not escape")) && !bytes.Contains(out, []byte("escapes to heap")) && !bytes.Contains(out, []byte("inlin")) {
		t.Fatalf("go build -gcflags=-m %s printed no escape analysis:\n%s", dir, out)
	}
	line := regexp.MustCompile(`^(?:\./)?(?:[^:]*/)?([^/:]+\.go):(\d+):\d+: (.*)$`)
	var problems []string
	for _, l := range strings.Split(string(out), "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil || !(strings.Contains(m[3], "escapes to heap") || strings.Contains(m[3], "moved to heap")) {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		for name, f := range funcs {
			if f.file == m[1] && n >= f.start && n <= f.end {
				problems = append(problems, fmt.Sprintf("%s:%d: %s allocates: %s", m[1], n, name, m[3]))
			}
		}
	}
	sort.Strings(problems)
	return problems
}
