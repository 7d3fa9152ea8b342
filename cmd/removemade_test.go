package cmd

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRemoveMade: the runtime directory fence made goes with what the
// command left in it, but not a link's target, not another user's tree
// moved into it, and not a directory moved to its name.
func TestRemoveMade(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	must(t, os.WriteFile(outside, []byte("keep"), 0o600))
	dir := filepath.Join(base, "runtime")
	must(t, os.Mkdir(dir, 0o700))
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	must(t, err)
	must(t, os.MkdirAll(filepath.Join(dir, "a/b/c"), 0o700))
	must(t, os.WriteFile(filepath.Join(dir, "a/b/c/sock"), nil, 0o600))
	must(t, os.Symlink(outside, filepath.Join(dir, "link")))
	must(t, os.Symlink(base, filepath.Join(dir, "a/dirlink")))
	others := os.Getuid() == 0
	if others {
		// Another user's tree moved in, as a sandboxed root could: fence
		// (root too) must not delete what the command could not.
		must(t, os.MkdirAll(filepath.Join(dir, "theirs/sub"), 0o700))
		must(t, os.WriteFile(filepath.Join(dir, "theirs/sub/f"), []byte("x"), 0o600))
		for _, p := range []string{"theirs", "theirs/sub", "theirs/sub/f"} {
			must(t, os.Lchown(filepath.Join(dir, p), 65534, 65534))
		}
	}
	removeMade(dir, fd, os.Geteuid())
	if b, err := os.ReadFile(outside); err != nil || string(b) != "keep" {
		t.Errorf("a link's target was touched: %q, %v", b, err)
	}
	if others {
		if _, err := os.Stat(filepath.Join(dir, "theirs/sub/f")); err != nil {
			t.Errorf("another user's tree moved into the directory was removed: %v", err)
		}
		if names, _ := os.ReadDir(dir); len(names) != 1 {
			t.Errorf("left %v, want only the other user's tree", names)
		}
	} else if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("the directory was not removed: %v", err)
	}
}

// TestRemoveMadeRenamed: when the command moved the directory away and
// put another at its name, fence empties only the one it made (through
// its descriptor) and leaves the stranger whole.
func TestRemoveMadeRenamed(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "runtime")
	must(t, os.Mkdir(dir, 0o700))
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "left"), nil, 0o600))
	must(t, os.Rename(dir, filepath.Join(base, "moved")))
	must(t, os.Mkdir(dir, 0o700))
	must(t, os.WriteFile(filepath.Join(dir, "victim"), []byte("x"), 0o600))
	removeMade(dir, fd, os.Geteuid())
	if _, err := os.Stat(filepath.Join(dir, "victim")); err != nil {
		t.Errorf("the directory put at the name was emptied: %v", err)
	}
	if _, err := os.Stat(filepath.Join(base, "moved/left")); !os.IsNotExist(err) {
		t.Errorf("the directory fence made was not emptied: %v", err)
	}
}
