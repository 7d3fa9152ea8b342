package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// grantProject makes a repository holding a commented fence.jsonc and
// works in it.
func grantProject(t *testing.T) string {
	t.Helper()
	dir := workIn(t, "home")
	must(t, os.MkdirAll(dir+"/.git", 0o755))
	must(t, os.WriteFile(dir+"/fence.jsonc", []byte("// keep me\n{\"extends\": \"code\"}\n"), 0o640))
	return dir
}

// workIn makes a temporary directory the working directory, with HOME
// the directory itself (home "") or a directory in it, and no
// XDG_CONFIG_HOME, so that no config of the machine's is found.
func workIn(t *testing.T, home string) string {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("HOME", filepath.Join(dir, home))
	t.Setenv("XDG_CONFIG_HOME", "")
	return dir
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func fence(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Main(args, &stdout, &stderr)
	return code, stderr.String()
}

// TestGrantBackups grants five times: the three newest previous versions
// are kept, each exactly as the file was before a grant, and the mode
// of the file is kept.
func TestGrantBackups(t *testing.T) {
	dir := grantProject(t)
	var versions [][]byte
	for _, d := range []string{"a.example", "b.example", "c.example", "d.example", "e.example"} {
		before, err := os.ReadFile(dir + "/fence.jsonc")
		must(t, err)
		versions = append(versions, before)
		if code, stderr := fence(t, "config", "allow", "domain", d); code != 0 {
			t.Fatalf("allow %s: exit %d\n%s", d, code, stderr)
		}
	}
	bs, err := backups(dir + "/fence.jsonc")
	must(t, err)
	if len(bs) != keepBackups {
		t.Fatalf("%d backups, want %d: %q", len(bs), keepBackups, bs)
	}
	for i, b := range bs {
		got, err := os.ReadFile(b)
		must(t, err)
		if want := versions[len(versions)-keepBackups+i]; !bytes.Equal(got, want) {
			t.Errorf("%s holds\n%s\nwant\n%s", filepath.Base(b), got, want)
		}
	}
	final, err := os.ReadFile(dir + "/fence.jsonc")
	must(t, err)
	if !strings.HasPrefix(string(final), "// keep me\n") || !strings.Contains(string(final), `"e.example"`) {
		t.Errorf("final file:\n%s", final)
	}
	fi, err := os.Stat(dir + "/fence.jsonc")
	must(t, err)
	if fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", fi.Mode().Perm())
	}
	ents, err := os.ReadDir(dir)
	must(t, err)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

// TestGrantConcurrentChange changes the file between fence's read and its
// write: fence must write nothing, keep no backup, and say to retry.
func TestGrantConcurrentChange(t *testing.T) {
	for _, tt := range []struct{ name, initial string }{
		{"changed", "// keep me\n{\"extends\": \"code\"}\n"},
		{"created", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := grantProject(t)
			path := dir + "/fence.jsonc"
			if tt.initial == "" {
				must(t, os.Remove(path))
			}
			theirs := []byte("{\"extends\": \"ci\"} // edited meanwhile\n")
			grantHook = func(string) { must(t, os.WriteFile(path, theirs, 0o644)) }
			t.Cleanup(func() { grantHook = nil })
			code, stderr := fence(t, "config", "allow", "domain", "concurrent.example")
			if code != 125 || !strings.Contains(stderr, "changed on disk while fence was editing it; nothing was written: run the command again") {
				t.Errorf("exit %d, stderr:\n%s", code, stderr)
			}
			got, err := os.ReadFile(path)
			must(t, err)
			if !bytes.Equal(got, theirs) {
				t.Errorf("file holds\n%s\nwant the other writer's version", got)
			}
			if bs, _ := backups(path); len(bs) != 0 {
				t.Errorf("backups left: %q", bs)
			}
		})
	}
}

