package linux

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/sandbox"
)

// warnCreated reports protected paths that did not exist when the sandbox
// started (so no mount could cover them) and exist now; one that fence
// always protects is moved aside, so that nothing outside the sandbox
// reads or runs it.
func warnCreated(watch []sandbox.Watch, stderr io.Writer) {
	stamp := quarantineStamp()
	listings := map[string]map[string]bool{}
	watch = expandGlobs(watch)
	for _, w := range watch {
		if w.Link != "" {
			restoreLink(w, stamp, stderr)
			continue
		}
		if w.Missing != "" && stillMissing(w.Missing, listings) {
			continue // the common case: nothing was made on the way
		}
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

// stillMissing reports whether p, missing at start, is missing still,
// from one listing of its directory for all the paths fence watches there
// (a stat for p alone where the directory cannot be listed).
func stillMissing(p string, listings map[string]map[string]bool) bool {
	dir, name := filepath.Split(p)
	names, ok := listings[dir]
	if !ok {
		if f, err := os.Open(dir); err == nil {
			// A directory the command filled is asked about by name.
			list, err := f.Readdirnames(4096)
			more, _ := f.Readdirnames(1)
			f.Close()
			if (err == nil || errors.Is(err, io.EOF)) && len(more) == 0 {
				names = map[string]bool{}
				for _, n := range list {
					names[n] = true
				}
			}
		} else if errors.Is(err, fs.ErrNotExist) {
			names = map[string]bool{}
		}
		listings[dir] = names
	}
	if names == nil {
		_, err := os.Lstat(p)
		return errors.Is(err, fs.ErrNotExist)
	}
	return !names[name]
}

// quarantineStamp names one run's quarantine: the time, for people, and
// random bytes, so that the command cannot take the name beforehand.
func quarantineStamp() string {
	b := make([]byte, 4)
	rand.Read(b)
	return fmt.Sprintf("%d-%x", time.Now().Unix(), b)
}

func quarantineSuffix(stamp string) string { return ".fence-quarantine-" + stamp }

// quarantine moves p aside, walking to it one component at a time without
// following a symlink: p is canonical as planned (its existing part had
// no links at start), so a link on the way is one the command put there,
// in place of a directory or where p's own tree was missing, and it is
// the link that is moved aside, never what it leads to. It returns the
// new name of what it moved, "" when p does not exist.
func quarantine(p string, stamp string) (string, error) {
	dir, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("open /: %w", err)
	}
	defer func() { unix.Close(dir) }()
	cur := "/"
	parts := strings.Split(strings.TrimPrefix(filepath.Clean(p), "/"), "/")
	for i, name := range parts {
		var st unix.Stat_t
		if err := withWritable(dir, func() error { return unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) }); err != nil {
			return "", err
		}
		kind := st.Mode & unix.S_IFMT
		if i < len(parts)-1 && kind != unix.S_IFDIR && kind != unix.S_IFLNK {
			return "", unix.ENOENT // p cannot exist below a file
		}
		if i == len(parts)-1 || kind == unix.S_IFLNK {
			aside := name + quarantineSuffix(stamp)
			err := withWritable(dir, func() error { return unix.Renameat2(dir, name, dir, aside, unix.RENAME_NOREPLACE) })
			if err != nil {
				return "", fmt.Errorf("rename %q: %w", filepath.Join(cur, name), err)
			}
			return filepath.Join(cur, aside), nil
		}
		var next int
		err := withWritable(dir, func() (err error) {
			next, err = unix.Openat(dir, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			return err
		})
		if err != nil {
			return "", fmt.Errorf("open %q: %w", filepath.Join(cur, name), err)
		}
		unix.Close(dir)
		dir, cur = next, filepath.Join(cur, name)
	}
	return "", nil
}

// withWritable runs op, and once more with the directory dir given its
// owner's write and search bits if op was refused for permission: the
// command may have taken them away (chmod 555 .git) to keep fence from
// moving its file aside. Only the owner, fence's own user, can do that;
// the directory's mode is put back afterwards.
func withWritable(dir int, op func() error) error {
	err := op()
	if !errors.Is(err, unix.EACCES) && !errors.Is(err, unix.EPERM) {
		return err
	}
	self := fmt.Sprintf("/proc/self/fd/%d", dir)
	var st unix.Stat_t
	if unix.Fstat(dir, &st) != nil || unix.Chmod(self, st.Mode&0o7777|0o300) != nil {
		return err
	}
	defer unix.Chmod(self, st.Mode&0o7777)
	return op()
}

// checkWorktrees moves aside what a linked worktree the command added
// would make git follow out of its repository (see
// sandbox.NewWorktreeFiles).
func checkWorktrees(worktrees []sandbox.WorktreeWatch, stderr io.Writer) {
	stamp := quarantineStamp()
	for _, w := range worktrees {
		for _, m := range sandbox.NewModuleDirs(w) {
			if aside, err := quarantine(m, stamp); err != nil {
				fmt.Fprintf(stderr, "fence: warning: the command created %s, a submodule's git directory whose hooks and config git submodule update would run, and fence could not move it aside (%v): delete it\n", m, err)
			} else {
				fmt.Fprintf(stderr, "fence: warning: the command created %s, a submodule's git directory whose hooks and config git submodule update would run; fence moved it to %s\n", m, aside)
			}
		}
		for _, f := range sandbox.NewWorktreeFiles(w) {
			aside, err := quarantine(f, stamp)
			if err != nil {
				fmt.Fprintf(stderr, "fence: warning: the command added a worktree to %s whose %s git would follow out of the repository, and fence could not move it aside (%v): delete it\n", w.CommonDir, f, err)
				continue
			}
			fmt.Fprintf(stderr, "fence: warning: the command added a worktree to %s whose %s git would follow out of the repository; fence moved it to %s\n", w.CommonDir, f, aside)
		}
	}
}

// expandGlobs replaces each watched glob with its matches that did not
// exist at start, as plain watched paths. The expansion follows links, as
// the program that reads the path would; quarantine then moves the first
// link on the way aside, not what it leads to.
func expandGlobs(watch []sandbox.Watch) []sandbox.Watch {
	out := make([]sandbox.Watch, 0, len(watch))
	listed := map[string][]fs.DirEntry{}
	for _, w := range watch {
		if !w.Glob {
			out = append(out, w)
			continue
		}
		matches, ok := sandbox.NamedMatches(w.Path, giveBack, listed)
		if !ok {
			matches = globListable(w.Path)
		}
		for _, m := range matches {
			if !slices.Contains(w.Existing, m) {
				out = append(out, sandbox.Watch{Path: m, Quarantine: w.Quarantine, Kind: sandbox.KindMissing, Why: w.Why})
			}
		}
	}
	return out
}

// globListable expands pattern, giving a directory on the way its owner's
// read and search bits back when fence may not list it: the command could
// have taken them away to hide a match from this check, and the program
// that reads the match (Python, for a .pth) needs only to search it.
func globListable(pattern string) []string {
	base, _ := doublestar.SplitPattern(pattern)
	var restore []func()
	defer func() {
		for _, r := range slices.Backward(restore) {
			r()
		}
	}()
	for range 16 {
		matches, err := doublestar.FilepathGlob(pattern, doublestar.WithFailOnIOErrors())
		var pe *fs.PathError
		if err == nil || !errors.As(err, &pe) || !errors.Is(err, fs.ErrPermission) {
			return matches
		}
		p := filepath.Join(base, pe.Path) // the error names it from the base
		undo, ok := giveBack(p)
		if !ok {
			undo, ok = giveBack(filepath.Dir(p))
		}
		if !ok {
			return matches
		}
		restore = append(restore, undo)
	}
	return nil
}

// giveBack adds the owner's read and search bits to dir, never through a
// link; it reports whether it could, with how to put the mode back.
func giveBack(dir string) (undo func(), ok bool) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	self := fmt.Sprintf("/proc/self/fd/%d", fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&0o500 == 0o500 || unix.Chmod(self, st.Mode&0o7777|0o500) != nil {
		unix.Close(fd)
		return nil, false
	}
	return func() { unix.Chmod(self, st.Mode&0o7777); unix.Close(fd) }, true
}

// restoreLink puts back a protected symlink the command replaced or
// removed, moving aside what it left in its place.
func restoreLink(w sandbox.Watch, stamp string, stderr io.Writer) {
	if target, err := os.Readlink(w.Path); err == nil && target == w.Link {
		return
	}
	aside, err := quarantine(w.Path, stamp)
	if err != nil && !errors.Is(err, unix.ENOENT) {
		fmt.Fprintf(stderr, "fence: warning: the command replaced %s, a symlink to %s (%s), and fence could not move it aside (%v): delete it and restore the link\n", w.Path, w.Link, w.Why, err)
		return
	}
	if err := os.Symlink(w.Link, w.Path); err != nil {
		fmt.Fprintf(stderr, "fence: warning: the command replaced %s, a symlink to %s (%s); fence moved what it left to %s but could not restore the link: %v\n", w.Path, w.Link, w.Why, aside, err)
		return
	}
	if aside == "" {
		fmt.Fprintf(stderr, "fence: warning: the command removed %s, a symlink to %s (%s); fence restored it\n", w.Path, w.Link, w.Why)
		return
	}
	fmt.Fprintf(stderr, "fence: warning: the command replaced %s, a symlink to %s (%s); fence moved what it left to %s and restored the link\n", w.Path, w.Link, w.Why, aside)
}

// checkGitlinks moves aside the .git of a repository the command created
// and recorded in a work tree's index as a submodule: the host's next
// git status there would run its config (see sandbox.GitlinkWatch).
func checkGitlinks(watches []sandbox.GitlinkWatch, stderr io.Writer) {
	stamp := quarantineStamp()
	for _, w := range watches {
		repos, err := sandbox.NewGitlinkRepos(w)
		if err != nil {
			fmt.Fprintf(stderr, "fence: warning: %v: the command may have recorded a repository of its own there as a submodule, whose config git status would run; check `git ls-files --stage | grep ^160000` before you run git there\n", err)
		}
		for _, g := range repos {
			aside, err := quarantine(g, stamp)
			if err != nil {
				fmt.Fprintf(stderr, "fence: warning: the command made %s a repository of its own and recorded it in the index of %s, where git status runs its config, and fence could not move it aside (%v): delete it\n", filepath.Dir(g), w.WorkTree, err)
				continue
			}
			fmt.Fprintf(stderr, "fence: warning: the command made %s a repository of its own and recorded it in the index of %s, where git status would run its config; fence moved its .git to %s\n", filepath.Dir(g), w.WorkTree, aside)
		}
	}
}
