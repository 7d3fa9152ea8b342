//go:build linux

package linux_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// freshHomePaths are files the tools a template's cache rules are for
// write on their first run, relative to $HOME: go's build cache, module
// cache and checksum database state, and npm's cache and logs.
var freshHomePaths = []string{
	".cache/go-build/00/x-a",
	"go/pkg/mod/cache/download/example.com/m/@v/list",
	"go/pkg/sumdb/sum.golang.org/latest",
	".npm/_cacache/index-v5/x",
	".npm/_logs/debug-0.log",
}

// TestFreshHome runs the code template on a home that has none of its
// cache directories: fence creates them, as the user, mode 0700, says so
// with -d, and `fence check` answers before and after as the sandbox
// does. Paths no rule names, or whose directory fence does not create,
// stay read-only, and check says so.
func TestFreshHome(t *testing.T) {
	others := []string{"go/bin/x", "Library/Caches/x", ".config/go/env"}
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"extends": "code"}`)
			before := checkWrites(t, w, append(freshHomePaths, others...))
			for i, p := range freshHomePaths {
				if !before[i].Allowed || !strings.Contains(before[i].Note, "fence creates it") {
					t.Errorf("before the run, check write %s = %+v, want allowed, with a note that fence creates it", p, before[i])
				}
			}
			if _, err := os.Lstat(w.home + "/.cache"); err == nil {
				t.Fatal("fence check created ~/.cache")
			}
			r := w.fence(t, "", nil, "-d", "-c", writeScript(w.home, append(freshHomePaths, others...)))
			got := strings.Fields(r.stdout)
			if r.code != 0 || len(got) != len(before) {
				t.Fatalf("exit %d, answers %q\n%s", r.code, got, r.stderr)
			}
			for i, d := range before {
				if (got[i] == "1") != d.Allowed {
					t.Errorf("write %s: fence check said allowed=%v (%s), the sandbox %s", d.Requested, d.Allowed, d.Rule, got[i])
				}
			}
			for _, dir := range []string{".cache", ".npm", "go", "go/pkg", "go/pkg/mod", "go/pkg/sumdb"} {
				want := fmt.Sprintf(`fence: debug: prepare: created %s \(mode 0700\) for filesystem\.allowWrite "~/`, regexp.QuoteMeta(filepath.Join(w.home, dir)))
				if !regexp.MustCompile(want).MatchString(r.stderr) {
					t.Errorf("-d does not say fence created ~/%s:\n%s", dir, r.stderr)
				}
				assertOwnDir(t, filepath.Join(w.home, dir), u.uid)
			}
			if _, err := os.Lstat(w.home + "/Library"); err == nil {
				t.Error("fence created ~/Library on Linux")
			}
			after := checkWrites(t, w, freshHomePaths)
			for i, d := range after {
				if !d.Allowed || d.Note != "" {
					t.Errorf("after the run, check write %s = %+v, want allowed with no note", freshHomePaths[i], d)
				}
			}
			r = w.fence(t, "", nil, "-d", "--", "true")
			if strings.Contains(r.stderr, "prepare: created") {
				t.Errorf("a second run created directories again:\n%s", r.stderr)
			}
		})
	}
}

