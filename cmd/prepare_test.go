package cmd

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/fence-sandbox/fence/policy"
)

// TestMkdirBelow creates directories below a home where an earlier run
// planted links and files: fence must never create anything through a
// link, and must name the part that stopped it.
func TestMkdirBelow(t *testing.T) {
	tests := []struct {
		name    string
		plant   func(home, elsewhere string) error
		rel     string
		created []string // relative to home
		err     string   // substring; "" for none
	}{
		{"fresh", nil, "go/pkg/sumdb", []string{"go", "go/pkg", "go/pkg/sumdb"}, ""},
		{"part exists", func(h, _ string) error { return os.MkdirAll(h+"/go/pkg/mod", 0o755) }, "go/pkg/sumdb", []string{"go/pkg/sumdb"}, ""},
		{"all there", func(h, _ string) error { return os.MkdirAll(h+"/.cache", 0o755) }, ".cache", nil, ""},
		{"link in the middle", func(h, e string) error { return os.Symlink(e, h+"/go") }, "go/pkg/sumdb", nil, `/go" is a symlink`},
		{"link at the end", func(h, e string) error { return os.Symlink(e, h+"/.cache") }, ".cache", nil, `/.cache" is a symlink`},
		{"dangling link at the end", func(h, e string) error { return os.Symlink(e+"/missing", h+"/.npm") }, ".npm", nil, `/.npm" is a symlink`},
		{"link to a link", func(h, e string) error {
			if err := os.Symlink(e, h+"/hop"); err != nil {
				return err
			}
			return os.Symlink("hop", h+"/.yarn")
		}, ".yarn/cache", nil, `/.yarn" is a symlink`},
		{"a file on the way", func(h, _ string) error { return os.WriteFile(h+"/go", nil, 0o644) }, "go/pkg/mod", nil, `/go" is not a directory`},
		{"dot-dot", nil, "../escaped", nil, "not a plain relative path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home, elsewhere := t.TempDir(), t.TempDir()
			if tt.plant != nil {
				must(t, tt.plant(home, elsewhere))
			}
			created, err := mkdirBelow(home, tt.rel, os.Geteuid())
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("mkdirBelow(%q) = %v, want error containing %q", tt.rel, err, tt.err)
			}
			var want []string
			for _, c := range tt.created {
				want = append(want, filepath.Join(home, c))
			}
			if !slices.Equal(created, want) {
				t.Errorf("mkdirBelow(%q) created %q, want %q", tt.rel, created, want)
			}
			for _, c := range created {
				if fi, err := os.Lstat(c); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
					t.Errorf("%s: %v, mode %v; want a directory of mode 0700", c, err, fi.Mode())
				}
			}
			if entries, _ := os.ReadDir(elsewhere); len(entries) > 0 {
				t.Errorf("mkdirBelow(%q) created %s through a link", tt.rel, entries[0].Name())
			}
		})
	}
}

// TestMkdirBelowOthersHome refuses a base another user owns: root with
// someone else's $HOME would leave directories that user cannot write.
func TestMkdirBelowOthersHome(t *testing.T) {
	home := t.TempDir()
	if _, err := mkdirBelow(home, ".cache", os.Geteuid()+1); err == nil || !strings.Contains(err.Error(), "not owned by") {
		t.Fatalf("mkdirBelow in another's home = %v, want refused", err)
	}
	if _, err := os.Lstat(home + "/.cache"); err == nil {
		t.Error("it created the directory anyway")
	}
}

// TestMissingHomeDirs judges what fence would create for a policy, as
// `fence check` reports it, without creating anything.
func TestMissingHomeDirs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("fence creates directories only on Linux")
	}
	home := t.TempDir()
	must(t, os.Symlink(t.TempDir(), home+"/linked"))
	must(t, os.MkdirAll(home+"/.cache", 0o755))
	pol := &policy.Policy{Home: home, Dir: t.TempDir(), ReadMode: policy.ReadOpen}
	for _, p := range []string{"~/.cache", "~/.npm", "~/go/pkg/sumdb", "~/linked/x", "~/denied/cache", "/var/cache/fence-test", "~/Library/Caches"} {
		pol.Write = append(pol.Write, policy.Rule{Pattern: policy.Expand(p, pol.Dir, home), Key: "filesystem.allowWrite", Text: p, Origin: "filesystem.allowWrite " + p})
	}
	pol.DenyWrite = []policy.Rule{{Pattern: home + "/denied", Key: "filesystem.denyWrite", Text: "~/denied"}}
	got := map[string]string{}
	for _, d := range missingHomeDirs(pol) {
		got[strings.TrimPrefix(d.path, home+"/")] = d.skip
	}
	want := map[string]string{".npm": "", "go/pkg/sumdb": "", "linked/x": "is a symlink", "denied/cache": "filesystem.denyWrite", "Library/Caches": "macOS"}
	if len(got) != len(want) {
		t.Errorf("judged %v, want %v", got, want)
	}
	for p, skip := range want {
		g, ok := got[p]
		if !ok || skip == "" && g != "" || !strings.Contains(g, skip) {
			t.Errorf("%s: skip %q, want %q", p, g, skip)
		}
	}
	if entries, _ := os.ReadDir(home); len(entries) != 2 {
		t.Errorf("judging created something: %v", entries)
	}
}
