package linux

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// With runtimeExecPolicy "argv", a second seccomp filter hands every
// execve and execveat in the sandbox to the supervisor, which reads the
// program and its argv from the process's memory, judges what the
// kernel will run (the file behind an fd, a script's interpreter line,
// the program a dynamic loader runs), and lets the call continue or
// fails it with EPERM.
//
// The read-then-continue order has a race that seccomp offers no way to
// close (a notification cannot hand the kernel the argv fence judged):
// another thread of the process, or a process sharing its memory, can
// change argv after fence read it and before the kernel copies it, a
// window as long as the judging (BenchmarkExecJudged, about 35 us), which
// a thread rewriting one argument in a loop wins about a third of the
// time (BenchmarkExecArgvRace). Refusing the execs of multi-threaded
// callers would not close it (memory is shared in other ways too) and
// would refuse every Go, Java or Node program. So this layer stops what
// a program runs in the ordinary way (a child `git push`), not a process
// that races its own exec on purpose: the network policy is the
// boundary for that.

// Kernel structures of seccomp user notification.
type seccompData struct {
	Nr   int32
	Arch uint32
	IP   uint64
	Args [6]uint64
}

type seccompNotif struct {
	ID    uint64
	Pid   uint32
	Flags uint32
	Data  seccompData
}

type seccompNotifResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

// execReports are the refusals a process has been told of, so that a
// program searching its PATH (execvp tries every directory) makes one
// line, not one per directory. serveNotify judges execs one at a time.
type execReports map[string]bool

// first reports whether process pid has not had message before.
func (r execReports) first(pid uint32, message string) bool {
	key := fmt.Sprint(pid, " ", message)
	if r[key] {
		return false
	}
	if len(r) >= 1024 {
		clear(r)
	}
	r[key] = true
	return true
}

// judgeExec answers one exec notification. Refusals are reported on
// stderr, since the program only sees EPERM: once for each process and
// command (see execReports).
func judgeExec(fd uintptr, n *seccompNotif, rules *policy.Policy, rec *sandbox.Recorder, told execReports, stderr io.Writer) {
	resp := seccompNotifResp{ID: n.ID, Flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
	call, err := readExec(n)
	switch {
	case !notifValid(fd, n.ID):
		return // the process is gone
	case err != nil:
		fmt.Fprintf(stderr, "fence: refused an exec whose arguments could not be read: %v\n", err)
		resp = seccompNotifResp{ID: n.ID, Error: -int32(unix.EPERM)}
	default:
		if v := judgeCall(rules, call); v.Blocked {
			if told.first(n.Pid, v.Message()) {
				rec.Command(sandbox.LayerExec, v)
				fmt.Fprintf(stderr, "fence: %s (at exec)\n", v.Message())
			}
			resp = seccompNotifResp{ID: n.ID, Error: -int32(unix.EPERM)}
		}
	}
	unix.Syscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp)))
}

func notifValid(fd uintptr, id uint64) bool {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, uintptr(unsafe.Pointer(&id)))
	return e == 0
}

// execCall is a notified execve or execveat as the caller made it.
type execCall struct {
	pid   uint32
	path  string // the program's path as given ("" for an fd's exec)
	dirfd int32  // execveat's directory fd, AT_FDCWD for execve
	flags int    // execveat's flags
	argv  []string
}

// readExec reads the program and argv of a notified execve/execveat.
func readExec(n *seccompNotif) (execCall, error) {
	c := execCall{pid: n.Pid, dirfd: unix.AT_FDCWD}
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", n.Pid))
	if err != nil {
		return c, err
	}
	defer mem.Close()
	pathPtr, argvPtr := n.Data.Args[0], n.Data.Args[1]
	if n.Data.Nr == unix.SYS_EXECVEAT {
		c.dirfd, c.flags = int32(n.Data.Args[0]), int(n.Data.Args[4])
		pathPtr, argvPtr = n.Data.Args[1], n.Data.Args[2]
	}
	if c.path, err = readString(mem, pathPtr); err != nil {
		return c, err
	}
	for i := uint64(0); i < 4096; i++ {
		var ptr [8]byte
		if _, err := mem.ReadAt(ptr[:], int64(argvPtr+8*i)); err != nil {
			return c, err
		}
		p := binary.LittleEndian.Uint64(ptr[:])
		if p == 0 {
			break
		}
		s, err := readString(mem, p)
		if err != nil {
			return c, err
		}
		c.argv = append(c.argv, s)
	}
	if len(c.argv) == 0 {
		c.argv = []string{""}
	}
	return c, nil
}