// TestFreshHomeGoBuild builds a module with the go command on a fresh
// home under the code template: its build cache goes to ~/.cache/go-build.
func TestFreshHomeGoBuild(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not found")
	}
	gobin, _ = filepath.EvalSymlinks(gobin)
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"extends": "code"}`)
			must(t, os.WriteFile(w.ws+"/go.mod", []byte("module example.com/fresh\n\ngo 1.21\n"), 0o644))
			must(t, os.WriteFile(w.ws+"/main.go", []byte("package main\n\nfunc main() { println(\"built\") }\n"), 0o644))
			must(t, os.Lchown(w.ws+"/go.mod", u.uid, u.uid))
			must(t, os.Lchown(w.ws+"/main.go", u.uid, u.uid))
			env := []string{"PATH=" + filepath.Dir(gobin) + ":/usr/bin:/bin", "GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=-mod=mod -buildvcs=false"}
			r := w.fence(t, "", env, "-c", `go env GOCACHE GOMODCACHE && go build -o fresh . && ./fresh`)
			check(t, r, 0, fmt.Sprintf(`^%s\n%s\n$`, regexp.QuoteMeta(w.home+"/.cache/go-build"), regexp.QuoteMeta(w.home+"/go/pkg/mod")), `built`)
			if entries, err := os.ReadDir(w.home + "/.cache/go-build"); err != nil || len(entries) == 0 {
				t.Errorf("the build cache is empty on the host: %v", err)
			}
		})
	}
}

// TestFreshHomeGoGet runs `go get` of a module the home has never seen,
// under the code template, on a fresh home: fence creates the module
// cache, and the go command fetches from a module proxy on the host's
// loopback (a port allowLocalOutbound and allowLocalOutboundPorts
// relay) into it, checking the module against a checksum database the
// proxy serves too, whose state the go command keeps in ~/go/pkg/sumdb.
func TestFreshHomeGoGet(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not found")
	}
	gobin, _ = filepath.EvalSymlinks(gobin)
	handler, vkey := moduleProxy(t, "example.com/dep", "v1.0.0")
	proxy := httptest.NewServer(handler)
	defer proxy.Close()
	port := proxy.Listener.Addr().(*net.TCPAddr).Port
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, fmt.Sprintf(`{"extends": "code", "network": {"allowLocalOutbound": true, "allowLocalOutboundPorts": [%d]}}`, port))
			for name, content := range map[string]string{
				"go.mod":  "module example.com/fresh\n\ngo 1.21\n",
				"main.go": "package main\n\nimport \"example.com/dep\"\n\nfunc main() { println(dep.Hello) }\n",
			} {
				must(t, os.WriteFile(filepath.Join(w.ws, name), []byte(content), 0o644))
				must(t, os.Lchown(filepath.Join(w.ws, name), u.uid, u.uid))
			}
			env := []string{"PATH=" + filepath.Dir(gobin) + ":/usr/bin:/bin", "GOTOOLCHAIN=local", "GOSUMDB=" + vkey, "GOFLAGS=-buildvcs=false",
				fmt.Sprintf("GOPROXY=http://127.0.0.1:%d", port)}
			r := w.fence(t, "", env, "-c", `go get example.com/dep@v1.0.0 && go build -o fresh . && ./fresh`)
			check(t, r, 0, "", `(?s)go: added example.com/dep v1.0.0.*hello from dep`)
			if _, err := os.Stat(w.home + "/go/pkg/mod/example.com/dep@v1.0.0/dep.go"); err != nil {
				t.Errorf("the module is not in the host's module cache: %v", err)
			}
			if _, err := os.Stat(w.home + "/go/pkg/sumdb/" + sumdbName + "/latest"); err != nil {
				t.Errorf("the checksum database's latest tree is not in ~/go/pkg/sumdb: %v", err)
			}
		})
	}
}

// TestFreshHomeNpmInstall installs a package from a tarball with npm on a
// fresh home under the code template: npm's cache and logs go to ~/.npm,
// which fence created.
func TestFreshHomeNpmInstall(t *testing.T) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm not found")
	}
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"extends": "code"}`)
			for name, content := range map[string]string{
				"package.json":     `{"name": "fresh", "version": "1.0.0"}`,
				"dep/package.json": `{"name": "dep", "version": "1.0.0"}`,
				"dep/index.js":     `module.exports = "hello from dep"`,
			} {
				p := filepath.Join(w.ws, name)
				must(t, os.MkdirAll(filepath.Dir(p), 0o755))
				must(t, os.WriteFile(p, []byte(content), 0o644))
				must(t, os.Lchown(filepath.Dir(p), u.uid, u.uid))
				must(t, os.Lchown(p, u.uid, u.uid))
			}
			env := []string{"PATH=" + filepath.Dir(npm) + ":/usr/bin:/bin"}
			r := w.fence(t, "", env, "-c", `npm pack ./dep --pack-destination . >/dev/null && npm install ./dep-1.0.0.tgz --offline --no-audit --no-fund && node -e 'console.log(require("dep"))'`)
			check(t, r, 0, `(?s)added 1 package.*hello from dep\n$`, "")
			if entries, err := os.ReadDir(w.home + "/.npm/_cacache"); err != nil || len(entries) == 0 {
				t.Errorf("npm's cache is empty on the host: %v", err)
			}
		})
	}
}

