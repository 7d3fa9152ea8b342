package linux

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/linux/startlimit"
	"github.com/fence-sandbox/fence/sandbox"
)

// The supervisor's side of pid 1: preparing what the child runs, and
// saying why a command did not start.

// pid1Names is what the supervisor keeps of a pid1Prog to word its
// reports: the command as given, the PATH it was looked up in, and the
// candidates' paths.
type pid1Names struct {
	name, pathVar string
	cands         []string
}

// newPid1Prog prepares pid 1's duties for plan's command, run with env:
// every string the child passes to the kernel, every buffer it fills.
// namespaces is false in the Landlock-only engine; foreground gives the
// command the terminal; noListener (a nested run without a seccomp
// listener of its own) keeps the command's first exec judgeable by the
// outer sandbox.
func newPid1Prog(plan *sandbox.Plan, env []string, namespaces, foreground, noListener bool) (*pid1Prog, error) {
	if len(plan.Argv) == 0 {
		return nil, fmt.Errorf("no command to run")
	}
	p := &pid1Prog{
		names:        commandCandidates(plan.Argv[0], env),
		slash:        strings.Contains(plan.Argv[0], "/"),
		namespaces:   namespaces,
		foreground:   foreground && !plan.NewSession,
		newSession:   plan.NewSession,
		dumpable:     plan.ExecArgv || noListener,
		addressSpace: plan.Limits.AddressSpaceMB << 20,
		allSigs:      ^uint64(0),
		fwdSigs:      sigBit(unix.SIGCHLD),
	}
	p.nofile = startNoFile(plan.Limits.OpenFiles)
	p.cloneFlags = spawnFlags(p.dumpable)
	for _, s := range forwarded {
		p.fwdSigs |= sigBit(s.(unix.Signal))
	}
	var err error
	if p.argv, err = syscall.SlicePtrFromStrings(plan.Argv); err != nil {
		return nil, fmt.Errorf("command line: %w", err)
	}
	if p.envv, err = syscall.SlicePtrFromStrings(env); err != nil {
		return nil, fmt.Errorf("environment: %w", err)
	}
	if p.cands, err = syscall.SlicePtrFromStrings(p.names.cands); err != nil {
		return nil, fmt.Errorf("command path: %w", err)
	}
	p.console, _ = syscall.BytePtrFromString("/dev/" + consoleName)
	if plan.Proxy != nil && namespaces {
		for _, f := range plan.Proxy.Forwards {
			p.ports = append(p.ports, uint16(f.Port))
		}
	}
	p.iov = unix.Iovec{Base: (*byte)(unsafe.Pointer(&p.out)), Len: uint64(unsafe.Sizeof(p.out))}
	p.msg = unix.Msghdr{Iov: &p.iov, Iovlen: 1}
	p.rights.hdr = unix.Cmsghdr{Len: uint64(unix.CmsgLen(4)), Level: unix.SOL_SOCKET, Type: unix.SCM_RIGHTS}
	p.msgRights = p.msg
	p.msgRights.Control, p.msgRights.Controllen = (*byte)(unsafe.Pointer(&p.rights)), uint64(unsafe.Sizeof(p.rights))
	return p, nil
}

func sigBit(s unix.Signal) uint64 { return 1 << (uint(s) - 1) }

// startNoFile is the open-files limit the command starts with when it has
// none of its own (openFiles 0): the soft limit fence was started with,
// which the Go runtime raised in fence (see package startlimit). Cur is 0
// when there is nothing to restore.
func startNoFile(openFiles uint64) unix.Rlimit {
	soft, _, ok := startlimit.NoFile()
	var now unix.Rlimit
	if openFiles != 0 || !ok || unix.Getrlimit(unix.RLIMIT_NOFILE, &now) != nil || soft == 0 || soft >= now.Cur {
		return unix.Rlimit{}
	}
	return unix.Rlimit{Cur: soft, Max: now.Max}
}

// commandCandidates finds where the command may be, the way a shell would,
// with the command's own PATH: the child takes the first of them that is,
// in the sandbox's view, a file with an execute bit. A command named by a
// path is its only candidate.
func commandCandidates(name string, env []string) pid1Names {
	n := pid1Names{name: name, pathVar: "/usr/local/bin:/usr/bin:/bin"}
	if strings.Contains(name, "/") {
		n.cands = []string{name}
		return n
	}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			n.pathVar = v
		}
	}
	for _, dir := range filepath.SplitList(n.pathVar) {
		n.cands = append(n.cands, filepath.Join(dir, name))
	}
	return n
}

// startFailure words what pid 1 reported when the command did not start,
// as a line for fence to print (without the "fence: " prefix).
func (p *pid1Prog) startFailure(m syncMsg) string {
	n := &p.names
	errno := syscall.Errno(m.Errno)
	if m.Kind == msgPid1Failed {
		return fmt.Sprintf("error: start the command: %s: %v", pid1StepName(m.Step), errno)
	}
	if m.Step < 0 || int(m.Step) >= len(n.cands) {
		return fmt.Sprintf("command not found: %q (PATH=%s)", n.name, n.pathVar)
	}
	path := n.cands[m.Step]
	switch errno {
	case unix.ENOENT:
		return fmt.Sprintf("command not found: %q", n.name)
	case unix.EACCES:
		return fmt.Sprintf("cannot execute %q: permission denied (%s)", n.name, whyText(path, m.Arg>>16, m.Arg&0xffff))
	}
	return fmt.Sprintf("cannot execute %q: %v", n.name, &fs.PathError{Op: "fork/exec", Path: path, Err: errno})
}

// whyText words a reason whyNotExecutable found; arg is the file's
// permission bits, or for whyStat the errno.
func whyText(path string, why, arg uint32) string {
	mode := os.FileMode(arg & 0o777)
	switch why {
	case whyStat:
		return fmt.Sprintf("stat: %v", &fs.PathError{Op: "stat", Path: path, Err: syscall.Errno(arg)})
	case whyDir:
		return "it is a directory"
	case whyNoExecBit:
		return fmt.Sprintf("it lacks the execute bit, mode %v: chmod +x it, or run it through its interpreter", mode)
	case whyNoexecMount:
		return "its filesystem is mounted noexec"
	case whyModeUser:
		return fmt.Sprintf("its mode %v does not let this user execute it", mode)
	}
	return "the policy does not allow executing it, or its interpreter: see filesystem.allowExecute"
}

func pid1StepName(step int32) string {
	switch step {
	case pid1StepSignalfd:
		return "signalfd"
	case pid1StepSubreaper:
		return "prctl(PR_SET_CHILD_SUBREAPER)"
	case pid1StepPipe:
		return "pipe2"
	case pid1StepFork:
		return "clone"
	}
	return fmt.Sprintf("step %d", step)
}
