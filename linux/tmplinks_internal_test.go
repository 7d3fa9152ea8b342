//go:build linux

package linux

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCloneResolvedTreeRefusesLinks asks for a bind source whose way
// holds a symlink, as one swapped in after the plan would: the init
// refuses it rather than bind what the link leads to.
func TestCloneResolvedTreeRefusesLinks(t *testing.T) {
	if fd, err := unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC}); err != nil {
		t.Skipf("openat2: %v", err)
	} else {
		unix.Close(fd)
	}
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "secret", "x"), 0o755))
	must(os.Symlink(filepath.Join(dir, "secret"), filepath.Join(dir, "swapped")))
	for _, p := range []string{filepath.Join(dir, "swapped"), filepath.Join(dir, "swapped", "x")} {
		fd, err := cloneResolvedTree(p, true, true)
		if err == nil {
			unix.Close(fd)
			t.Fatalf("cloneResolvedTree(%q) followed the link", p)
		}
		if !errors.Is(err, unix.ELOOP) || !strings.Contains(err.Error(), "a symlink is on its way now") {
			t.Errorf("cloneResolvedTree(%q) = %v, want ELOOP naming the link", p, err)
		}
	}
}
