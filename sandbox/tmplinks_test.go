package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fence-sandbox/fence/policy"
)

// TestTmpLinks plans a home reached through a link below /tmp: the link
// is made again in the private /tmp, the home's rule binds what it leads
// to, and Landlock's rule names the same path; a link of another user's,
// one in a directory others may write, or one in a tree a sandbox could
// have written (the workspace), is refused instead.
func TestTmpLinks(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !under(base, "/tmp") {
		t.Skip("the temporary directory is not below /tmp")
	}
	tests := []struct {
		name    string
		link    string // where the home's link lies, below the test's root
		prepare func(t *testing.T, link string)
		refused string // in the warning; "" when the link is followed
	}{
		{"the caller's link", "home", func(*testing.T, string) {}, ""},
		{"in the workspace, a tree a sandbox could write", "ws/home", func(*testing.T, string) {}, "lies in a temporary directory outside every tree a sandbox could write"},
		{"another user's link", "home", func(t *testing.T, link string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give a link away")
			}
			if err := os.Lchown(link, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, "it belongs to uid 65534, not to you"},
		{"a directory others may write", "home", func(t *testing.T, link string) {
			if err := os.Chmod(filepath.Dir(link), 0o777); err != nil {
				t.Fatal(err)
			}
		}, "a directory on the way, can be written by other users"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(base, string(rune('a'+i)))
			for _, d := range []string{root + "/real/.cache", root + "/ws"} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			link := root + "/" + tt.link
			if err := os.Symlink(root+"/real", link); err != nil {
				t.Fatal(err)
			}
			tt.prepare(t, link)
			pol := policy.Compile(policy.Config{Filesystem: policy.Filesystem{AllowWrite: []string{"~/.cache"}}}, policy.Env{Dir: root + "/ws", Home: link})
			p, err := NewPlan(pol, Options{Argv: []string{"true"}})
			if err != nil {
				t.Fatal(err)
			}
			bound := slices.ContainsFunc(p.Mounts.Binds, func(b Bind) bool { return b.Path == root+"/real/.cache" && b.Write })
			ruled := slices.ContainsFunc(p.Landlock.Rules, func(r LandlockRule) bool { return r.Path == root+"/real/.cache" && r.Access == "write" })
			made := slices.ContainsFunc(p.Mounts.Links, func(l Link) bool { return l.Path == link && l.Target == root+"/real" })
			warned := slices.ContainsFunc(p.Warnings, func(w string) bool { return tt.refused != "" && strings.Contains(w, tt.refused) })
			if followed := tt.refused == ""; bound != followed || ruled != followed || made != followed || warned == followed {
				t.Errorf("bound %v, Landlock rule %v, link made %v, warned %v; want %v, %v, %v, %v\nbinds %v\nlinks %v\nwarnings %q",
					bound, ruled, made, warned, followed, followed, followed, !followed, p.Mounts.Binds, p.Mounts.Links, p.Warnings)
			}
		})
	}
}

// TestFenceBinaryBind plans a run with the fence binary below /tmp:
// nothing else brings it into the private /tmp, so it is bound read-only
// at its own path; a deny rule over it still hides it, and then fence
// does not name it to GIT_SSH_COMMAND.
func TestFenceBinaryBind(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !under(dir, "/tmp") {
		t.Skip("the temporary directory is not below /tmp")
	}
	self := filepath.Join(dir, "bin", "fence")
	if err := os.MkdirAll(filepath.Dir(self), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(self, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, deny := range []string{"", filepath.Dir(self)} {
		fs := policy.Filesystem{}
		if deny != "" {
			fs.DenyRead = []string{deny}
		}
		pol := policy.Compile(policy.Config{Filesystem: fs}, policy.Env{Dir: "/", Home: "/nonexistent"})
		p, err := NewPlan(pol, Options{Argv: []string{"true"}, FenceBinary: self})
		if err != nil {
			t.Fatal(err)
		}
		bound := slices.Contains(p.Mounts.Binds, Bind{Path: self, Kind: KindFenceBinary, Why: "the fence binary, which GIT_SSH_COMMAND runs as ssh's ProxyCommand"})
		if !bound {
			t.Errorf("deny %q: the binary is not bound: %v", deny, p.Mounts.Binds)
		}
		if visible := p.FenceBinaryVisible(self); visible != (deny == "") {
			t.Errorf("deny %q: FenceBinaryVisible = %v", deny, visible)
		}
	}
}
