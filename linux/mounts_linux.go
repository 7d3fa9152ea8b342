package linux

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/sandbox"
)

// MountError is a failed mount step, with what was being mounted where.
type MountError struct {
	Op     string
	Source string
	Target string
	Flags  uintptr
	Err    error
}

func (e *MountError) Error() string {
	return fmt.Sprintf("%s %q on %q (flags %#x): %v", e.Op, e.Source, e.Target, e.Flags, e.Err)
}

func (e *MountError) Unwrap() error { return e.Err }

// staging is where the new root is assembled before pivot_root. It is a
// tmpfs mounted over /tmp of the init's private mount namespace, after
// every source below /tmp has been captured as a detached mount.
const staging = "/tmp"

var minimalDevices = []string{"null", "zero", "full", "random", "urandom", "tty"}

// rootBuilder assembles the sandbox's filesystem view.
type rootBuilder struct {
	plan  *sandbox.Plan
	root  string         // where the new root is attached while it is built
	trees map[string]int // bind source path -> detached mount fd
	sizes TmpfsSizes     // of the private /tmp and /dev/shm
}

// buildRoot builds the new root and pivots into it.
func buildRoot(plan *sandbox.Plan) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return &MountError{Op: "make-rprivate", Target: "/", Flags: unix.MS_REC | unix.MS_PRIVATE, Err: err}
	}
	b := &rootBuilder{plan: plan, root: filepath.Join(staging, "root"), trees: map[string]int{}}
	defer b.closeTrees()
	if plan.Mounts.PrivateTmp || plan.Mounts.Devices != "host" {
		b.sizes = SizeTmpfs(plan.Limits)
	}
	steps := []func() error{b.capture, b.stage, b.tmp, b.runtimeDir, b.dev, b.proc, b.binds, b.masks, b.pivot}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// capture takes detached copies of the host tree (made read-only) and of
// every bind source, before the staging tmpfs hides anything.
func (b *rootBuilder) capture() error {
	host, err := cloneTree("/", true, true)
	if err != nil {
		return err
	}
	b.trees[""] = host
	type source struct {
		path             string
		write, recursive bool
		resolved         bool // the plan resolved its links: none may be on its way now
	}
	var sources []source
	for _, bind := range b.plan.Mounts.Binds {
		sources = append(sources, source{bind.Path, bind.Write, true, true})
	}
	for _, p := range b.devSources() {
		sources = append(sources, source{p, true, p == "/dev", false})
	}
	for _, s := range sources {
		key := treeKey(s.path, s.write)
		if _, ok := b.trees[key]; ok {
			continue
		}
		if _, err := os.Stat(s.path); err != nil && strings.HasPrefix(s.path, "/dev/") {
			continue // a device the host does not have
		}
		clone := cloneTree
		if s.resolved {
			clone = cloneResolvedTree
		}
		fd, err := clone(s.path, !s.write, s.recursive)
		if err != nil {
			return err
		}
		b.trees[key] = fd
	}
	return nil
}

// cloneResolvedTree is cloneTree for a path the plan resolved: if a link
// has appeared on its way since (one a user who could change a directory
// there swapped in), the run fails instead of binding what it leads to.
func cloneResolvedTree(path string, readOnly, recursive bool) (int, error) {
	how := &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS}
	dir, err := unix.Openat2(unix.AT_FDCWD, path, how)
	if err != nil {
		switch {
		case errors.Is(err, unix.ELOOP):
			err = fmt.Errorf("%w: a symlink is on its way now, where there was none when fence planned the run", err)
		case errors.Is(err, unix.ENOSYS):
			// Every kernel with the Landlock fence needs has openat2 (5.6):
			// a filter of a container refuses it, and binding by name
			// would follow a link swapped in since the plan.
			err = fmt.Errorf("%w: openat2 is refused here (a container's seccomp profile?), and without it a link swapped in since the plan would be followed", err)
		}
		return -1, &MountError{Op: "openat2 RESOLVE_NO_SYMLINKS", Source: path, Err: err}
	}
	defer unix.Close(dir)
	return cloneTreeAt(dir, path, readOnly, recursive)
}

func treeKey(path string, write bool) string {
	if write {
		return "rw:" + path
	}
	return "ro:" + path
}

func (b *rootBuilder) devSources() []string {
	if b.plan.Mounts.Devices == "host" {
		return []string{"/dev"}
	}
	var out []string
	for _, d := range minimalDevices {
		out = append(out, "/dev/"+d)
	}
	return append(out, b.plan.Mounts.DevAllow...)
}

// cloneTree returns a detached copy of the mount tree at path.
func cloneTree(path string, readOnly, recursive bool) (int, error) {
	return cloneTreeAt(unix.AT_FDCWD, path, readOnly, recursive)
}

