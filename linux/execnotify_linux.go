package linux

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/sandbox"
)

// With runtimeExecPolicy "argv", a second seccomp filter hands every
// execve and execveat in the sandbox to the supervisor, which reads the
// program and its argv from the process's memory and lets the call
// continue or fails it with EPERM. The read-then-continue order has a
// known race: another thread of the same process can change the argv
// memory after fence read it and before the kernel does, so this layer
// stops what a program runs in the ordinary way (a child `git push`),
// not a process that races its own exec on purpose.

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
func judgeExec(fd uintptr, n *seccompNotif, plan *sandbox.Plan, told execReports, stderr io.Writer) {
	resp := seccompNotifResp{ID: n.ID, Flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
	argv, err := execArgv(n)
	switch {
	case !notifValid(fd, n.ID):
		return // the process is gone
	case err != nil:
		fmt.Fprintf(stderr, "fence: refused an exec whose arguments could not be read: %v\n", err)
		resp = seccompNotifResp{ID: n.ID, Error: -int32(unix.EPERM)}
	default:
		if v := sandbox.PreflightArgv(plan.ExecRules, argv); v.Blocked {
			if told.first(n.Pid, v.Message()) {
				plan.Recorder.Command(sandbox.LayerExec, v)
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

// execArgv reads the program and argv of a notified execve/execveat. The
// program's path stands in for argv[0], which a caller can set to
// anything (exec -a).
func execArgv(n *seccompNotif) ([]string, error) {
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", n.Pid))
	if err != nil {
		return nil, err
	}
	defer mem.Close()
	pathPtr, argvPtr := n.Data.Args[0], n.Data.Args[1]
	if n.Data.Nr == unix.SYS_EXECVEAT {
		pathPtr, argvPtr = n.Data.Args[1], n.Data.Args[2]
	}
	prog, err := readString(mem, pathPtr)
	if err != nil {
		return nil, err
	}
	var argv []string
	for i := uint64(0); i < 4096; i++ {
		var ptr [8]byte
		if _, err := mem.ReadAt(ptr[:], int64(argvPtr+8*i)); err != nil {
			return nil, err
		}
		p := binary.LittleEndian.Uint64(ptr[:])
		if p == 0 {
			break
		}
		s, err := readString(mem, p)
		if err != nil {
			return nil, err
		}
		argv = append(argv, s)
	}
	if prog != "" {
		if len(argv) == 0 {
			argv = []string{""}
		}
		argv[0] = path.Base(prog)
	}
	return argv, nil
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
