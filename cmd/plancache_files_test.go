package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// entryName is the i-th name of an entry's form.
func entryName(i int) string { return fmt.Sprintf("%064x", i) }

// fillDir puts n files named as entries in dir, each with the time at.
func fillDir(t *testing.T, dir string, n int, at time.Time) {
	t.Helper()
	for i := range n {
		p := filepath.Join(dir, entryName(1000+i))
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
}

// countFiles is the number of names in dir.
func countFiles(t *testing.T, dir string) int {
	t.Helper()
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(names)
}

// newCacheDir makes a cache directory below a fresh user cache dir and
// returns its path and an fd of it.
func newCacheDir(t *testing.T) (string, int) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "fence", "plans")
	if err := makePlanCacheDir(dir); err != nil {
		t.Fatal(err)
	}
	fd, err := openCacheDir(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return dir, fd
}

// TestPruneThroughFd swaps the cache directory for a link to another
// directory after fence opened it, as a sandbox that can write the
// cache's parent may: keeping an entry prunes the directory fence
// opened, and leaves the other one alone.
func TestPruneThroughFd(t *testing.T) {
	dir, fd := newCacheDir(t)
	fillDir(t, dir, maxCacheEntries+6, time.Now().Add(-time.Hour))
	victim := t.TempDir()
	fillDir(t, victim, 100, time.Unix(1577836800, 0))
	if err := os.Rename(dir, dir+".real"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, dir); err != nil {
		t.Fatal(err)
	}
	if err := writeEntryFile(fd, entryName(1), []byte("entry")); err != nil {
		t.Fatal(err)
	}
	if n := countFiles(t, victim); n != 100 {
		t.Errorf("the directory the link leads to holds %d files of 100", n)
	}
	if n := countFiles(t, dir+".real"); n != maxCacheEntries {
		t.Errorf("the cache directory holds %d files, want %d", n, maxCacheEntries)
	}
}

// TestPruneKeepsFresh fills the cache directory as a sandbox could:
// entries dated in the future, and names fence never writes. The entry
// just kept stays, the future ones go first, the foreign names are
// neither removed nor counted.
func TestPruneKeepsFresh(t *testing.T) {
	dir, fd := newCacheDir(t)
	fillDir(t, dir, maxCacheEntries+6, time.Now().Add(24*time.Hour))
	old := filepath.Join(dir, entryName(7))
	if err := os.WriteFile(old, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(old, time.Now().Add(-time.Hour), time.Now().Add(-time.Hour))
	var foreign []string
	for _, name := range []string{"notes.txt", entryName(8) + ".bak", ".tmp-zz"} {
		foreign = append(foreign, filepath.Join(dir, name))
		if err := os.WriteFile(foreign[len(foreign)-1], []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fresh := entryName(1)
	if err := writeEntryFile(fd, fresh, []byte("entry")); err != nil {
		t.Fatal(err)
	}
	for _, p := range append(foreign, filepath.Join(dir, fresh), old) {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s is gone after keeping an entry: %v", filepath.Base(p), err)
		}
	}
	if n := countFiles(t, dir); n != maxCacheEntries+len(foreign) {
		t.Errorf("%d files left, want %d entries and the %d foreign names", n, maxCacheEntries, len(foreign))
	}
}

// TestCacheDirNoFollow plants links and foreign directories where the
// cache directory is made: each is refused, and nothing is made where a
// link leads.
func TestCacheDirNoFollow(t *testing.T) {
	tests := []struct {
		name     string
		plant    func(t *testing.T, base, victim string)
		rootOnly bool
		want     string
	}{
		{"fence a link", func(t *testing.T, base, victim string) {
			os.Symlink(victim, filepath.Join(base, "fence"))
		}, false, "not a directory"},
		{"plans a link", func(t *testing.T, base, victim string) {
			os.Mkdir(filepath.Join(base, "fence"), 0o700)
			os.Symlink(victim, filepath.Join(base, "fence", "plans"))
		}, false, "not a directory"},
		{"fence writable by others", func(t *testing.T, base, victim string) {
			os.Mkdir(filepath.Join(base, "fence"), 0o700)
			os.Chmod(filepath.Join(base, "fence"), 0o777)
		}, false, "lets other users in"},
		{"fence another user's", func(t *testing.T, base, victim string) {
			os.Mkdir(filepath.Join(base, "fence"), 0o700)
			os.Chown(filepath.Join(base, "fence"), 65534, 65534)
		}, true, "owned by uid 65534"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.rootOnly && os.Geteuid() != 0 {
				t.Skip("needs root to give a directory away")
			}
			base, victim := t.TempDir(), t.TempDir()
			tt.plant(t, base, victim)
			err := makePlanCacheDir(filepath.Join(base, "fence", "plans"))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("make the cache directory: %v; want an error saying %q", err, tt.want)
			}
			if n := countFiles(t, victim); n != 0 {
				t.Errorf("%d files made where the link leads", n)
			}
		})
	}
}

// TestCacheDirNotMadeThroughLink: where the user cache dir is itself a
// link, fence makes no cache directory through it.
func TestCacheDirNotMadeThroughLink(t *testing.T) {
	base, victim := t.TempDir(), t.TempDir()
	link := filepath.Join(base, "cache")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(victim, link))
	if err := makePlanCacheDir(filepath.Join(link, "fence", "plans")); err == nil {
		t.Errorf("made the cache directory through a link")
	}
	if n := countFiles(t, victim); n != 0 {
		t.Errorf("%d files made where the link leads", n)
	}
}
