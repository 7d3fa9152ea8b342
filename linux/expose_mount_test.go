//go:build linux

package linux_test

import (
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestExposeHostPathMountPoint: a path below /tmp that a mount shows
// another tree under (here the home, bound there) is refused for
// --expose-host-path-rw, naming the mount: the protections of the home
// match its paths, not the /tmp name. Root only, to make the mount.
func TestExposeHostPathMountPoint(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount")
	}
	w := newWorld(t, 0, `{}`)
	w.plant(t, map[string]string{"home/.bashrc": "# rc\n", "home/sub/.keep": ""})
	mnt, err := os.MkdirTemp("/tmp", "fence-expose-mnt-")
	must(t, err)
	t.Cleanup(func() { os.Remove(mnt) })
	must(t, unix.Mount(w.home, mnt, "", unix.MS_BIND, ""))
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	for _, p := range []string{mnt, mnt + "/sub"} {
		r := w.fence(t, "", nil, "--expose-host-path-rw", p, "--", "sh", "-c", "echo x >> "+mnt+"/.bashrc")
		if r.code != 125 || !strings.Contains(r.stderr, mnt+" is a mount point") {
			t.Errorf("%s: exit %d, stderr %q; want 125 naming the mount", p, r.code, r.stderr)
		}
	}
	if b, _ := os.ReadFile(w.home + "/.bashrc"); string(b) != "# rc\n" {
		t.Errorf("~/.bashrc is now %q", b)
	}
}
