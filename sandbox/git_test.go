package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fence-sandbox/fence/policy"
)

// gitTree makes a work tree with a submodule, a linked worktree, a nested
// repository, a bare one, and a cache holding clones at two depths.
func gitTree(t *testing.T) string {
	root := mktree(t,
		"ws/.git/HEAD", "ws/.git/config", "ws/.git/hooks/", "ws/.git/objects/", "ws/.git/refs/",
		"ws/.git/modules/lib/HEAD", "ws/.git/modules/lib/config",
		"ws/.git/modules/lib/modules/inner/HEAD",
		"ws/.git/worktrees/feature/HEAD",
		"ws/src/a.go",
		"ws/vendor/nested/.git/HEAD", "ws/vendor/nested/.git/config",
		"ws/mirror.git/HEAD", "ws/mirror.git/config", "ws/mirror.git/objects/", "ws/mirror.git/refs/",
		"cache/one/.git/HEAD", "cache/a/b/.git/HEAD", "cache/a/b/c/.git/HEAD",
		"feature/x.go",
	)
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(root+"/ws/lib", 0o755))
	write("ws/lib/.git", "gitdir: ../.git/modules/lib\n")
	write("ws/.git/worktrees/feature/commondir", "../..\n")
	write("ws/.git/worktrees/feature/gitdir", root+"/feature/.git\n")
	write("feature/.git", "gitdir: "+root+"/ws/.git/worktrees/feature\n")
	return root
}

func TestFindRepos(t *testing.T) {
	root := gitTree(t)
	pol := policy.Compile(policy.Config{Filesystem: policy.Filesystem{AllowWrite: []string{".", "../cache", "src"}}}, policy.Env{Dir: root + "/ws", Home: root})
	found, err := FindRepos(pol, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	repos := found.Repos
	var got []string
	for _, r := range repos {
		got = append(got, strings.ReplaceAll(r.CommonDir+" "+r.Gitfile+" "+strings.Join(r.GitDirs, ","), root, ""))
	}
	// The workspace is searched whole (src only once, inside it), the
	// cache one level down: cache/a/b is too deep.
	want := []string{
		"/ws/.git  /ws/.git,/ws/.git/worktrees/feature",
		"/ws/.git/modules/lib  /ws/.git/modules/lib",
		"/ws/.git/modules/lib/modules/inner  /ws/.git/modules/lib/modules/inner",
		"/ws/.git/modules/lib /ws/lib/.git /ws/.git/modules/lib",
		"/ws/mirror.git  /ws/mirror.git",
		"/ws/vendor/nested/.git  /ws/vendor/nested/.git",
		"/cache/one/.git  /cache/one/.git",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("repos =\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestFindReposLinkedWorktree: run in a linked worktree, fence finds the
// common directory through the worktree's gitfile and commondir.
func TestFindReposLinkedWorktree(t *testing.T) {
	root := gitTree(t)
	pol := policy.Compile(policy.Config{Filesystem: policy.Filesystem{AllowWrite: []string{"."}}}, policy.Env{Dir: root + "/feature", Home: root})
	found, err := FindRepos(pol, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	repos := found.Repos
	if len(found.NewGit) != 0 {
		t.Errorf("NewGit = %q in a work tree that has its .git", found.NewGit)
	}
	if len(repos) == 0 || repos[0].CommonDir != root+"/ws/.git" || repos[0].Gitfile != root+"/feature/.git" {
		t.Fatalf("repos = %+v, want the main repository's common dir through feature/.git", repos)
	}
	pol.ProtectRepos(repos, false)
	for _, p := range []string{"/feature/.git", "/ws/.git/config", "/ws/.git/hooks", "/ws/.git/worktrees/feature/commondir", "/ws/.git/worktrees/feature/gitdir", "/ws/.git/commondir"} {
		if d := pol.CheckPath("write", root+p, root+p); d.Allowed || !strings.HasPrefix(d.Rule, "mandatory.git") {
			t.Errorf("write %s: %+v, want it protected by a git rule", p, d)
		}
	}
}

// TestFindReposNewGit: outside any repository, the .git paths that would
// make one around the working directory are the writable ones on the way.
func TestFindReposNewGit(t *testing.T) {
	root := mktree(t, "ws/a/b/")
	pol := policy.Compile(policy.Config{Filesystem: policy.Filesystem{AllowWrite: []string{".."}}}, policy.Env{Dir: root + "/ws/a/b", Home: root})
	found, err := FindRepos(pol, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{root + "/ws/a/b/.git", root + "/ws/a/.git"}; !slices.Equal(found.NewGit, want) {
		t.Errorf("NewGit = %q, want %q", found.NewGit, want)
	}
}

func TestFindReposBudget(t *testing.T) {
	var names []string
	for i := range 600 {
		names = append(names, "ws/d"+strings.Repeat("x", i%7)+"/"+string(rune('a'+i%26))+"/f"+string(rune('a'+i/26)))
	}
	root := mktree(t, names...)
	pol := policy.Compile(policy.Config{Filesystem: policy.Filesystem{AllowWrite: []string{"."}}}, policy.Env{Dir: root + "/ws", Home: root})
	_, err := FindRepos(pol, time.Nanosecond, nil)
	if be, ok := err.(*BudgetError); !ok || be.Tree != root+"/ws" || !strings.Contains(err.Error(), "searching the writable tree "+root+"/ws for repositories") {
		t.Errorf("err = %v, want a BudgetError for the search of the workspace", err)
	}
}