// cloneTreeAt is cloneTree of the file dir holds (path naming it), or of
// path itself with AT_FDCWD.
func cloneTreeAt(dir int, path string, readOnly, recursive bool) (int, error) {
	flags := uint(unix.OPEN_TREE_CLONE | unix.OPEN_TREE_CLOEXEC)
	if recursive {
		flags |= unix.AT_RECURSIVE
	}
	at := path
	if dir != unix.AT_FDCWD {
		flags |= unix.AT_EMPTY_PATH
		at = ""
	}
	fd, err := unix.OpenTree(dir, at, flags)
	if err != nil {
		return -1, &MountError{Op: "open_tree", Source: path, Flags: uintptr(flags), Err: err}
	}
	if readOnly {
		attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
		if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, attr); err != nil {
			unix.Close(fd)
			return -1, &MountError{Op: "mount_setattr rdonly", Source: path, Err: err}
		}
	}
	return fd, nil
}

func (b *rootBuilder) closeTrees() {
	for _, fd := range b.trees {
		unix.Close(fd)
	}
}

// attach moves a detached tree onto target, creating target when it is
// missing (only ever inside a tmpfs fence made).
func attach(fd int, source, target string, dir bool) error {
	if err := ensureTarget(target, dir); err != nil {
		return err
	}
	if err := unix.MoveMount(fd, "", unix.AT_FDCWD, target, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return &MountError{Op: "move_mount", Source: source, Target: target, Err: err}
	}
	return nil
}

func ensureTarget(target string, dir bool) error {
	if _, err := os.Lstat(target); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return fmt.Errorf("create mount point %q: %w", target, err)
	}
	if dir {
		return os.Mkdir(target, 0o755)
	}
	f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("create mount point %q: %w", target, err)
	}
	return f.Close()
}

// mkdirsNoFollow makes dir and the directories on its way below top
// (which exists), refusing one that is a symlink.
func mkdirsNoFollow(top, dir string) error {
	rel, err := filepath.Rel(top, dir)
	if err != nil || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("%q is not below %q", dir, top)
	}
	cur := top
	for _, name := range strings.Split(rel, "/") {
		if name == "." {
			continue
		}
		cur = filepath.Join(cur, name)
		fi, err := os.Lstat(cur)
		switch {
		case os.IsNotExist(err):
			if err := os.Mkdir(cur, 0o755); err != nil {
				return err
			}
		case err != nil:
			return err
		case !fi.IsDir():
			return fmt.Errorf("%q is not a directory (a link on the way is never followed)", cur)
		}
	}
	return nil
}

func mountFS(fstype, target string, flags uintptr, data string) error {
	if err := unix.Mount(fstype, target, fstype, flags, data); err != nil {
		return &MountError{Op: "mount " + fstype, Source: fstype, Target: target, Flags: flags, Err: err}
	}
	return nil
}

func (b *rootBuilder) stage() error {
	if err := mountFS("tmpfs", staging, unix.MS_NOSUID|unix.MS_NODEV, "mode=0700"); err != nil {
		return err
	}
	return attach(b.trees[""], "/", b.root, true)
}

func (b *rootBuilder) at(p string) string { return filepath.Join(b.root, p) }

// tmp mounts the private /tmp, of limits.tmpSizeMB or the default share
// of memory: a write past it fails with ENOSPC.
func (b *rootBuilder) tmp() error {
	if !b.plan.Mounts.PrivateTmp {
		return nil
	}
	if err := mountFS("tmpfs", b.at("/tmp"), unix.MS_NOSUID|unix.MS_NODEV, tmpfsData("1777", b.sizes.TmpMB)); err != nil {
		return err
	}
	return b.tmpLinks()
}

// tmpLinks makes the plan's symlinks in the private /tmp, as they are on
// the host, before any bind lands there: each lies at its canonical
// place, outside every bind, so nothing on its way is a link, and the
// directories on its way are made without following one (an absolute
// link followed before the pivot would lead to the host's root).
func (b *rootBuilder) tmpLinks() error {
	for _, l := range b.plan.Mounts.Links {
		at := b.at(l.Path)
		if err := mkdirsNoFollow(b.at("/tmp"), filepath.Dir(at)); err != nil {
			return fmt.Errorf("create the directory of the link %q: %w (%s)", l.Path, err, l.Why)
		}
		if err := os.Symlink(l.Target, at); err != nil {
			return fmt.Errorf("make the link %q to %q in the private /tmp: %w (%s)", l.Path, l.Target, err, l.Why)
		}
	}
	return nil
}