// judgeCall judges what an exec will run: the program by the name it is
// called by and by the name of the file that name resolves to (an fd's
// file included), and for a script each interpreter line the kernel
// follows without another exec. A file with no name (a memfd, an
// O_TMPFILE or deleted file) is refused: nothing says what it is.
func judgeCall(rules *policy.Policy, c execCall) sandbox.Verdict {
	if c.path != "" {
		if v := judgeAs(rules, c.path, c.argv); v.Blocked {
			return v
		}
	}
	f, err := openExec(c.pid, c.dirfd, c.path, c.flags)
	if err != nil {
		if c.path != "" && (errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EACCES)) {
			return sandbox.Verdict{} // the kernel cannot run it either, or fence may not read it (judged by name)
		}
		return sandbox.Verdict{Blocked: true, Command: strings.Join(c.argv, " "),
			Reason: fmt.Sprintf("fence cannot open the program to judge it (%v)", err)}
	}
	defer f.Close()
	return judgeFile(rules, c.pid, f, scriptName(c), c.argv, 0)
}

// maxScripts is how many interpreter lines the kernel follows in one exec
// (fs/exec.c exec_binprm; the sixth file must be a binary, else ELOOP).
const maxScripts = 5

// judgeFile judges the open program f of an exec whose argv is argv, by
// the name of its file, by the denied program it is (a hard link or a
// copy under another name) and, for a script, by the interpreter line.
func judgeFile(rules *policy.Policy, pid uint32, f *os.File, filename string, argv []string, depth int) sandbox.Verdict {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return sandbox.Verdict{} // the kernel runs only regular files
	}
	name, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Nlink == 0 || strings.HasPrefix(name, "/memfd:") || strings.HasSuffix(name, " (deleted)") {
		return sandbox.Verdict{Blocked: true, Command: strings.Join(argv, " "),
			Reason: fmt.Sprintf("the program is an anonymous file %q (a memfd, or a file with no name left); "+
				"command.runtimeExecPolicy \"argv\" cannot tell what it is, so it refuses it: "+
				"run the program from a file, or use runtimeExecPolicy \"path\"", strings.TrimPrefix(name, "/"))}
	}
	if path.Base(name) != path.Base(filename) { // judged by that name already
		if v := judgeAs(rules, name, argv); v.Blocked {
			return v
		}
	}
	if denied := sandbox.DeniedProgram(rules, f); denied != "" { // a hard link or a copy
		if v := judgeAs(rules, denied, argv); v.Blocked {
			return v
		}
	}
	buf := make([]byte, binprmBufSize)
	n, _ := f.ReadAt(buf, 0)
	interp, next, ok := shebangArgv(buf[:n], filename, argv)
	if !ok {
		if sandbox.IsLoader(path.Base(name)) || sandbox.IsLoader(path.Base(filename)) || isLoaderELF(f, buf[:n]) {
			if v := judgeAs(rules, sandbox.LoaderWrapper, argv); v.Blocked {
				return v
			}
			return judgeLoaded(rules, pid, argv, depth)
		}
		return sandbox.Verdict{}
	}
	if v := judgeAs(rules, interp, next); v.Blocked {
		return v
	}
	if depth+1 >= maxScripts {
		return sandbox.Verdict{} // a further script fails with ELOOP
	}
	g, err := openExec(pid, unix.AT_FDCWD, interp, 0)
	if err != nil {
		return sandbox.Verdict{} // judged by name; the kernel opens it the same way
	}
	defer g.Close()
	return judgeFile(rules, pid, g, interp, next, depth+1)
}

// judgeLoaded judges the program a dynamic loader is to run as the file
// it is in the sandbox (a link in the sandbox's own /dev/shm, an fd of
// the caller's), not by its path in fence's view.
func judgeLoaded(rules *policy.Policy, pid uint32, argv []string, depth int) sandbox.Verdict {
	op, ok := sandbox.LoaderOperand(argv)
	if !ok || depth+1 >= maxScripts {
		return sandbox.Verdict{}
	}
	g, err := openExec(pid, unix.AT_FDCWD, op[0], 0)
	if err != nil {
		return sandbox.Verdict{} // the loader cannot open it either, or it is judged by name
	}
	defer g.Close()
	return judgeFile(rules, pid, g, op[0], op, depth+1)
}