// TestGrantAlreadyInChain grants what the chain already does: fence says
// which rule does it and leaves the file alone, byte for byte and mtime,
// with no backup; a grant the chain does not hold yet is written.
func TestGrantAlreadyInChain(t *testing.T) {
	const project = "// keep me\n{\"extends\": \"code\", \"filesystem\": {\"denyRead\": [\"secrets\"]},\n" +
		" \"network\": {\"allowedDomains\": [\"*.example.com\"], \"deniedDomains\": [\"bad.example.com\"]}}\n"
	tests := []struct {
		name    string
		args    []string
		held    []string // what fence says holds already, after "fence: "
		changes bool
	}{
		{"write under the template's allowWrite", []string{"allow", "write", "build"},
			[]string{`write $DIR/build is already allowed here by filesystem.allowWrite "." (builtin template: workspace-write:`}, false},
		{"read while reads are open", []string{"allow", "read", "/etc/hosts"},
			[]string{"read /etc/hosts is already allowed here by the policy, which leaves reads open"}, false},
		{"read and write under denyRead", []string{"deny", "read", "secrets/x"},
			[]string{`read $DIR/secrets/x is already denied here by filesystem.denyRead "secrets" (project config: $DIR/fence.jsonc:2:49)`}, false},
		{"write under denyRead", []string{"deny", "write", "secrets"},
			[]string{`write $DIR/secrets is already denied here by filesystem.denyRead "secrets"`}, false},
		{"domain under a wildcard", []string{"allow", "domain", "api.example.com", "--domain", "API.Example.com."},
			[]string{`domain api.example.com is already allowed by network.allowedDomains "*.example.com" (project config: $DIR/fence.jsonc:3:`, `domain api.example.com is already allowed`}, false},
		{"denied domain", []string{"deny", "domain", "bad.example.com"},
			[]string{`domain bad.example.com is already denied by network.deniedDomains "bad.example.com"`}, false},
		{"one held, one new", []string{"allow", "write", "build", "/srv/shared"},
			[]string{`write $DIR/build is already allowed here`}, true},
		{"write outside every rule", []string{"deny", "write", "/srv/x"}, nil, true},
		{"domain only not allowed", []string{"deny", "domain", "other.example.org"}, nil, true},
		{"domain not yet allowed", []string{"allow", "domain", "other.example.org"}, nil, true},
		{"glob: fence cannot tell", []string{"deny", "read", "secrets/*.key"}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := grantProject(t)
			path := dir + "/fence.jsonc"
			must(t, os.WriteFile(path, []byte(project), 0o640))
			old := time.Unix(1_000_000_000, 0)
			must(t, os.Chtimes(path, old, old))
			code, stderr := fence(t, append([]string{"config"}, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			for _, h := range tt.held {
				if want := "fence: " + strings.ReplaceAll(h, "$DIR", dir); !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			if n := strings.Count(stderr, ": nothing changed\n"); n != len(tt.held) {
				t.Errorf("%d grants said to be held, want %d:\n%s", n, len(tt.held), stderr)
			}
			got, err := os.ReadFile(path)
			must(t, err)
			fi, err := os.Stat(path)
			must(t, err)
			bs, err := backups(path)
			must(t, err)
			unchanged := bytes.Equal(got, []byte(project)) && fi.ModTime().Equal(old) && len(bs) == 0
			if unchanged == tt.changes {
				t.Errorf("changed = %v, want %v (mtime %v, backups %q); file:\n%s\nstderr:\n%s", !unchanged, tt.changes, fi.ModTime(), bs, got, stderr)
			}
		})
	}
}

// TestGrantAlreadyInChainNoFile grants what the project file fence would
// create already holds (it extends code): no file is created.
func TestGrantAlreadyInChainNoFile(t *testing.T) {
	dir := grantProject(t)
	must(t, os.Remove(dir+"/fence.jsonc"))
	code, stderr := fence(t, "config", "allow", "write", "build")
	if code != 0 || !strings.Contains(stderr, "fence: write "+dir+"/build is already allowed here by filesystem.allowWrite \".\"") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the project holds %d entries, want only .git: %v", len(ents), ents)
	}
}
