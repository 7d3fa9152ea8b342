package linux

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/sandbox"
)

// The lowering of the plan's mounts into steps of the sandbox program:
// the new root, built exactly as it was when a Go init built it. The
// host's tree and every bind source are captured as detached mounts (made
// read-only where the plan says) before a tmpfs over /tmp stages the new
// root; the private /tmp with its links, the runtime directory, /dev,
// /proc, the binds and the masks go onto it, and the root pivots.
//
// What the steps need to know of the filesystem they find it out
// themselves where the new root differs from the host's (a mount point
// that may be missing, a socket that may be gone); the rest (which device
// nodes the host has, the kind of a bind's source) the supervisor looks
// up while it lowers.

// rootSteps lowers the new root of plan.
type rootSteps struct {
	*program
	plan  *sandbox.Plan
	root  string
	trees map[string]int16 // bind source key (treeKey) -> slot of its detached mount
	sizes TmpfsSizes
	empty bool // the mask file is made
}

// lowerRoot appends the steps that build the new root of plan and pivot
// into it. The first step makes the mounts private: its EPERM is the
// sign of a user namespace that grants no capabilities.
func (p *program) lowerRoot(plan *sandbox.Plan) {
	p.sys(func(e unix.Errno) error {
		return &MountError{Op: "make-rprivate", Target: "/", Flags: unix.MS_REC | unix.MS_PRIVATE, Err: e}
	}, unix.SYS_MOUNT, p.cstr(""), p.cstr("/"), 0, unix.MS_REC|unix.MS_PRIVATE, 0)
	r := &rootSteps{program: p, plan: plan, root: filepath.Join(staging, "root"), trees: map[string]int16{}}
	if plan.Mounts.PrivateTmp || plan.Mounts.Devices != "host" {
		r.sizes = SizeTmpfs(plan.Limits)
	}
	r.capture()
	r.stage()
	r.tmp()
	r.runtimeDir()
	r.dev()
	r.proc()
	r.binds()
	r.masks()
	r.pivot()
	for _, s := range r.trees {
		p.closeSlot(s)
	}
}

func (r *rootSteps) at(p string) string { return filepath.Join(r.root, p) }

// capture takes detached copies of the host tree (made read-only) and of
// every bind source.
func (r *rootSteps) capture() {
	r.trees[""] = r.cloneTree("/", true, true)
	type source struct {
		path             string
		write, recursive bool
		resolved         bool // the plan resolved its links: none may be on its way now
	}
	var sources []source
	for _, bind := range r.plan.Mounts.Binds {
		sources = append(sources, source{bind.Path, bind.Write, true, true})
	}
	for _, d := range r.devSources() {
		sources = append(sources, source{d, true, d == "/dev", false})
	}
	for _, s := range sources {
		key := treeKey(s.path, s.write)
		if _, ok := r.trees[key]; ok {
			continue
		}
		if _, err := os.Stat(s.path); err != nil && strings.HasPrefix(s.path, "/dev/") {
			continue // a device the host does not have
		}
		if s.resolved {
			r.trees[key] = r.cloneResolvedTree(s.path, !s.write, s.recursive)
		} else {
			r.trees[key] = r.cloneTree(s.path, !s.write, s.recursive)
		}
	}
}

// cloneTree appends the steps that take a detached copy of the mount
// tree at path, and returns the slot that holds it.
func (r *rootSteps) cloneTree(path string, readOnly, recursive bool) int16 {
	flags := uintptr(unix.OPEN_TREE_CLONE | unix.OPEN_TREE_CLOEXEC)
	if recursive {
		flags |= unix.AT_RECURSIVE
	}
	out := r.slot()
	i := r.sys(func(e unix.Errno) error {
		return &MountError{Op: "open_tree", Source: path, Flags: flags, Err: e}
	}, unix.SYS_OPEN_TREE, atFDCWD, r.cstr(path), flags)
	r.steps[i].out = out
	r.setReadOnly(out, path, readOnly)
	return out
}

