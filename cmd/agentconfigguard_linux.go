package cmd

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/policy"
)

// Some agent config files must stay writable for the agent to run under
// fence (Claude Code rewrites ~/.claude.json on every start and at each
// state change, and hangs when it cannot), yet hold what makes the
// agent's next run on the host, outside any sandbox, start programs,
// approve tools or trust a directory. Where the policy makes such a file
// writable, fence reads it before the run and keeps the values of those
// keys; after the run, whatever its exit, it puts back any the run
// changed, added or removed, keeps every other change the run made, and
// says which. A file the run left unparseable gets its whole content
// from before the run back. The command runs as the user and could write
// the file; fence, on the host side once the sandbox has ended, is the
// only one that can undo it before the host's agent reads it.

// guardedConfigs are the agent config files, home-relative (a name in
// $HOME itself), and their guarded keys.
var guardedConfigs = []struct {
	rel  string
	keys [][]string
}{
	{".claude.json", claudeJSONKeys},
}

// maxGuardedSize bounds the file fence keeps in memory; a larger one is
// not guarded (and says so).
const maxGuardedSize = 64 << 20

// agentConfigGuard is one guarded file: its directory held open, and
// what it held before the run.
type agentConfigGuard struct {
	name   string // as the user knows it: ~/.claude.json
	file   string // its name in dirfd
	dirfd  int
	keys   [][]string
	before []byte
	mode   uint32 // permission bits before the run
	uid    uint32
	gid    uint32
	debug  bool // say under -d that nothing changed
}

// agentConfigGuards are the guards of one run.
type agentConfigGuards []*agentConfigGuard

// guardAgentConfigs reads, before the run, every guarded file the policy
// lets the command write, and says under -d what it keeps. A file that
// is a link or not a regular file is not guarded, with a warning: fence
// reads and writes back only the file itself.
func guardAgentConfigs(pol *policy.Policy, debug bool, stderr io.Writer) agentConfigGuards {
	if pol.Home == "" {
		return nil
	}
	var out agentConfigGuards
	for _, c := range guardedConfigs {
		p := path.Join(pol.Home, c.rel)
		if !pol.CheckPath("write", p, p).Allowed {
			continue
		}
		g, err := newAgentConfigGuard(pol.Home, c.rel, c.keys)
		switch {
		case errors.Is(err, unix.ENOENT):
			if debug {
				fmt.Fprintf(stderr, "fence: debug: guard: %s does not exist: nothing to keep (the sandbox cannot create it)\n", "~/"+c.rel)
			}
		case err != nil:
			fmt.Fprintf(stderr, "fence: warning: not guarding %s, which the policy makes writable: %v; an MCP server or a trust the command writes there holds for the agent's next run on the host\n", "~/"+c.rel, err)
		default:
			if debug {
				fmt.Fprintf(stderr, "fence: debug: guard: %s: keeping %d guarded values to restore after the run\n", g.name, len(parseConfigDoc(g.before, g.keys).values))
			}
			g.debug = debug
			out = append(out, g)
		}
	}
	return out
}

// newAgentConfigGuard opens home and reads rel in it.
func newAgentConfigGuard(home, rel string, keys [][]string) (*agentConfigGuard, error) {
	if strings.Contains(rel, "/") {
		return nil, fmt.Errorf("%q: not a name in $HOME", rel)
	}
	dirfd, err := unix.Open(home, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %q: %w", home, err)
	}
	g := &agentConfigGuard{name: "~/" + rel, file: rel, dirfd: dirfd, keys: keys}
	content, st, err := g.read()
	if err != nil {
		unix.Close(dirfd)
		return nil, err
	}
	g.before, g.mode, g.uid, g.gid = content, st.Mode&0o777, st.Uid, st.Gid
	return g, nil
}

// read reads the file, never through a link, and only a regular file of
// at most maxGuardedSize.
func (g *agentConfigGuard) read() ([]byte, unix.Stat_t, error) {
	var st unix.Stat_t
	fd, err := unix.Openat(g.dirfd, g.file, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		if err == unix.ELOOP {
			return nil, st, errors.New("it is a symlink, and fence reads and writes back only the file itself")
		}
		return nil, st, err
	}
	f := os.NewFile(uintptr(fd), g.name)
	defer f.Close()
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, st, fmt.Errorf("fstat: %w", err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, st, errors.New("it is not a regular file")
	}
	content, err := io.ReadAll(io.LimitReader(f, maxGuardedSize+1))
	if err != nil {
		return nil, st, fmt.Errorf("read: %w", err)
	}
	if len(content) > maxGuardedSize {
		return nil, st, fmt.Errorf("it is larger than %d MiB", maxGuardedSize>>20)
	}
	return content, st, nil
}

