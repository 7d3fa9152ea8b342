package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/fence-sandbox/fence/policy"
)

func TestGuardedResolve(t *testing.T) {
	root := mktree(t, "ws/src/a.go", "etc/passwd", "data/cache/x", "home/", "ws/sub/")
	links := map[string]string{
		"ws/out":        "../etc",           // planted: out of the writable tree
		"ws/abs":        root + "/etc",      // the same, absolute
		"ws/inside":     "src",              // stays inside: fine
		"ws/chain":      "inside/../../etc", // out through a second step
		"ws/dangling":   "../etc/newdir",    // to a path that does not exist yet
		"ws/sub/up":     "../../data",       // out from below
		"home/.cache":   "../data/cache",    // the user's own, in a tree nobody writes
		"ws/to-home":    "../home/.cache",   // out of ws, then through the user's link
		"ws/loop":       "loop",
		"ws/inner-loop": "inside/../inside/../out",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	trees := []string{root + "/ws"}
	tests := []struct {
		path, want string // want "" for a LinkError
		loop       bool
	}{
		{"ws/src/a.go", "ws/src/a.go", false},
		{"ws/inside/a.go", "ws/src/a.go", false},
		{"ws/new/file", "ws/new/file", false},
		{"home/.cache/x", "data/cache/x", false},
		{"ws/out", "", false},
		{"ws/out/passwd", "", false},
		{"ws/abs", "", false},
		{"ws/chain", "", false},
		{"ws/dangling", "", false},
		{"ws/sub/up/cache", "", false},
		{"ws/to-home", "", false},
		{"ws/inner-loop", "", false},
		{"ws/loop", "", true},
	}
	for _, tt := range tests {
		got, err := guardedResolve(filepath.Join(root, tt.path), linkScope{trees: trees, own: trees})
		var le *LinkError
		switch {
		case tt.loop:
			if !errors.Is(err, errLoop) {
				t.Errorf("guardedResolve(%q) = %q, %v; want a loop", tt.path, got, err)
			}
		case tt.want == "":
			if !errors.As(err, &le) || le.Tree != root+"/ws" {
				t.Errorf("guardedResolve(%q) = %q, %v; want a LinkError in ws", tt.path, got, err)
			}
		case err != nil || got != filepath.Join(root, tt.want):
			t.Errorf("guardedResolve(%q) = %q, %v; want %q", tt.path, got, err, tt.want)
		}
	}
}

// TestGuardLinks: a rule through a planted link grants nothing and says
// why, the user's own link outside every writable tree keeps working, and
// a working directory reached through a planted link is refused.
func TestGuardLinks(t *testing.T) {
	testOnlyNoSharedTrees = true // the test's tree lies in /tmp
	defer func() { testOnlyNoSharedTrees = false }()
	root := mktree(t, "ws/.git/HEAD", "etc/x", "data/cache/", "home/")
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink("../etc", root+"/ws/cache"))
	must(os.Symlink("../data/cache", root+"/home/.cache"))
	pol := policy.Compile(policy.Config{Filesystem: policy.Filesystem{AllowWrite: []string{".", "cache", "~/.cache"}, AllowRead: []string{"cache/x"}, DefaultDenyRead: true}},
		policy.Env{Dir: root + "/ws", Home: root + "/home"})
	dropped, err := GuardLinks(pol, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(dropped) != 2 {
		t.Errorf("dropped = %q, want the allowWrite and allowRead rules through ws/cache", dropped)
	}
	var writes []string
	for _, r := range pol.Write {
		writes = append(writes, r.Pattern)
	}
	if want := []string{root + "/ws", root + "/data/cache"}; len(writes) != 2 || writes[0] != want[0] || writes[1] != want[1] {
		t.Errorf("write rules = %q, want %q", writes, want)
	}

	must(os.Symlink("../etc", root+"/ws/proj"))
	in := policy.Compile(policy.Config{Filesystem: policy.Filesystem{AllowWrite: []string{"."}}}, policy.Env{Dir: root + "/ws/proj", Home: root + "/home"})
	if _, err := GuardLinks(in, nil); err == nil {
		t.Errorf("a working directory through a planted link was accepted")
	}
}

// TestGuardedResolveNarrower: a link in a tree an earlier run could write
// but this one may not must lead into a tree this one may write, even
// when it stays inside its own: otherwise it widens this run.
func TestGuardedResolveNarrower(t *testing.T) {
	root := mktree(t, "home/ws/", "home/data/")
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(".", root+"/home/.cache"))
	must(os.Symlink("ws", root+"/home/work"))
	scope := linkScope{trees: []string{root + "/home", root + "/home/ws"}, own: []string{root + "/home/ws", root + "/home/.cache"}}
	if got, err := guardedResolve(root+"/home/.cache/data", scope); err == nil {
		t.Errorf("a link to the home in the home resolved to %q for a run that may write only ws", got)
	}
	if got, err := guardedResolve(root+"/home/work/x", scope); err != nil || got != root+"/home/ws/x" {
		t.Errorf("a link into ws = %q, %v; want it followed", got, err)
	}
}
