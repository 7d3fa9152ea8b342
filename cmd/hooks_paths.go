package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// The paths fence hooks names or writes must be out of reach of anyone
// but the user and root: the binary a hook entry runs is run by the
// agent on the host before every tool call, and a settings file root
// edits must not be led elsewhere by a link another user puts on the
// way.

// checkHookBinary refuses exe, the fence binary a hook entry names by
// absolute path, when someone other than root and the user (euid) could
// put another program there: the file, or a directory above it, is owned
// by another user or writable by others (a sticky one,
// such as /tmp, too: anyone may make the path once the binary is gone,
// as go run's is when it exits). A link on the way is judged where it
// leads as well.
func checkHookBinary(exe string) error {
	owners := []uint32{0, uint32(os.Geteuid())}
	paths := []string{exe}
	if real := resolveExisting(exe); real != exe {
		paths = []string{real, exe} // where it leads first: the nearer cause
	}
	for _, p := range paths {
		why, err := replaceable(p, owners)
		if err != nil {
			return fmt.Errorf("check the fence binary %s: %w", exe, err)
		}
		if why != "" {
			return fmt.Errorf("refusing to write a hook that runs %s: %s, so another user or a sandboxed command could put a program of theirs there, which the agent would run on the host as fence's hook; install fence where only you or root can write (such as ~/.local/bin or /usr/local/bin) and run that copy's hooks install", exe, why)
		}
	}
	return nil
}

// resolveExisting is p with the links in the part of it that exists
// resolved, the rest as it is.
func resolveExisting(p string) string {
	rest := ""
	for dir := p; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		if dir == filepath.Dir(dir) {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// replaceable says why someone other than owners could put another file
// at p: p or a directory above it that exists is owned by someone else,
// or (a link excepted, whose mode means nothing) writable by others; ""
// when no one could. The nearest such is named.
func replaceable(p string, owners []uint32) (string, error) {
	for ; ; p = filepath.Dir(p) {
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return "", err
		default:
			if why := foreignOrOpen(p, fi, owners); why != "" {
				return why, nil
			}
		}
		if p == filepath.Dir(p) {
			return "", nil
		}
	}
}

// foreignOrOpen says how p (of info fi) is open to others: its owner is
// not among owners, or others may write it.
func foreignOrOpen(p string, fi fs.FileInfo, owners []uint32) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return p + " has no owner fence can read"
	}
	if !slices.Contains(owners, st.Uid) {
		return fmt.Sprintf("%s belongs to uid %d", p, st.Uid)
	}
	switch perm := fi.Mode(); {
	case perm&fs.ModeSymlink != 0:
	case perm&0o002 != 0 && perm&fs.ModeSticky != 0:
		return p + " may be written by anyone (sticky: anyone may add an entry)"
	case perm&0o002 != 0:
		return p + " may be written by anyone"
	}
	// A directory its group may write is let through: the group's members
	// are trusted as its owner is (Homebrew's /usr/local/bin, group admin;
	// Debian's /usr/local, group staff), and a sandboxed command writes
	// only where its policy lets it, whatever the mode.
	return ""
}

// checkRootEdit refuses, when fence runs as root, a settings path that
// another user could lead elsewhere or that is not root's: the file, or
// a directory on the way, belongs to another user, or a directory on the
// way is writable by others (a sticky one is let through only when the
// entry below it on the way exists, and so is root's, which no one else
// may rename there). Root's edit would hand a user's file to root (the
// user's agent then cannot read it), and a link the user puts on the way
// between fence's check and its write would lead root's write anywhere.
// So root edits only what root owns, and a user's file is left for that
// user to edit. The path is judged as named and where its links lead.
// As any other user this checks nothing: the kernel keeps the user to
// what they may write.
func checkRootEdit(path string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	if real := resolveExisting(path); real != path {
		if err := checkRootWay(real); err != nil {
			return err
		}
	}
	return checkRootWay(path)
}

// checkRootWay is checkRootEdit of path as named, links not followed.
func checkRootWay(path string) error {
	below := false // the entry below p on the way exists
	for p := path; ; p = filepath.Dir(p) {
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			below = false
		case err != nil:
			return fmt.Errorf("check %s: %w", path, err)
		default:
			if why := rootEditRefusal(p, fi, p != path && below); why != "" {
				return fmt.Errorf("refusing to edit %s as root: %s; run fence hooks as the user whose settings these are", path, why)
			}
			below = true
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

// rootEditRefusal says why root must not edit through p (of info fi):
// it belongs to another user, or it is a directory others may write,
// unless it is sticky and held, below, the entry on the way.
func rootEditRefusal(p string, fi fs.FileInfo, held bool) string {
	why := foreignOrOpen(p, fi, []uint32{0})
	if why == "" || (held && fi.Mode()&fs.ModeSticky != 0 && fi.Mode()&fs.ModeSymlink == 0 && !isForeign(fi)) {
		return ""
	}
	return why
}

// isForeign reports whether fi is owned by another user than root.
func isForeign(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || st.Uid != 0
}
