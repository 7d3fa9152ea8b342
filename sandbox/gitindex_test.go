package sandbox

import (
	"os"
	"os/exec"
	"slices"
	"testing"
)

// TestGitlinks reads the gitlinks of real indexes, in every version git
// writes, beside files and links.
func TestGitlinks(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
	for _, version := range []string{"2", "3", "4"} {
		t.Run("v"+version, func(t *testing.T) {
			dir := t.TempDir()
			script := `set -e
git init -q .
mkdir -p a/deep && echo x > a/deep/file && ln -s a link && echo y > top
git add . && git update-index --add --cacheinfo 160000,1111111111111111111111111111111111111111,a/deep/sub
git update-index --add --cacheinfo 160000,2222222222222222222222222222222222222222,zz-sub
git update-index --index-version ` + version + `
`
			cmd := exec.Command("sh", "-c", script)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			got, err := gitlinks(dir+"/.git/index", 20)
			if want := []string{"a/deep/sub", "zz-sub"}; err != nil || !slices.Equal(got, want) {
				t.Errorf("gitlinks = %q, %v; want %q", got, err, want)
			}
		})
	}
}

// TestNewGitlinkReposSplitIndex: with the index split, the entries are in
// a shared index fence does not read itself; git is asked instead.
func TestNewGitlinkReposSplitIndex(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
	dir := t.TempDir()
	run := func(script string) {
		t.Helper()
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
	run(`git init -q . && echo x > f && git add f`)
	git, _ := exec.LookPath("git")
	w := GitlinkWatch{WorkTree: dir, Index: dir + "/.git/index", Stamp: fileStamp(dir + "/.git/index"), HashLen: 20, Git: git, GitStamp: fileStamp(git)}
	run(`mkdir sub && git -C sub init -q && git update-index --add --cacheinfo 160000,1111111111111111111111111111111111111111,sub && git update-index --split-index`)
	if _, err := gitlinks(w.Index, 20); err != errSplitIndex {
		t.Fatalf("gitlinks of a split index: %v, want errSplitIndex", err)
	}
	got, err := NewGitlinkRepos(w)
	if want := []string{dir + "/sub/.git"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("NewGitlinkRepos = %q, %v; want %q", got, err, want)
	}
	w.GitStamp = "replaced"
	if _, err := NewGitlinkRepos(w); err == nil {
		t.Errorf("a git that changed during the run was run")
	}
}
