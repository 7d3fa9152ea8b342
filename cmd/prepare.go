package cmd

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"runtime"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/policy/inputs"
	"github.com/fence-sandbox/fence/sandbox"
)

// The sandbox makes writable only what exists when it starts: a cache
// directory an allowWrite rule names that a fresh home lacks (~/.cache,
// ~/.npm, ~/go/pkg/mod) would stay read-only, and the first `go test` or
// `npm install` fail. So, before the run, fence creates the directories
// that such rules name, as the user, when all of this holds:
//
//   - the rule names a literal path (no glob) strictly below $HOME, and
//     $HOME is a directory the user running fence owns;
//   - the policy lets the command write that path (no denyRead, denyWrite
//     or protection covers it);
//   - every part of the path that exists, from $HOME down, is a real
//     directory: fence never follows a symlink while creating, since an
//     earlier run may have planted one where it could write;
//   - it is not below ~/Library, which is macOS's.
//
// Each directory it makes, the path and the ones on the way to it, gets
// mode 0700. `fence check` answers from the same judgment without
// creating anything. This is for Linux only: Seatbelt's rules cover
// paths that do not exist yet, so on macOS the tools create their own.

// homeDir is a directory a rule names below $HOME that does not exist.
type homeDir struct {
	path string      // as the rule names it, absolute
	rule policy.Rule // the allowWrite rule
	// skip, when not empty, says why fence does not create it; warn
	// says that a person should hear of it without -d.
	skip string
	warn bool
}

// missingHomeDirs judges every literal allowWrite rule below pol.Home
// whose path does not exist: the ones fence creates, and why it leaves
// the others alone.
func missingHomeDirs(pol *policy.Policy) []homeDir {
	if runtime.GOOS != "linux" {
		return nil // Seatbelt's rules cover paths that do not exist yet
	}
	var out []homeDir
	home := pol.Home
	for _, r := range pol.Write {
		if r.Glob || home == "" || !strings.HasPrefix(r.Pattern, home+"/") {
			continue
		}
		if _, err := inputs.Lstat(r.Pattern); err == nil || !errors.Is(err, fs.ErrNotExist) {
			continue // there, or not ours to judge
		}
		d := homeDir{path: r.Pattern, rule: r, skip: "~/Library is macOS's, and Linux tools do not use it"}
		if !under(r.Pattern, path.Join(home, "Library")) {
			d = judgeHomeDir(pol, r)
		}
		out = append(out, d)
	}
	return out
}

// judgeHomeDir says whether fence creates r's path, which does not exist.
func judgeHomeDir(pol *policy.Policy, r policy.Rule) homeDir {
	d := homeDir{path: r.Pattern, rule: r}
	fi, err := inputs.Stat(pol.Home)
	switch {
	case err != nil || !fi.IsDir():
		d.skip = fmt.Sprintf("$HOME %q is not a directory", pol.Home)
		return d
	case !ownedBy(fi, os.Geteuid()):
		d.skip = fmt.Sprintf("$HOME %q is not this user's (uid %d)", pol.Home, os.Geteuid())
		return d
	}
	if policy.IsAgentFile(pol.Home, r.Pattern) {
		d.skip = "it is a file the agent creates on its first run on the host, not a directory"
		return d
	}
	if dec := pol.CheckPath("write", r.Pattern, r.Pattern); !dec.Allowed {
		d.skip = "the policy does not let the command write it (" + dec.Rule + ")"
		return d
	}
	p := pol.Home
	for _, name := range strings.Split(strings.TrimPrefix(r.Pattern, pol.Home+"/"), "/") {
		p = path.Join(p, name)
		fi, err := inputs.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return d
		case err != nil:
			d.skip, d.warn = err.Error(), true
		case fi.Mode()&fs.ModeSymlink != 0:
			d.skip, d.warn = fmt.Sprintf("%q is a symlink, and fence creates directories only through real ones (a sandboxed run may have planted it)", p), true
		case !fi.IsDir():
			d.skip, d.warn = fmt.Sprintf("%q is not a directory", p), true
		}
		if d.skip != "" {
			return d
		}
	}
	return d
}