// check runs every guard after the run, and closes them.
func (gs agentConfigGuards) check(stderr io.Writer) {
	for _, g := range gs {
		g.check(stderr)
	}
	gs.close()
}

// close lets go of the directories the guards hold.
func (gs agentConfigGuards) close() {
	for _, g := range gs {
		if g.dirfd >= 0 {
			unix.Close(g.dirfd)
			g.dirfd = -1
		}
	}
}

// restoreAttempts bounds how often fence reads the file again when it
// changed between fence's read and its replace (the host's own agent,
// writing it meanwhile).
const restoreAttempts = 3

// check compares the file with what it held before the run, restores
// what the run should not have changed, and says so; when it cannot, it
// says that louder, with the key paths.
func (g *agentConfigGuard) check(stderr io.Writer) {
	var last restoredConfig
	var err error
	for range restoreAttempts {
		var done bool
		last, done, err = g.restoreOnce()
		if done {
			break
		}
	}
	switch {
	case err != nil:
		what := "the keys that make the agent on the host run code or trust a directory"
		if len(last.changes) > 0 {
			what = changeList(last.changes)
		}
		fmt.Fprintf(stderr, "fence: error: could not restore %s after the run: %v; the run changed %s, which the agent on the host trusts: fix them by hand before it runs outside fence\n", g.name, err, what)
	case last.content == nil:
		if g.debug {
			fmt.Fprintf(stderr, "fence: debug: guard: %s: its guarded keys are as they were before the run\n", g.name)
		}
	case last.whole != "":
		changed := ""
		if len(last.changes) > 0 {
			changed = " (guarded keys changed: " + changeList(last.changes) + ")"
		}
		fmt.Fprintf(stderr, "fence: warning: restored %s whole, as it was before the run: %s%s; the agent on the host trusts what it holds\n", g.name, last.whole, changed)
	default:
		fmt.Fprintf(stderr, "fence: warning: the run changed %s in %s, which make the agent on the host start programs, approve tools or trust a directory: restored as they were before the run; the run's other changes to it are kept\n", changeList(last.changes), g.name)
	}
}

// restoreOnce reads the file, works out what to write back, and writes
// it while the file is still what it read. done is false when the file
// changed meanwhile (try again).
func (g *agentConfigGuard) restoreOnce() (r restoredConfig, done bool, err error) {
	after, st, rerr := g.read()
	switch {
	case rerr == nil:
		r = restoreGuarded(g.keys, g.before, after)
	case errors.Is(rerr, unix.ENOENT):
		r = restoredConfig{content: g.before, whole: "the run removed it"}
	case unix.Fstatat(g.dirfd, g.file, &st, unix.AT_SYMLINK_NOFOLLOW) != nil:
		return r, true, fmt.Errorf("read it again: %w", rerr)
	case st.Mode&unix.S_IFMT == unix.S_IFREG:
		r = restoredConfig{content: g.before, whole: fmt.Sprintf("fence could not read it back (%v)", rerr)}
	default:
		r = restoredConfig{content: g.before, whole: "the run left " + fileKind(st.Mode) + " in its place"}
	}
	if r.content == nil {
		return r, true, nil
	}
	done, err = g.replace(r.content, st, after, rerr == nil)
	return r, done, err
}

// fileKind names what a mode is.
func fileKind(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFLNK:
		return "a symlink"
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFREG:
		return "a regular file"
	}
	return "a special file"
}

