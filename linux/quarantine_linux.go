package linux

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/sandbox"
)

// warnCreated reports protected paths that did not exist when the sandbox
// started (so no mount could cover them) and exist now; one that fence
// always protects is moved aside, so that nothing outside the sandbox
// reads or runs it.
func warnCreated(watch []sandbox.Watch, stderr io.Writer) {
	stamp := time.Now().Unix()
	for _, w := range watch {
		if !w.Quarantine {
			if _, err := os.Lstat(w.Path); err == nil {
				fmt.Fprintf(stderr, "fence: warning: the command created %s, a path fence protects (%s) but could not cover because it did not exist: review it before trusting it\n", w.Path, w.Why)
			}
			continue
		}
		aside, err := quarantine(w.Path, stamp)
		switch {
		case errors.Is(err, unix.ENOENT):
		case err != nil:
			fmt.Fprintf(stderr, "fence: warning: the command created %s (%s), and fence could not move it aside (%v): delete it unless you wrote it\n", w.Path, w.Why, err)
		case aside == w.Path+quarantineSuffix(stamp):
			fmt.Fprintf(stderr, "fence: warning: the command created %s (%s); fence moved it to %s so that nothing outside the sandbox reads or runs it\n", w.Path, w.Why, aside)
		case aside != "":
			fmt.Fprintf(stderr, "fence: warning: the command put a symlink on the way to %s (%s); fence moved the link, %s, to %s so that nothing outside the sandbox reads or runs what it leads to\n", w.Path, w.Why, strings.TrimSuffix(aside, quarantineSuffix(stamp)), aside)
		}
	}
}

func quarantineSuffix(stamp int64) string { return fmt.Sprintf(".fence-quarantine-%d", stamp) }

// quarantine moves p aside, walking to it one component at a time without
// following a symlink: p is canonical as planned (its existing part had
// no links at start), so a link on the way is one the command put there,
// in place of a directory or where p's own tree was missing, and it is
// the link that is moved aside, never what it leads to. It returns the
// new name of what it moved, "" when p does not exist.
func quarantine(p string, stamp int64) (string, error) {
	dir, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("open /: %w", err)
	}
	defer func() { unix.Close(dir) }()
	cur := "/"
	parts := strings.Split(strings.TrimPrefix(filepath.Clean(p), "/"), "/")
	for i, name := range parts {
		var st unix.Stat_t
		if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return "", err
		}
		kind := st.Mode & unix.S_IFMT
		if i < len(parts)-1 && kind != unix.S_IFDIR && kind != unix.S_IFLNK {
			return "", unix.ENOENT // p cannot exist below a file
		}
		if i == len(parts)-1 || kind == unix.S_IFLNK {
			aside := name + quarantineSuffix(stamp)
			if err := unix.Renameat2(dir, name, dir, aside, unix.RENAME_NOREPLACE); err != nil {
				return "", fmt.Errorf("rename %q: %w", filepath.Join(cur, name), err)
			}
			return filepath.Join(cur, aside), nil
		}
		next, err := unix.Openat(dir, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return "", fmt.Errorf("open %q: %w", filepath.Join(cur, name), err)
		}
		unix.Close(dir)
		dir, cur = next, filepath.Join(cur, name)
	}
	return "", nil
}