// judgeAs judges argv with the program prog in argv[0]'s place, which a
// caller can set to anything (exec -a), and, for git, as the subcommand
// argv[0] names. A dynamic loader known only by
// its name's pattern is named so that preflight unwraps it.
func judgeAs(rules *policy.Policy, prog string, argv []string) sandbox.Verdict {
	name := path.Base(prog)
	if sandbox.IsLoader(name) {
		name = sandbox.LoaderWrapper
	}
	a := slices.Clone(argv)
	a[0] = name
	if v := sandbox.PreflightArgv(rules, a); v.Blocked {
		return v
	}
	// git runs the subcommand its argv[0] names: git-push is git push,
	// whatever file the name is on.
	if sub, ok := strings.CutPrefix(path.Base(argv[0]), "git-"); ok && sub != "" && name == "git" {
		return sandbox.PreflightArgv(rules, append([]string{"git", sub}, argv[1:]...))
	}
	return sandbox.Verdict{}
}

// scriptName is the path the kernel gives a script's interpreter
// (fs/exec.c alloc_bprm): the path as given, or /dev/fd/N[/path] when it
// is found from an fd.
func scriptName(c execCall) string {
	switch {
	case c.path == "":
		return fmt.Sprintf("/dev/fd/%d", c.dirfd)
	case strings.HasPrefix(c.path, "/") || c.dirfd == unix.AT_FDCWD:
		return c.path
	}
	return fmt.Sprintf("/dev/fd/%d/%s", c.dirfd, c.path)
}

// openExec opens, for reading, the file process pid runs with an exec of
// p from dirfd (execveat's arguments; AT_FDCWD for execve). An absolute
// path is resolved in the process's root; /proc/self, /dev/fd and
// /dev/std* are the process's own.
func openExec(pid uint32, dirfd int32, p string, flags int) (*os.File, error) {
	proc := fmt.Sprintf("/proc/%d/", pid)
	var host string
	switch own := procSelf(p); {
	case p == "" && flags&unix.AT_EMPTY_PATH != 0:
		host = fmt.Sprintf("%sfd/%d", proc, dirfd)
	case p == "":
		return nil, unix.ENOENT
	case own != "":
		host = proc + own
	case strings.HasPrefix(p, "/"):
		return openInRoot(proc+"root", p)
	case dirfd == unix.AT_FDCWD:
		host = proc + "cwd/" + p
	default:
		host = fmt.Sprintf("%sfd/%d/%s", proc, dirfd, p)
	}
	fd, err := unix.Open(host, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: host, Err: err}
	}
	return os.NewFile(uintptr(fd), host), nil
}