// cloneResolvedTree is cloneTree for a path the plan resolved: if a link
// has appeared on its way since (one a user who could change a directory
// there swapped in), the run fails instead of binding what it leads to.
func (r *rootSteps) cloneResolvedTree(path string, readOnly, recursive bool) int16 {
	how := &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS}
	dir := r.slot()
	i := r.sys(func(e unix.Errno) error {
		var err error = e
		switch e {
		case unix.ELOOP:
			err = fmt.Errorf("%w: a symlink is on its way now, where there was none when fence planned the run", e)
		case unix.ENOSYS:
			// Every kernel with the Landlock fence needs has openat2 (5.6):
			// a filter of a container refuses it, and binding by name
			// would follow a link swapped in since the plan.
			err = fmt.Errorf("%w: openat2 is refused here (a container's seccomp profile?), and without it a link swapped in since the plan would be followed", e)
		}
		return &MountError{Op: "openat2 RESOLVE_NO_SYMLINKS", Source: path, Err: err}
	}, unix.SYS_OPENAT2, atFDCWD, r.cstr(path), r.mem(how, unsafe.Pointer(how)), unsafe.Sizeof(*how))
	r.steps[i].out = dir
	flags := uintptr(unix.OPEN_TREE_CLONE | unix.OPEN_TREE_CLOEXEC | unix.AT_EMPTY_PATH)
	if recursive {
		flags |= unix.AT_RECURSIVE
	}
	out := r.slot()
	i = r.sys(func(e unix.Errno) error {
		return &MountError{Op: "open_tree", Source: path, Flags: flags, Err: e}
	}, unix.SYS_OPEN_TREE, 0, r.cstr(""), flags)
	r.steps[i].in[0], r.steps[i].out = dir, out
	r.setReadOnly(out, path, readOnly)
	r.closeSlot(dir)
	return out
}

func (r *rootSteps) setReadOnly(tree int16, path string, readOnly bool) {
	if !readOnly {
		return
	}
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	i := r.sys(func(e unix.Errno) error {
		return &MountError{Op: "mount_setattr rdonly", Source: path, Err: e}
	}, unix.SYS_MOUNT_SETATTR, 0, r.cstr(""), unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, r.mem(attr, unsafe.Pointer(attr)), unsafe.Sizeof(*attr))
	r.steps[i].in[0] = tree
}

// closeSlot appends the step that closes the descriptor of slot s.
func (p *program) closeSlot(s int16) {
	i := p.sys(errorf("close: %w"), unix.SYS_CLOSE)
	p.steps[i].in[0] = s
}

func (r *rootSteps) devSources() []string {
	if r.plan.Mounts.Devices == "host" {
		return []string{"/dev"}
	}
	var out []string
	for _, d := range minimalDevices {
		out = append(out, "/dev/"+d)
	}
	return append(out, r.plan.Mounts.DevAllow...)
}

// attach appends the steps that move the detached tree of slot tree onto
// target, creating target when it is missing (only ever inside a tmpfs
// fence made): a directory when dir (or, with dirOf, when the tree is
// one), else an empty file. why, when not empty, is the rule.
func (r *rootSteps) attach(tree int16, source, target string, dir, dirOf bool, why string) {
	r.ensureTarget(tree, target, dir, dirOf)
	i := r.sys(func(e unix.Errno) error {
		return withRule(&MountError{Op: "move_mount", Source: source, Target: target, Err: e}, why)
	}, unix.SYS_MOVE_MOUNT, 0, r.cstr(""), atFDCWD, r.cstr(target), unix.MOVE_MOUNT_F_EMPTY_PATH)
	r.steps[i].in[0] = tree
}

func withRule(err error, why string) error {
	if why == "" {
		return err
	}
	return fmt.Errorf("%w (rule: %s)", err, why)
}

