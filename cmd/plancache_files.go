package cmd

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The entries live in the user cache dir ($XDG_CACHE_HOME, else
// ~/.cache) below fence/plans, one file per key: the directories 0700
// and the files 0600, the user's own, each written whole under a
// temporary name and renamed into place. A sandbox may be able to write
// the directory (~/.cache is writable under most templates), so fence
// trusts nothing it finds there that it could not have written itself:
// an entry that does not open with the key (see plancache_key.go), a
// link, a file or directory another user owns or that others may write,
// a file of another size than it says or of another format is ignored,
// and replaced by the next entry of its key.

const (
	// maxCacheEntries bounds the entries kept; the least recently
	// written go first.
	maxCacheEntries = 64
	// maxCacheEntrySize bounds an entry's size, read and written.
	maxCacheEntrySize = 8 << 20
)

// planCacheDir is the directory of the plan cache, "" when there is no
// user cache dir.
func planCacheDir() string {
	base, err := os.UserCacheDir()
	if err != nil || !filepath.IsAbs(base) {
		return ""
	}
	return filepath.Join(base, "fence", "plans")
}

// planCacheDirs are the plan cache's directories the sandbox may not
// write: this run's (fence in the user cache dir) and ~/.cache/fence,
// which a run without XDG_CACHE_HOME uses.
func planCacheDirs() []string {
	var out []string
	if dir := planCacheDir(); dir != "" {
		out = append(out, filepath.Dir(dir))
	}
	if home, err := os.UserHomeDir(); err == nil && filepath.IsAbs(home) {
		if d := filepath.Join(home, ".cache", "fence"); !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// makePlanCacheDir creates the cache directory (0700) when it is
// missing, before the plan, so that the first run's plan is made on the
// disk the next run sees.
func makePlanCacheDir(dir string) error {
	if dir == "" {
		return nil
	}
	fd, err := openCacheDir(dir, true)
	if err != nil {
		return fmt.Errorf("create the plan cache %q: %w", dir, err)
	}
	unix.Close(fd)
	return nil
}

// openCacheDir opens dir, the cache directory: its grandparent (the user
// cache dir, as the user configured it) by path, then fence and plans
// each from the one before with O_NOFOLLOW, so that no link a sandbox
// left there is followed, refusing either when it is not this user's or
// others may write it. With create, a missing one is made (mkdirat,
// 0700) first, but never through a user cache dir that is itself a link
// (a sandbox that could write the home may have put it there). Everything
// fence does in the directory after is done through the returned fd,
// never by dir's path.
func openCacheDir(dir string, create bool) (int, error) {
	parent := filepath.Dir(filepath.Dir(dir))
	if fi, err := os.Lstat(parent); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		create = false
	}
	fd, err := unix.Open(parent, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil && create && errors.Is(err, unix.ENOENT) {
		if err = os.MkdirAll(parent, 0o700); err == nil {
			fd, err = unix.Open(parent, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		}
	}
	if err != nil {
		return -1, fmt.Errorf("open %q: %w", parent, err)
	}
	for _, name := range []string{filepath.Base(filepath.Dir(dir)), filepath.Base(dir)} {
		next, err := openSubdir(fd, name, create)
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

// openSubdir opens the directory name in the directory dirfd, never
// through a link, checked to be this user's and closed to others; with
// create, a missing one is made first.
func openSubdir(dirfd int, name string, create bool) (int, error) {
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(dirfd, name, flags, 0)
	if errors.Is(err, unix.ENOENT) && create {
		if err = unix.Mkdirat(dirfd, name, 0o700); err == nil || errors.Is(err, unix.EEXIST) {
			fd, err = unix.Openat(dirfd, name, flags, 0)
		}
	}
	if err != nil {
		return -1, fmt.Errorf("open %q: %w", name, err)
	}
	if err := ownOnly(fd, 0o022); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("%q: %w", name, err)
	}
	return fd, nil
}

// ownOnly checks that the file of fd is this user's and grants none of
// the mode bits in others.
func ownOnly(fd int, others uint32) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("fstat: %w", err)
	}
	switch {
	case int(st.Uid) != os.Geteuid():
		return fmt.Errorf("owned by uid %d, not this user", st.Uid)
	case uint32(st.Mode)&others != 0:
		return fmt.Errorf("mode %#o lets other users in", st.Mode&0o777)
	}
	return nil
}

// readEntryFile reads the entry file of key in the directory dirfd: a
// regular file of this user's, mode 0600 or narrower, never through a
// link, of at most maxCacheEntrySize bytes.
func readEntryFile(dirfd int, key string) ([]byte, error) {
	fd, err := unix.Openat(dirfd, key, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), key)
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, errors.New("not a regular file")
	case fi.Size() > maxCacheEntrySize:
		return nil, fmt.Errorf("%d bytes, more than an entry may have", fi.Size())
	}
	if err := ownOnly(fd, 0o077); err != nil {
		return nil, err
	}
	b := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("cut short: %w", err)
	}
	return b, nil
}