func (b *rootBuilder) dev() error {
	if b.plan.Mounts.Devices == "host" {
		return attach(b.trees[treeKey("/dev", true)], "/dev", b.at("/dev"), true)
	}
	dev := b.at("/dev")
	if err := mountFS("tmpfs", dev, unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755"); err != nil {
		return err
	}
	for _, p := range b.devSources() {
		fi, err := os.Stat(p)
		if err != nil {
			continue // a device the host does not have
		}
		if err := attach(b.trees[treeKey(p, true)], p, b.at(p), fi.IsDir()); err != nil {
			return err
		}
	}
	if err := os.Mkdir(filepath.Join(dev, "pts"), 0o755); err != nil {
		return err
	}
	if err := mountFS("devpts", filepath.Join(dev, "pts"), unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return err
	}
	bindTerminal(dev) // the caller's, for the command's terminal to have a name
	if err := os.Mkdir(filepath.Join(dev, "shm"), 0o1777); err != nil {
		return err
	}
	if err := mountFS("tmpfs", filepath.Join(dev, "shm"), unix.MS_NOSUID|unix.MS_NODEV, tmpfsData("1777", b.sizes.ShmMB)); err != nil {
		return err
	}
	links := map[string]string{"ptmx": "pts/ptmx", "fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"}
	for name, to := range links {
		if err := os.Symlink(to, filepath.Join(dev, name)); err != nil {
			return fmt.Errorf("create /dev/%s: %w", name, err)
		}
	}
	return unix.Mount("", dev, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NOEXEC, "")
}

func (b *rootBuilder) proc() error {
	return mountFS("proc", b.at("/proc"), unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
}

func (b *rootBuilder) binds() error {
	for _, bind := range b.plan.Mounts.Binds {
		fi, err := os.Stat(b.at(bind.Path))
		dir := err == nil && fi.IsDir()
		if err != nil {
			// Only binds into the private /tmp lack a target; learn the
			// kind from the captured tree.
			var st unix.Stat_t
			if err := unix.Fstat(b.trees[treeKey(bind.Path, bind.Write)], &st); err != nil {
				return fmt.Errorf("stat %q: %w", bind.Path, err)
			}
			dir = st.Mode&unix.S_IFMT == unix.S_IFDIR
		}
		if err := attach(b.trees[treeKey(bind.Path, bind.Write)], bind.Path, b.at(bind.Path), dir); err != nil {
			return fmt.Errorf("%w (rule: %s)", err, bind.Why)
		}
	}
	return nil
}

// masks covers every denied path with something empty and unreadable:
// a read-only tmpfs for a directory, an empty mode-0 file for a file.
func (b *rootBuilder) masks() error {
	empty := filepath.Join(staging, "empty")
	for _, m := range b.plan.Mounts.Masks {
		target := b.at(m.Path)
		if m.Dir {
			if err := mountFS("tmpfs", target, unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=000,size=4k"); err != nil {
				return fmt.Errorf("%w (rule: %s)", err, m.Why)
			}
			continue
		}
		if fi, err := os.Lstat(target); m.Socket && (err != nil || fi.Mode()&os.ModeSocket == 0) {
			// Gone since the plan, no socket (a name in the kernel's
			// table that the init can read and fence could not), or on
			// a way the init cannot search (a directory of a user the
			// namespace does not map, mode 0700): the command, with less
			// than the init, cannot reach a socket there either.
			continue
		}
		if _, err := os.Lstat(empty); err != nil {
			if err := os.WriteFile(empty, nil, 0); err != nil {
				return fmt.Errorf("create mask file: %w", err)
			}
		}
		fd, err := cloneTree(empty, true, false)
		if err != nil {
			return err
		}
		err = attach(fd, empty, target, false)
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("%w (rule: %s)", err, m.Why)
		}
	}
	return nil
}

// pivot makes the new root the root, and detaches the old one.
func (b *rootBuilder) pivot() error {
	if err := os.Chdir(b.root); err != nil {
		return err
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		if !errors.Is(err, unix.EINVAL) {
			return &MountError{Op: "pivot_root", Target: b.root, Err: err}
		}
		return moveRoot()
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return &MountError{Op: "umount old root", Target: "/", Err: err}
	}
	return os.Chdir("/")
}

// moveRoot is the fallback when / cannot be pivoted (an initramfs root).
func moveRoot() error {
	if err := unix.Mount(".", "/", "", unix.MS_MOVE, ""); err != nil {
		return &MountError{Op: "move new root", Source: ".", Target: "/", Flags: unix.MS_MOVE, Err: err}
	}
	if err := unix.Chroot("."); err != nil {
		return fmt.Errorf("chroot: %w", err)
	}
	return os.Chdir("/")
}