// sumdbName is the checksum database moduleProxy serves.
const sumdbName = "sum.fence.test"

// moduleProxy serves one module version by the GOPROXY protocol, and a
// checksum database of one record, the module's, signed by a key made
// for the test: it returns the handler and the database's verifier key,
// for GOSUMDB.
func moduleProxy(t *testing.T, mod, version string) (http.Handler, string) {
	t.Helper()
	gomod := "module " + mod + "\n\ngo 1.21\n"
	sources := map[string]string{"go.mod": gomod, "dep.go": "package dep\n\nconst Hello = \"hello from dep\"\n"}
	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	zipFiles := map[string]string{}
	for name, content := range sources {
		name = mod + "@" + version + "/" + name
		f, err := zw.Create(name)
		must(t, err)
		f.Write([]byte(content))
		zipFiles[name] = content
	}
	must(t, zw.Close())
	record := fmt.Sprintf("%s %s %s\n%s %s/go.mod %s\n", mod, version, hash1(zipFiles), mod, version, hash1(map[string]string{"go.mod": gomod}))
	leaf := sha256.Sum256(append([]byte{0}, record...)) // a tree of one record: its hash is the tree's
	pub, priv, err := ed25519.GenerateKey(nil)
	must(t, err)
	key := append([]byte{1}, pub...) // 1: Ed25519
	id := sha256.Sum256(append([]byte(sumdbName+"\n"), key...))
	tree := fmt.Sprintf("go.sum database tree\n1\n%s\n", base64.StdEncoding.EncodeToString(leaf[:]))
	sig := append(id[:4:4], ed25519.Sign(priv, []byte(tree))...)
	note := tree + "\n— " + sumdbName + " " + base64.StdEncoding.EncodeToString(sig) + "\n"
	db := "/sumdb/" + sumdbName
	files := map[string]string{
		"/" + mod + "/@v/list":                 version + "\n",
		"/" + mod + "/@v/" + version + ".info": fmt.Sprintf(`{"Version":%q,"Time":"2026-01-01T00:00:00Z"}`, version),
		"/" + mod + "/@v/" + version + ".mod":  gomod,
		"/" + mod + "/@v/" + version + ".zip":  zipped.String(),
		db + "/supported":                      "",
		db + "/lookup/" + mod + "@" + version:  "0\n" + record + "\n" + note,
		db + "/tile/8/0/000.p/1":               string(leaf[:]),
	}
	h := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(rw, r)
			return
		}
		rw.Write([]byte(body))
	})
	return h, fmt.Sprintf("%s+%x+%s", sumdbName, id[:4], base64.StdEncoding.EncodeToString(key))
}

// hash1 is the go.sum hash ("h1:") of files, by name.
func hash1(files map[string]string) string {
	var names []string
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	summary := sha256.New()
	for _, name := range names {
		fmt.Fprintf(summary, "%x  %s\n", sha256.Sum256([]byte(files[name])), name)
	}
	return "h1:" + base64.StdEncoding.EncodeToString(summary.Sum(nil))
}