func ownedBy(fi fs.FileInfo, uid int) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == uid
}

// createHomeDirs creates the missing directories the policy's rules name
// below $HOME (see missingHomeDirs), saying with debug what it made and
// why, and warning of what it would not make.
func createHomeDirs(pol *policy.Policy, debug bool, stderr io.Writer) {
	for _, d := range missingHomeDirs(pol) {
		if d.skip != "" {
			if d.warn || debug {
				level := "debug: prepare:"
				if d.warn {
					level = "warning:"
				}
				fmt.Fprintf(stderr, "fence: %s not creating %s for %s: %s\n", level, d.path, ruleName(d.rule), d.skip)
			}
			continue
		}
		created, err := mkdirBelow(pol.Home, strings.TrimPrefix(d.path, pol.Home+"/"), os.Geteuid())
		if debug {
			for _, c := range created {
				fmt.Fprintf(stderr, "fence: debug: prepare: created %s (mode 0700) for %s\n", c, ruleName(d.rule))
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "fence: warning: not creating %s for %s: %v; the sandbox leaves it read-only\n", d.path, ruleName(d.rule), err)
		}
	}
}

// ruleName is a rule as the user wrote it, with where.
func ruleName(r policy.Rule) string {
	if r.Source == "" {
		return r.Origin
	}
	return r.Origin + " (" + r.Source + ")"
}

// mkdirBelow creates the directories of rel, a relative slash-separated
// path, below base, which must be a directory uid owns, and returns the
// ones it created. It walks one component at a time with openat and
// mkdirat, never following a symlink below base (O_NOFOLLOW), so that a
// link planted on the way cannot send it elsewhere; a part that is a
// symlink or not a directory stops it with an error naming that part.
func mkdirBelow(base, rel string, uid int) (created []string, err error) {
	fd, err := unix.Open(base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0) // observed: creation; a plan made while it changed the disk is not kept
	if err != nil {
		return nil, fmt.Errorf("open %q: %w", base, err)
	}
	defer func() { unix.Close(fd) }()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("fstat %q: %w", base, err)
	}
	if int(st.Uid) != uid {
		return nil, fmt.Errorf("%q is not owned by uid %d", base, uid)
	}
	p := base
	for _, name := range strings.Split(rel, "/") {
		if name == "" || name == "." || name == ".." {
			return created, fmt.Errorf("%q: not a plain relative path", rel)
		}
		p = path.Join(p, name)
		next, made, err := openOrMkdir(fd, name, p)
		if made {
			created = append(created, p)
		}
		if err != nil {
			return created, err
		}
		unix.Close(fd)
		fd = next
	}
	return created, nil
}

// openOrMkdir opens the directory name in dirfd without following a
// symlink, creating it (mode 0700) first when it does not exist; p is
// its whole path, for errors. made says that this call created it.
func openOrMkdir(dirfd int, name, p string) (fd int, made bool, err error) {
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	for range 2 {
		fd, err = unix.Openat(dirfd, name, flags, 0) // observed: creation; a plan made while it changed the disk is not kept
		if err == nil {
			return fd, made, nil
		}
		if err != unix.ENOENT || made {
			break
		}
		switch err = unix.Mkdirat(dirfd, name, 0o700); err {
		case nil:
			made = true
		case unix.EEXIST: // made meanwhile: open what is there
		default:
			return -1, false, fmt.Errorf("mkdirat %q: %w", p, err)
		}
	}
	if err != unix.ELOOP && err != unix.ENOTDIR {
		return -1, made, fmt.Errorf("open %q: %w", p, err)
	}
	// O_NOFOLLOW with O_DIRECTORY fails on a link with either errno.
	var st unix.Stat_t
	if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK { // observed: creation; a plan made while it changed the disk is not kept
		return -1, made, fmt.Errorf("%q is a symlink, and fence creates directories only through real ones", p)
	}
	return -1, made, fmt.Errorf("%q is not a directory", p)
}