// ensureTarget appends the steps that make target unless something is
// there: its directory and the ones on its way, then target, a directory
// when dir or, with dirOf, when the tree is one.
func (r *rootSteps) ensureTarget(tree int16, target string, dir, dirOf bool) {
	st := new(unix.Stat_t)
	there := r.sys(nil, sysFstatat, atFDCWD, r.cstr(target), r.mem(st, unsafe.Pointer(st)), unix.AT_SYMLINK_NOFOLLOW)
	r.steps[there].tolerate = errAny
	created := errorf("create mount point %q: %w", target)
	for _, d := range ancestors(filepath.Dir(target)) {
		i := r.sys(created, unix.SYS_MKDIRAT, atFDCWD, r.cstr(d), 0o755)
		r.steps[i].tolerate = uintptr(unix.EEXIST)
	}
	switch {
	case dirOf:
		kind := r.add(step{op: opIfDirFD}, created)
		r.steps[kind].in[0] = tree
		mk := r.sys(created, unix.SYS_MKDIRAT, atFDCWD, r.cstr(target), 0o755)
		r.steps[mk].skipOK = 2 // past the file's steps
		r.mkfile(target, created, 0o644)
		r.steps[kind].tolerate, r.steps[kind].skipErr = errMismatch, 1 // a file: past the mkdir
	case dir:
		r.sys(created, unix.SYS_MKDIRAT, atFDCWD, r.cstr(target), 0o755)
	default:
		r.mkfile(target, created, 0o644)
	}
	r.skipTo(there)
}

// mkfile appends the steps that create the empty file path, mode perm,
// and returns the index of the first.
func (p *program) mkfile(path string, why func(unix.Errno) error, perm uintptr) int {
	fd := p.slot()
	i := p.sys(why, unix.SYS_OPENAT, atFDCWD, p.cstr(path), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, perm)
	p.steps[i].out = fd
	p.closeSlot(fd)
	return i
}

// ancestors are the directories from / down to dir, / left out.
func ancestors(dir string) []string {
	var out []string
	for d := filepath.Clean(dir); d != "/" && d != "."; d = filepath.Dir(d) {
		out = append([]string{d}, out...)
	}
	return out
}

// mountFS appends the mount of a new fstype on target.
func (p *program) mountFS(fstype, target string, flags uintptr, data, why string) int {
	return p.sys(func(e unix.Errno) error {
		return withRule(&MountError{Op: "mount " + fstype, Source: fstype, Target: target, Flags: flags, Err: e}, why)
	}, unix.SYS_MOUNT, p.cstr(fstype), p.cstr(target), p.cstr(fstype), flags, p.cstr(data))
}

func (r *rootSteps) stage() {
	r.mountFS("tmpfs", staging, unix.MS_NOSUID|unix.MS_NODEV, "mode=0700", "")
	r.attach(r.trees[""], "/", r.root, true, false, "")
}

// tmp mounts the private /tmp, of limits.tmpSizeMB or the default share
// of memory: a write past it fails with ENOSPC.
func (r *rootSteps) tmp() {
	if !r.plan.Mounts.PrivateTmp {
		return
	}
	r.mountFS("tmpfs", r.at("/tmp"), unix.MS_NOSUID|unix.MS_NODEV, tmpfsData("1777", r.sizes.TmpMB), "")
	r.tmpLinks()
}

// tmpLinks makes the plan's symlinks in the private /tmp, as they are on
// the host, before any bind lands there: each lies at its canonical
// place, outside every bind, so nothing on its way is a link, and the
// directories on its way are made without following one (an absolute
// link followed before the pivot would lead to the host's root).
func (r *rootSteps) tmpLinks() {
	top := r.at("/tmp")
	for _, l := range r.plan.Mounts.Links {
		at := r.at(l.Path)
		rel, err := filepath.Rel(top, filepath.Dir(at))
		if err != nil || strings.HasPrefix(rel, "..") {
			r.fail(fmt.Errorf("create the directory of the link %q: %q is not below %q (%s)", l.Path, filepath.Dir(at), top, l.Why))
			continue
		}
		cur := top
		for _, name := range strings.Split(rel, "/") {
			if name == "." {
				continue
			}
			cur = filepath.Join(cur, name)
			d := cur
			r.add(step{op: opMkdirDir, a: [6]uintptr{r.cstr(d), 0o755}}, func(e unix.Errno) error {
				var err error = e
				if e == unix.ENOTDIR {
					err = fmt.Errorf("%q is not a directory (a link on the way is never followed)", d)
				}
				return fmt.Errorf("create the directory of the link %q: %w (%s)", l.Path, err, l.Why)
			})
		}
		r.sys(func(e unix.Errno) error {
			return fmt.Errorf("make the link %q to %q in the private /tmp: %w (%s)", l.Path, l.Target, e, l.Why)
		}, unix.SYS_SYMLINKAT, r.cstr(l.Target), atFDCWD, r.cstr(at))
	}
}