// TestFreshHomePlantedLinks plants what an earlier run could have left
// where the home's cache directories go: fence creates nothing through
// a link, says why, and check agrees with the sandbox.
func TestFreshHomePlantedLinks(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"extends": "code"}`)
			target := w.outside + "/planted"
			must(t, os.Mkdir(target, 0o755))
			must(t, os.Lchown(target, u.uid, u.uid))
			must(t, os.Symlink(target, w.home+"/go"))
			must(t, os.Symlink(target+"/npm-missing", w.home+"/.npm"))
			must(t, os.Lchown(w.home+"/go", u.uid, u.uid))
			must(t, os.Lchown(w.home+"/.npm", u.uid, u.uid))
			paths := []string{"go/pkg/sumdb/sum.golang.org/latest", "go/pkg/mod/x", ".npm/_logs/x", ".cache/go-build/x"}
			before := checkWrites(t, w, paths)
			for i, want := range []bool{false, false, false, true} {
				if before[i].Allowed != want {
					t.Errorf("check write %s = %+v, want allowed=%v", paths[i], before[i], want)
				}
			}
			r := w.fence(t, "", nil, "-c", writeScript(w.home, paths))
			got := strings.Fields(r.stdout)
			if len(got) != len(before) {
				t.Fatalf("exit %d, answers %q\n%s", r.code, got, r.stderr)
			}
			for i, d := range before {
				if (got[i] == "1") != d.Allowed {
					t.Errorf("write %s: fence check said allowed=%v, the sandbox %s", d.Requested, d.Allowed, got[i])
				}
			}
			for _, want := range []string{`warning: not creating \S+/go/pkg/sumdb for filesystem.allowWrite "~/go/pkg/sumdb" \(builtin template: ci\): "\S+/go" is a symlink`, `warning: not creating \S+/go/pkg/mod for .*: "\S+/go" is a symlink`} {
				if !regexp.MustCompile(want).MatchString(r.stderr) {
					t.Errorf("stderr does not match %q:\n%s", want, r.stderr)
				}
			}
			if entries, _ := os.ReadDir(target); len(entries) > 0 {
				t.Errorf("fence created %s through the planted link", entries[0].Name())
			}
		})
	}
}

// TestFreshHomeLandlockOnly: the directories are made before the
// engine is chosen, so the Landlock-only engine gets them too.
func TestFreshHomeLandlockOnly(t *testing.T) {
	for _, u := range landlockOnlyUsers(t) {
		t.Run(u.name, func(t *testing.T) {
			w := landlockWorld(t, u, `{"extends": "code"}`)
			r := w.landlockOnly(t, u, "-d", "-c", writeScript(w.home, freshHomePaths))
			if r.code != 0 || strings.Count(r.stdout, "1") != len(freshHomePaths) {
				t.Fatalf("exit %d, answers %q\n%s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, "prepare: created "+w.home+"/go/pkg/sumdb") {
				t.Errorf("-d does not say fence created ~/go/pkg/sumdb:\n%s", r.stderr)
			}
		})
	}
}

// writeScript writes each of paths below home, creating its directory,
// and prints 1 or 0 for each.
func writeScript(home string, paths []string) string {
	var b strings.Builder
	for _, p := range paths {
		p = filepath.Join(home, p)
		fmt.Fprintf(&b, "{ mkdir -p %q && echo x > %q; } 2>/dev/null && echo 1 || echo 0\n", filepath.Dir(p), p)
	}
	return b.String()
}

// checkWrites asks fence check, as w's user, about writing each of
// paths below w's home.
func checkWrites(t *testing.T, w *world, paths []string) []checkDecision {
	t.Helper()
	var q []string
	for _, p := range paths {
		q = append(q, fmt.Sprintf(`{"access":"write","path":%q}`, filepath.Join(w.home, p)))
	}
	cmd := w.command(context.Background(), nil, "check", "--stdin")
	cmd.Stdin = strings.NewReader(strings.Join(q, "\n"))
	r := runResult(t, cmd)
	var ds []checkDecision
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	for dec.More() {
		var d checkDecision
		must(t, dec.Decode(&d))
		ds = append(ds, d)
	}
	if len(ds) != len(paths) {
		t.Fatalf("fence check answered %d of %d queries (exit %d):\n%s", len(ds), len(paths), r.code, r.stderr)
	}
	return ds
}

// checkDecision is what these tests read of a decision of fence check.
type checkDecision struct {
	Allowed          bool
	Requested, Rule  string
	Note, Suggestion string
}

// assertOwnDir fails unless p is a directory uid owns, mode 0700.
func assertOwnDir(t *testing.T, p string, uid int) {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Errorf("%s: %v", p, err)
		return
	}
	if st := fi.Sys().(*syscall.Stat_t); !fi.IsDir() || fi.Mode().Perm() != 0o700 || int(st.Uid) != uid {
		t.Errorf("%s: mode %v, uid %d; want a directory of mode 0700 owned by %d", p, fi.Mode(), st.Uid, uid)
	}
}
