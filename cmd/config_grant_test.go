package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
			code, stderr := fence(t, "config", "allow", "write", "out")
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
