package linux

import (
	"fmt"
	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// program is a sandbox program being lowered from a plan: the steps the
// child runs (see child_linux.go), and for each what it does, for the
// error the supervisor makes of its failure.
type program struct {
	steps []step
	// whys says, for each step, what failed when it failed with an errno.
	whys []func(unix.Errno) error
	// slots counts the slots the steps use.
	slots int16
	// keep holds the memory the steps point into.
	keep []any
	// sendSlots are the slots of the descriptors sent with the ready
	// message; listeners of them are the proxies' listening sockets.
	sendSlots []int16
	listeners int
	// err is what made the plan impossible to lower, if anything.
	err error
	// stages are where each part of the program starts, for the
	// benchmark that times them (BenchmarkChildStages).
	stages []stage
}

// stage names the part of the program from step at on.
type stage struct {
	name string
	at   int
}

// mark notes that the part name starts here.
func (p *program) mark(name string) { p.stages = append(p.stages, stage{name, len(p.steps)}) }

// fail records err, the first reason the plan cannot be lowered.
func (p *program) fail(err error) {
	if p.err == nil {
		p.err = err
	}
}

// slot returns a new slot (plus one, as step.in and step.out take it).
func (p *program) slot() int16 {
	p.slots++
	return p.slots
}

// cstr returns path as a C string in memory the program keeps.
func (p *program) cstr(s string) uintptr {
	b := append([]byte(s), 0)
	p.keep = append(p.keep, b)
	return uintptr(unsafe.Pointer(&b[0]))
}

// mem returns the address of v, which the program keeps.
func (p *program) mem(v any, at unsafe.Pointer) uintptr {
	p.keep = append(p.keep, v)
	return uintptr(at)
}

// add appends s, which fails with why, and returns its index.
func (p *program) add(s step, why func(unix.Errno) error) int {
	p.steps = append(p.steps, s)
	p.whys = append(p.whys, why)
	return len(p.steps) - 1
}

// sys appends the system call nr with args (fewer than six: the rest 0).
func (p *program) sys(why func(unix.Errno) error, nr uintptr, args ...uintptr) int {
	s := step{nr: nr}
	copy(s.a[:], args)
	return p.add(s, why)
}

// skipTo makes the step i skip, when it succeeds, to the end of the
// program as it is now.
func (p *program) skipTo(i int) { p.steps[i].skipOK = uint16(len(p.steps) - i - 1) }

// elseTo makes the step i tolerate errno (errAny: every one) and skip,
// after it, to the end of the program as it is now.
func (p *program) elseTo(i int, errno uintptr) {
	p.steps[i].tolerate = errno
	p.steps[i].skipErr = uint16(len(p.steps) - i - 1)
}

// failure is the error of step i failing with errno.
func (p *program) failure(i int, errno unix.Errno) error {
	if i < 0 || i >= len(p.whys) || p.whys[i] == nil {
		return fmt.Errorf("sandbox child: step %d failed: %w", i, errno)
	}
	if errno == unix.Errno(errMismatch) {
		return p.whys[i](unix.EINVAL)
	}
	return p.whys[i](errno)
}

// errorf is a why of fmt.Errorf's format, which has one %w for the errno
// last.
func errorf(format string, args ...any) func(unix.Errno) error {
	return func(e unix.Errno) error { return fmt.Errorf(format, append(args, e)...) }
}

// childProg makes what the child runs of p.
func (p *program) childProg(fds childFDs, cloneFlags uintptr, pid1 *pid1Prog) *childProg {
	c := &childProg{
		steps: p.steps, slots: make([]uintptr, p.slots), stat: new(unix.Stat_t), beneath: new(landlockPathBeneath),
		report: new(syncMsg), wait: new(syncMsg), ready: new(syncMsg), msg: new(unix.Msghdr),
		fds: fds, cloneFlags: cloneFlags, pid1: pid1, keep: p.keep, sendSlots: p.sendSlots,
	}
	c.ready.Kind, c.ready.Step = msgReady, int32(p.listeners)
	c.ready.Arg = uint32(len(p.sendSlots))
	iov := &unix.Iovec{Base: (*byte)(unsafe.Pointer(c.ready))}
	iov.SetLen(syncMsgSize)
	c.msg.Iov, c.msg.Iovlen = iov, 1
	if n := len(p.sendSlots); n > 0 {
		cmsg := make([]byte, unix.CmsgSpace(4*n))
		h := (*unix.Cmsghdr)(unsafe.Pointer(&cmsg[0]))
		h.Level, h.Type = unix.SOL_SOCKET, unix.SCM_RIGHTS
		h.SetLen(unix.CmsgLen(4 * n))
		c.rights = unsafe.Slice((*int32)(unsafe.Pointer(&cmsg[unix.CmsgLen(0)])), n)
		c.msg.Control = &cmsg[0]
		c.msg.SetControllen(len(cmsg))
		c.keep = append(c.keep, cmsg)
	}
	c.keep = append(c.keep, iov)
	c.title = argvArea()
	if len(c.title) > len(initArg0) {
		c.titleSrc = []byte(initArg0 + "\x00" + strings.Repeat(" ", len(c.title)-len(initArg0)-1))
	} else {
		c.title = nil
	}
	if cloneFlags&unix.CLONE_NEWPID == 0 {
		c.ppid = uintptr(unix.Getpid())
	}
	return c
}

// argvArea is the memory of this process's command line, whose strings
// the runtime did not copy: /proc/PID/cmdline shows it. It is nil when
// the arguments are not one run of strings there.
func argvArea() []byte {
	if len(os.Args) == 0 {
		return nil
	}
	start := unsafe.StringData(os.Args[0])
	if start == nil {
		return nil
	}
	n := len(os.Args[0]) + 1
	for _, a := range os.Args[1:] {
		if unsafe.StringData(a) != (*byte)(unsafe.Add(unsafe.Pointer(start), n)) {
			return nil
		}
		n += len(a) + 1
	}
	return unsafe.Slice(start, n)
}