// openInRoot opens p with root as its root directory.
func openInRoot(root, p string) (*os.File, error) {
	dir, err := unix.Open(root, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: root, Err: err}
	}
	defer unix.Close(dir)
	fd, err := unix.Openat2(dir, p, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err == unix.ENOSYS { // before Linux 5.6: a link in p is followed in fence's root
		fd, err = unix.Open(root+p, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, &os.PathError{Op: "openat2", Path: p, Err: err}
	}
	return os.NewFile(uintptr(fd), p), nil
}

// procSelf returns the part of /proc/PID/ that a path of the process's
// own (/proc/self/..., /dev/fd/N, /dev/stdin) names, or "".
func procSelf(p string) string {
	for _, prefix := range []string{"/proc/self/", "/proc/thread-self/"} {
		if rest, ok := strings.CutPrefix(p, prefix); ok && rest != "" {
			return rest
		}
	}
	if rest, ok := strings.CutPrefix(p, "/dev/fd/"); ok && rest != "" {
		return "fd/" + rest
	}
	if i := slices.Index([]string{"/dev/stdin", "/dev/stdout", "/dev/stderr"}, p); i >= 0 {
		return fmt.Sprintf("fd/%d", i)
	}
	return ""
}

// isLoaderELF reports whether f, starting with head, is a dynamic loader
// under any name (a copy of ld-linux-x86-64.so.2 called mytool): an ELF
// file without an interpreter of its own whose DT_SONAME is a loader's.
// Only a file with no PT_INTERP but a PT_DYNAMIC (a loader, or a static
// PIE) is parsed further, so an ordinary program costs one read.
func isLoaderELF(f *os.File, head []byte) bool {
	if len(head) < 64 || string(head[:4]) != "\x7fELF" || head[4] != 2 || head[5] != 1 {
		return false // not a 64-bit little-endian ELF file
	}
	phoff := binary.LittleEndian.Uint64(head[32:])
	phentsize, phnum := int(binary.LittleEndian.Uint16(head[54:])), int(binary.LittleEndian.Uint16(head[56:]))
	if phentsize < 56 || phnum == 0 || phnum > 256 {
		return false
	}
	phdrs := make([]byte, phentsize*phnum)
	if _, err := f.ReadAt(phdrs, int64(phoff)); err != nil {
		return false
	}
	dynamic := false
	for i := 0; i < phnum; i++ {
		switch elf.ProgType(binary.LittleEndian.Uint32(phdrs[i*phentsize:])) {
		case elf.PT_INTERP:
			return false
		case elf.PT_DYNAMIC:
			dynamic = true
		}
	}
	if !dynamic {
		return false
	}
	e, err := elf.NewFile(f)
	if err != nil {
		return false
	}
	names, err := e.DynString(elf.DT_SONAME)
	return err == nil && len(names) == 1 && sandbox.IsLoader(names[0])
}

// binprmBufSize is how much of a file the kernel reads to find an
// interpreter line (include/uapi/linux/binfmts.h BINPRM_BUF_SIZE).
const binprmBufSize = 256

// shebangArgv returns, for a file starting with head that is run as
// filename with argv, the interpreter the kernel runs and its argv, as
// fs/binfmt_script.c finds them in the file's first 256 bytes: the
// interpreter, everything after the first run of blanks that follows it
// as one argument, the script's path, then argv[1:]. ok is false when
// the kernel would not run the file as a script.
func shebangArgv(head []byte, filename string, argv []string) (interp string, next []string, ok bool) {
	var buf [binprmBufSize]byte // the kernel's buffer, zero past the file's end
	copy(buf[:], head)
	if buf[0] != '#' || buf[1] != '!' {
		return "", nil, false
	}
	blank := func(c byte) bool { return c == ' ' || c == '\t' }
	nonBlank := func(i, end int) int {
		for ; i < end; i++ {
			if !blank(buf[i]) {
				return i
			}
		}
		return -1
	}
	terminator := func(i, end int) int {
		for ; i < end; i++ {
			if blank(buf[i]) || buf[i] == 0 {
				return i
			}
		}
		return -1
	}
	last := len(buf) - 1
	end := bytes.IndexByte(buf[:], '\n')
	if end < 0 {
		i := nonBlank(2, last)
		if i < 0 || terminator(i, last) < 0 {
			return "", nil, false // all blanks, or an interpreter path cut short
		}
		end = last
	}
	for blank(buf[end-1]) {
		end--
	}
	name := nonBlank(2, end)
	if name < 0 || name == end {
		return "", nil, false
	}
	arg, sep := -1, terminator(name, end)
	if sep >= 0 && buf[sep] != 0 {
		arg = nonBlank(sep, end)
	}
	buf[end] = 0
	if sep >= 0 {
		buf[sep] = 0
	}
	cstr := func(i int) string { return string(buf[i : i+bytes.IndexByte(buf[i:], 0)]) }
	interp = cstr(name)
	next = []string{interp}
	if arg >= 0 {
		next = append(next, cstr(arg))
	}
	next = append(next, filename)
	return interp, append(next, argv[1:]...), true
}
func readString(mem *os.File, addr uint64) (string, error) {
	var out []byte
	buf := make([]byte, 256)
	for len(out) < 1<<16 {
		n, err := mem.ReadAt(buf, int64(addr)+int64(len(out)))
		if i := bytes.IndexByte(buf[:n], 0); i >= 0 {
			return string(append(out, buf[:i]...)), nil
		}
		if err != nil && n == 0 {
			return "", err
		}
		out = append(out, buf[:n]...)
	}
	return "", errors.New("argument too long")
}