// replace writes content to a new file beside the guarded one (mode and
// owner as before the run) and renames it over the guarded one, when
// that is still what fence read: seen (when regular, with content
// after), or nothing. A directory in its place is moved aside first.
// Inside a fence sandbox that binds the file in a read-only home, the
// content is rewritten in place instead, the one change that sandbox
// lets any run make.
func (g *agentConfigGuard) replace(content []byte, seen unix.Stat_t, after []byte, regular bool) (done bool, err error) {
	tmp, err := g.writeTemp(content)
	if err != nil && regular && errors.Is(err, unix.EROFS) {
		// This fence runs in a sandbox that keeps the directory
		// read-only and binds the file writable: only its content can
		// change.
		if !g.unchanged(seen, after, regular) {
			return false, errors.New("it kept changing while fence read it")
		}
		return true, g.writeInPlace(content, seen)
	}
	if err != nil {
		return true, err
	}
	if !g.unchanged(seen, after, regular) {
		unix.Unlinkat(g.dirfd, tmp, 0)
		return false, errors.New("it kept changing while fence read it")
	}
	if regular || seen.Mode&unix.S_IFMT != unix.S_IFDIR {
		err = unix.Renameat(g.dirfd, tmp, g.dirfd, g.file)
	} else {
		err = g.moveAsideDir(tmp)
	}
	if err != nil {
		unix.Unlinkat(g.dirfd, tmp, 0)
		if regular && err == unix.EBUSY {
			// The file is a mount point (a sandbox this fence runs in
			// binds it): only its content can change.
			return true, g.writeInPlace(content, seen)
		}
		return true, fmt.Errorf("rename over it: %w", err)
	}
	unix.Fsync(g.dirfd)
	return true, nil
}

// writeInPlace rewrites the guarded file's content, when it is still
// the file seen.
func (g *agentConfigGuard) writeInPlace(content []byte, seen unix.Stat_t) error {
	fd, err := unix.Openat(g.dirfd, g.file, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open it to write in place: %w", err)
	}
	f := os.NewFile(uintptr(fd), g.name)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Dev != seen.Dev || st.Ino != seen.Ino {
		return errors.New("it changed while fence wrote it back")
	}
	if err := f.Truncate(0); err != nil {
		return fmt.Errorf("write in place: %w", err)
	}
	if _, err := f.WriteAt(content, 0); err != nil {
		return fmt.Errorf("write in place: %w", err)
	}
	unix.Fchmod(fd, g.mode) // the mode is the outer run's to keep
	return f.Sync()
}

// moveAsideDir moves the directory in the guarded file's place aside
// (name.fence-quarantine-STAMP) and renames tmp to the file's name.
func (g *agentConfigGuard) moveAsideDir(tmp string) error {
	aside := g.file + ".fence-quarantine-" + randomSuffix()
	if err := unix.Renameat2(g.dirfd, g.file, g.dirfd, aside, unix.RENAME_NOREPLACE); err != nil {
		return fmt.Errorf("move the directory aside: %w", err)
	}
	return unix.Renameat2(g.dirfd, tmp, g.dirfd, g.file, unix.RENAME_NOREPLACE)
}

// unchanged reports whether the guarded file is still what fence read:
// the same entry (inode, size, change time) and, for a regular file, the
// same content; or, when it was missing, still missing.
func (g *agentConfigGuard) unchanged(seen unix.Stat_t, after []byte, regular bool) bool {
	var now unix.Stat_t
	if err := unix.Fstatat(g.dirfd, g.file, &now, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err == unix.ENOENT && seen.Ino == 0
	}
	if now.Dev != seen.Dev || now.Ino != seen.Ino || now.Size != seen.Size || now.Ctim != seen.Ctim || now.Mode != seen.Mode {
		return false
	}
	if !regular {
		return true
	}
	again, _, err := g.read()
	return err == nil && string(again) == string(after)
}

// writeTemp writes content to a new file in the guarded file's
// directory, with the mode and owner the file had before the run, and
// returns its name.
func (g *agentConfigGuard) writeTemp(content []byte) (string, error) {
	name := g.file + ".fence-restore-" + randomSuffix()
	fd, err := unix.Openat(g.dirfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return "", fmt.Errorf("create a file beside it: %w", err)
	}
	f := os.NewFile(uintptr(fd), name)
	err = writeKept(f, content, g.mode, g.uid, g.gid)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		unix.Unlinkat(g.dirfd, name, 0)
		return "", err
	}
	return name, nil
}

// writeKept writes content to f, gives it mode and, when it is not
// already theirs, uid and gid, and syncs it.
func writeKept(f *os.File, content []byte, mode, uid, gid uint32) error {
	if _, err := f.Write(content); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return fmt.Errorf("fstat: %w", err)
	}
	if st.Uid != uid || st.Gid != gid {
		if err := unix.Fchown(int(f.Fd()), int(uid), int(gid)); err != nil {
			return fmt.Errorf("give it its owner back: %w", err)
		}
	}
	if err := unix.Fchmod(int(f.Fd()), mode); err != nil {
		return fmt.Errorf("give it its mode back: %w", err)
	}
	return f.Sync()
}

// randomSuffix is a name part no one can know before.
func randomSuffix() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}