// writeEntryFile puts b in place as the entry of key: written under a
// fresh name (mode 0600), then renamed over the old entry; the oldest
// entries go beyond maxCacheEntries.
func writeEntryFile(dirfd int, key string, b []byte) error {
	if len(b) > maxCacheEntrySize {
		return fmt.Errorf("entry of %d bytes, more than an entry may have", len(b))
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := ".tmp-" + hex.EncodeToString(rnd[:])
	fd, err := unix.Openat(dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("create entry: %w", err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dirfd, tmp, dirfd, key)
	}
	if err != nil {
		unix.Unlinkat(dirfd, tmp, 0)
		return fmt.Errorf("write entry: %w", err)
	}
	pruneEntries(dirfd, key, time.Now())
	return nil
}

// pruneEntries removes, from the directory dirfd, the least recently
// written entries (and any temporary file a run left behind) beyond
// maxCacheEntries, keeping the one of key, just written. It lists and
// removes through dirfd alone, and only what fence may have made: names
// of an entry's form that are regular files of this user's. An entry
// whose time is later than now was not written as fence writes, and goes
// first; a name of another form is neither counted nor removed.
func pruneEntries(dirfd int, key string, now time.Time) {
	all := entryAges(dirfd, key, now)
	if len(all) < maxCacheEntries {
		return
	}
	slices.SortFunc(all, func(a, b entryAge) int { return cmp.Compare(b.ns, a.ns) })
	for _, e := range all[maxCacheEntries-1:] {
		unix.Unlinkat(dirfd, e.name, 0)
	}
}

// entryAge is an entry's name and modification time.
type entryAge struct {
	name string
	ns   int64
}

// entryAges lists the entries of dirfd that pruneEntries may remove, all
// but key's, each with its time (a time later than now as the earliest).
func entryAges(dirfd int, key string, now time.Time) []entryAge {
	names, err := listFd(dirfd)
	if err != nil {
		return nil
	}
	var all []entryAge
	for _, name := range names {
		if name == key || !isEntryName(name) {
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil ||
			st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != os.Geteuid() {
			continue
		}
		ns := st.Mtim.Nano()
		if ns > now.UnixNano() {
			ns = math.MinInt64
		}
		all = append(all, entryAge{name, ns})
	}
	return all
}

// listFd is the names in the directory dirfd, read through a duplicate of
// it.
func listFd(dirfd int) ([]string, error) {
	dup, err := unix.Dup(dirfd)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dup), "plans")
	defer f.Close()
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return f.Readdirnames(-1)
}

// isEntryName reports whether name is one fence gives an entry or its
// temporary file.
func isEntryName(name string) bool {
	hexOnly := func(s string, n int) bool {
		if len(s) != n {
			return false
		}
		for _, c := range s {
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
		}
		return true
	}
	if rest, ok := strings.CutPrefix(name, ".tmp-"); ok {
		return hexOnly(rest, 16)
	}
	return hexOnly(name, 64)
}