// runtimeDir makes the plan's private XDG_RUNTIME_DIR in the private
// /tmp, mode 0700: the tmpfs is fresh, so nothing a previous run left can
// be there, and mkdir never follows a link at the path. It runs before
// anything is bound into the private /tmp.
func (r *rootSteps) runtimeDir() {
	dir := r.plan.Mounts.RuntimeDir
	if dir == "" {
		return
	}
	if !r.plan.Mounts.PrivateTmp || filepath.Dir(dir) != "/tmp" || strings.Contains(dir[len("/tmp/"):], "/") {
		r.fail(fmt.Errorf("BUG: private XDG_RUNTIME_DIR %q is not a directory of the private /tmp", dir))
		return
	}
	at := r.at(dir)
	r.sys(errorf("create the private XDG_RUNTIME_DIR %q: mkdir: %w", dir), unix.SYS_MKDIRAT, atFDCWD, r.cstr(at), 0o700)
	// The umask may have taken bits off; the spec wants exactly 0700.
	r.sys(errorf("create the private XDG_RUNTIME_DIR %q: chmod: %w", dir), unix.SYS_FCHMODAT, atFDCWD, r.cstr(at), 0o700)
}

func (r *rootSteps) dev() {
	if r.plan.Mounts.Devices == "host" {
		r.attach(r.trees[treeKey("/dev", true)], "/dev", r.at("/dev"), true, false, "")
		return
	}
	dev := r.at("/dev")
	r.mountFS("tmpfs", dev, unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755", "")
	for _, d := range r.devSources() {
		fi, err := os.Stat(d)
		if err != nil {
			continue // a device the host does not have
		}
		r.attach(r.trees[treeKey(d, true)], d, r.at(d), fi.IsDir(), false, "")
	}
	r.sys(errorf("create /dev/pts: %w"), unix.SYS_MKDIRAT, atFDCWD, r.cstr(filepath.Join(dev, "pts")), 0o755)
	r.mountFS("devpts", filepath.Join(dev, "pts"), unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620", "")
	r.bindTerminal(dev) // the caller's, for the command's terminal to have a name
	r.sys(errorf("create /dev/shm: %w"), unix.SYS_MKDIRAT, atFDCWD, r.cstr(filepath.Join(dev, "shm")), 0o1777)
	r.mountFS("tmpfs", filepath.Join(dev, "shm"), unix.MS_NOSUID|unix.MS_NODEV, tmpfsData("1777", r.sizes.ShmMB), "")
	for _, l := range [][2]string{{"ptmx", "pts/ptmx"}, {"fd", "/proc/self/fd"}, {"stdin", "/proc/self/fd/0"}, {"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"}} {
		r.sys(errorf("create /dev/%s: %w", l[0]), unix.SYS_SYMLINKAT, r.cstr(l[1]), atFDCWD, r.cstr(filepath.Join(dev, l[0])))
	}
	flags := uintptr(unix.MS_REMOUNT | unix.MS_BIND | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NOEXEC)
	r.sys(func(e unix.Errno) error {
		return &MountError{Op: "remount read-only", Target: "/dev", Flags: flags, Err: e}
	}, unix.SYS_MOUNT, r.cstr(""), r.cstr(dev), r.cstr(""), flags, r.cstr(""))
}

// bindTerminal binds the caller's terminal at console in the private
// /dev being built at dev. The detached copy is checked to be the very
// node the standard stream is (the name could have been reused since it
// was looked up, by another session's new terminal): when it is not, or
// there is no terminal, or a step fails, nothing is bound, and the
// command's terminal has no name.
func (r *rootSteps) bindTerminal(dev string) {
	path, want, ok := callerTerminal()
	if !ok {
		return
	}
	tree := r.slot()
	open := r.sys(nil, unix.SYS_OPEN_TREE, atFDCWD, r.cstr(path), unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	r.steps[open].out = tree
	same := r.add(step{op: opSameFile, a: [6]uintptr{0, uintptr(want.Dev), uintptr(want.Ino)}}, nil)
	r.steps[same].in[0] = tree
	target := filepath.Join(dev, consoleName)
	file := r.mkfile(target, nil, 0o644)
	r.steps[file].tolerate, r.steps[file].skipErr = errAny, 1 // past its close
	move := r.sys(nil, unix.SYS_MOVE_MOUNT, 0, r.cstr(""), atFDCWD, r.cstr(target), unix.MOVE_MOUNT_F_EMPTY_PATH)
	r.steps[move].in[0], r.steps[move].tolerate = tree, errAny
	closed := len(r.steps)
	r.closeSlot(tree)
	r.steps[same].tolerate, r.steps[same].skipErr = errAny, uint16(closed-same-1)
	r.elseTo(open, errAny)
}

func (r *rootSteps) proc() {
	r.mountFS("proc", r.at("/proc"), unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "", "")
}

func (r *rootSteps) binds() {
	for _, bind := range r.plan.Mounts.Binds {
		// Only binds into the private /tmp lack a target; the steps
		// learn its kind from the captured tree.
		r.attach(r.trees[treeKey(bind.Path, bind.Write)], bind.Path, r.at(bind.Path), false, true, bind.Why)
	}
}

// masks covers every denied path with something empty and unreadable:
// a read-only tmpfs for a directory, an empty mode-0 file for a file.
func (r *rootSteps) masks() {
	empty := filepath.Join(staging, "empty")
	for _, m := range r.plan.Mounts.Masks {
		target := r.at(m.Path)
		if m.Dir {
			r.mountFS("tmpfs", target, unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=000,size=4k", m.Why)
			continue
		}
		check := -1
		if m.Socket {
			// Gone since the plan, no socket (a name in the kernel's
			// table that the child can read and fence could not), or on
			// a way the child cannot search (a directory of a user the
			// namespace does not map, mode 0700): the command, with less
			// than the child, cannot reach a socket there either.
			check = r.add(step{op: opIfMode, a: [6]uintptr{atFDCWD, r.cstr(target), 0, unix.AT_SYMLINK_NOFOLLOW, unix.S_IFSOCK}}, nil)
		}
		if !r.empty {
			r.empty = true
			fd := r.slot()
			i := r.sys(errorf("create mask file: %w"), unix.SYS_OPENAT, atFDCWD, r.cstr(empty), unix.O_CREAT|unix.O_WRONLY|unix.O_TRUNC|unix.O_CLOEXEC, 0)
			r.steps[i].out = fd
			r.closeSlot(fd)
		}
		tree := r.cloneTree(empty, true, false)
		r.attach(tree, empty, target, false, false, m.Why)
		r.closeSlot(tree)
		if check >= 0 {
			r.elseTo(check, errAny)
		}
	}
}

// pivot makes the new root the root, and detaches the old one; where /
// cannot be pivoted (an initramfs root), it moves the new root onto /
// and enters it with chroot.
func (r *rootSteps) pivot() {
	r.sys(errorf("chdir %q: %w", r.root), unix.SYS_CHDIR, r.cstr(r.root))
	dot := r.cstr(".")
	pivot := r.sys(func(e unix.Errno) error {
		return &MountError{Op: "pivot_root", Target: r.root, Err: e}
	}, unix.SYS_PIVOT_ROOT, dot, dot)
	r.sys(func(e unix.Errno) error {
		return &MountError{Op: "umount old root", Target: "/", Err: e}
	}, unix.SYS_UMOUNT2, dot, unix.MNT_DETACH)
	done := r.sys(errorf("chdir /: %w"), unix.SYS_CHDIR, r.cstr("/"))
	moved := len(r.steps)
	r.sys(func(e unix.Errno) error {
		return &MountError{Op: "move new root", Source: ".", Target: "/", Flags: unix.MS_MOVE, Err: e}
	}, unix.SYS_MOUNT, dot, r.cstr("/"), r.cstr(""), unix.MS_MOVE, r.cstr(""))
	r.sys(errorf("chroot: %w"), unix.SYS_CHROOT, dot)
	r.sys(errorf("chdir /: %w"), unix.SYS_CHDIR, r.cstr("/"))
	r.skipTo(done)
	r.steps[pivot].tolerate, r.steps[pivot].skipErr = uintptr(unix.EINVAL), uint16(moved-pivot-1)
}

// isFirstMount reports whether err is the failure of the first mount
// step, which makes the mounts private.
func isFirstMount(err error) bool {
	var me *MountError
	return errors.As(err, &me) && me.Op == "make-rprivate"
}