// createdNote adjusts the decision on writing path to what the run will
// do when the rules that allow it name paths that do not exist: the
// sandbox makes writable only what exists at start. If fence creates
// one of them at the start of a run, the write is allowed and the
// decision says so; if none exists nor will, the write is denied, with
// why. Below /tmp the sandbox's own /tmp takes the write anyway; on
// macOS, Seatbelt's rules cover what does not exist yet.
func createdNote(pol *policy.Policy, d policy.Decision) policy.Decision {
	if runtime.GOOS != "linux" || !d.Allowed || d.Access != "write" || under(d.Path, "/tmp") {
		return d
	}
	rules := pol.WritableBy(d.Path)
	if len(rules) == 0 {
		return d // allowed by a default, not by a rule
	}
	var missing []policy.Rule
	for _, r := range rules {
		if _, err := inputs.Stat(r.Pattern); r.Glob || err == nil {
			return d
		}
		missing = append(missing, r)
	}
	judged := missingHomeDirs(pol)
	for _, r := range missing {
		for _, h := range judged {
			if h.path == r.Pattern && h.skip == "" {
				d.Note = fmt.Sprintf("%s does not exist yet: fence creates it (mode 0700) at the start of a run", r.Pattern)
				return d
			}
		}
	}
	r := missing[0]
	why := "fence creates missing directories only below $HOME"
	for _, h := range judged {
		if h.path == r.Pattern {
			why = "fence does not create it: " + h.skip
		}
	}
	d.Allowed, d.Rule, d.Source = false, r.Key, r.Source
	if r.Text != "" {
		d.Pattern = &r.Text
	}
	d.Suggestion = fmt.Sprintf("%s does not exist, and the sandbox makes writable only what exists at start; %s; create it before the run", r.Pattern, why)
	return d
}

// hostRuntimeDir makes the private XDG_RUNTIME_DIR in the host's /tmp
// for a plan that asks for one there (sandbox.Mounts.RuntimeDirHost: a
// rule shares the host's /tmp), with a name no one can know before, mode
// 0700, kept in rt, and returns what removes it after the run
// (removeMade).
func hostRuntimeDir(plan *sandbox.Plan, rt *sandbox.Runtime) (remove func(), err error) {
	if !plan.Mounts.RuntimeDirHost {
		return func() {}, nil
	}
	dir, err := os.MkdirTemp("/tmp", "fence-runtime-")
	if err != nil {
		return nil, fmt.Errorf("create the private XDG_RUNTIME_DIR: %w", err)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0) // observed: the run's own directory, made after the plan
	if err != nil {
		os.Remove(dir)
		return nil, fmt.Errorf("open the private XDG_RUNTIME_DIR: %w", err)
	}
	rt.RuntimeDir = dir
	return func() { removeMade(dir, fd, os.Geteuid()) }, nil
}

// printTempEnvDebug says, for -d, which of TMPDIR and XDG_RUNTIME_DIR
// the plan (with what the run chose, rt) changed from what fence
// inherited, and to what.
func printTempEnvDebug(w io.Writer, plan *sandbox.Plan, rt *sandbox.Runtime) {
	env := rt.Env(plan)
	for _, name := range []string{"TMPDIR", "XDG_RUNTIME_DIR"} {
		was, set := os.LookupEnv(name)
		now, ok := sandbox.LookupEnv(env, name)
		switch {
		case !set || was == now && ok || slices.Contains(plan.EnvRemoved, name):
		case ok:
			fmt.Fprintf(w, "fence: debug: env: %s=%s, since the inherited %q is not usable inside\n", name, now, was)
		default:
			fmt.Fprintf(w, "fence: debug: env: %s unset, since the inherited %q is not usable inside and there is no private place for it\n", name, was)
		}
	}
}
