// Command modeprobe tries, from inside a sandbox, every system call that
// changes a file's mode, owner or extended attributes, or creates a file
// with a mode. It prints one line per attempt: "CALL PATH: ok" or
// "CALL PATH: <error>".
//
//	modeprobe chmod MODE PATH...   chmod, fchmodat, fchmodat2, fchmod (and SYS_CHMOD on amd64)
//	modeprobe create MODE PATH     openat, mknodat, openat2 (and open, creat on amd64), at PATH.CALL
//	modeprobe chown PATH...        fchownat, fchown to the caller's own ids
//	modeprobe xattr PATH...        a user attribute and an ACL granting others rwx, then removal
//	modeprobe subreaper CMD...     become a child subreaper, run CMD, then hold on to its orphans
//	modeprobe others PID           the calls that act on another process, on PID ("other") and on
//	                               itself ("self"), each setting what it first read back unchanged
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: modeprobe chmod|create MODE PATH... | chown|xattr PATH...")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "subreaper":
		subreaper(os.Args[2:])
	case "others":
		pid, err := strconv.Atoi(os.Args[2])
		if err != nil {
			fmt.Fprintf(os.Stderr, "bad pid %q\n", os.Args[2])
			os.Exit(2)
		}
		others("other", pid, pid)
		others("self", 0, os.Getpid())
	case "chmod":
		mode := parseMode(os.Args[2])
		for _, p := range os.Args[3:] {
			chmod(p, mode)
		}
	case "create":
		create(os.Args[3], parseMode(os.Args[2]))
	case "chown":
		for _, p := range os.Args[2:] {
			try("fchownat", p, func() error { return unix.Fchownat(unix.AT_FDCWD, p, os.Getuid(), os.Getgid(), 0) })
			withFD(p, "fchown", func(fd int) error { return unix.Fchown(fd, os.Getuid(), os.Getgid()) })
		}
	case "xattr":
		for _, p := range os.Args[2:] {
			try("setxattr-user", p, func() error { return unix.Setxattr(p, "user.fence", []byte("x"), 0) })
			try("setxattr-acl", p, func() error { return unix.Setxattr(p, "system.posix_acl_access", othersRWX(), 0) })
			withFD(p, "fsetxattr", func(fd int) error { return unix.Fsetxattr(fd, "user.fence", []byte("x"), 0) })
			try("removexattr", p, func() error { return unix.Removexattr(p, "user.fence") })
		}
	}
}

// subreaper runs argv as a child subreaper, so that what argv leaves
// running becomes this process's, and then never exits.
func subreaper(argv []string) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Run()
	for {
		unix.Pause()
	}
}

func parseMode(s string) uint32 {
	m, err := strconv.ParseUint(s, 8, 32)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bad mode %q\n", s)
		os.Exit(2)
	}
	return uint32(m)
}

func chmod(p string, mode uint32) {
	if runtime.GOARCH == "amd64" {
		try("chmod", p, func() error { return raw(unix.SYS_CHMOD, ptr(p), uintptr(mode)) })
	}
	try("fchmodat", p, func() error { return raw(unix.SYS_FCHMODAT, atFDCWD, ptr(p), uintptr(mode)) })
	try("fchmodat2", p, func() error {
		err := raw(unix.SYS_FCHMODAT2, atFDCWD, ptr(p), uintptr(mode), 0)
		if errors.Is(err, unix.ENOSYS) {
			return nil // a kernel before 6.6: nothing to refuse
		}
		return err
	})
	withFD(p, "fchmod", func(fd int) error { return unix.Fchmod(fd, mode) })
}

func create(p string, mode uint32) {
	flags := uintptr(unix.O_CREAT | unix.O_WRONLY | unix.O_EXCL | unix.O_CLOEXEC)
	if runtime.GOARCH == "amd64" {
		try("open", p+".open", func() error { return closing(unix.SYS_OPEN, ptr(p+".open"), flags, uintptr(mode)) })
		try("creat", p+".creat", func() error { return closing(unix.SYS_CREAT, ptr(p+".creat"), uintptr(mode)) })
	}
	try("openat", p+".openat", func() error { return closing(unix.SYS_OPENAT, atFDCWD, ptr(p+".openat"), flags, uintptr(mode)) })
	try("mknodat", p+".mknodat", func() error {
		return raw(unix.SYS_MKNODAT, atFDCWD, ptr(p+".mknodat"), uintptr(unix.S_IFREG|mode), 0)
	})
	try("openat2", p+".openat2", func() error {
		how := unix.OpenHow{Flags: uint64(flags), Mode: uint64(mode)}
		return closing(unix.SYS_OPENAT2, atFDCWD, ptr(p+".openat2"), uintptr(unsafe.Pointer(&how)), unsafe.Sizeof(how))
	})
}

// othersRWX is a POSIX ACL (version 2): owner rwx, group r, others rwx.
func othersRWX() []byte {
	b := []byte{2, 0, 0, 0}
	for _, e := range []struct{ tag, perm uint16 }{{0x01, 7}, {0x04, 4}, {0x20, 7}} {
		b = append(b, byte(e.tag), byte(e.tag>>8), byte(e.perm), byte(e.perm>>8), 0xff, 0xff, 0xff, 0xff)
	}
	return b
}

var atFDCWD = func() uintptr { fd := unix.AT_FDCWD; return uintptr(fd) }()

func ptr(s string) uintptr {
	b, _ := unix.BytePtrFromString(s)
	return uintptr(unsafe.Pointer(b))
}

func raw(nr uintptr, args ...uintptr) error {
	var a [6]uintptr
	copy(a[:], args)
	_, _, e := unix.Syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5])
	if e != 0 {
		return e
	}
	return nil
}

// closing makes a system call that returns a descriptor, and closes it.
func closing(nr uintptr, args ...uintptr) error {
	var a [6]uintptr
	copy(a[:], args)
	fd, _, e := unix.Syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5])
	if e != 0 {
		return e
	}
	return unix.Close(int(fd))
}

func withFD(p, name string, f func(fd int) error) {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		fmt.Printf("%s %s: open: %v\n", name, p, err)
		return
	}
	defer unix.Close(fd)
	try(name, p, func() error { return f(fd) })
}

func try(name, p string, f func() error) {
	if err := f(); err != nil {
		fmt.Printf("%s %s: %v\n", name, p, err)
		return
	}
	fmt.Printf("%s %s: ok\n", name, p)
}

// others tries on pid (0: the caller) each call that changes another
// process's limits or scheduling, setting the value it read, and the ones
// that go through ptrace's access check; real is the pid where 0 will not do.
func others(label string, pid, real int) {
	try("prlimit64", label, func() error {
		var lim unix.Rlimit
		if err := raw(unix.SYS_PRLIMIT64, uintptr(pid), unix.RLIMIT_NOFILE, 0, uintptr(unsafe.Pointer(&lim))); err != nil {
			return fmt.Errorf("get: %w", err)
		}
		return raw(unix.SYS_PRLIMIT64, uintptr(pid), unix.RLIMIT_NOFILE, uintptr(unsafe.Pointer(&lim)), 0)
	})
	try("setpriority", label, func() error {
		prio, err := unix.Getpriority(unix.PRIO_PROCESS, pid)
		if err != nil {
			return fmt.Errorf("get: %w", err)
		}
		return unix.Setpriority(unix.PRIO_PROCESS, pid, 20-prio)
	})
	try("ioprio_set", label, func() error {
		prio, _, e := unix.Syscall(unix.SYS_IOPRIO_GET, 1, uintptr(pid), 0)
		if e != 0 {
			return fmt.Errorf("get: %w", e)
		}
		return raw(unix.SYS_IOPRIO_SET, 1, uintptr(pid), prio)
	})
	try("sched_setaffinity", label, func() error {
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(pid, &set); err != nil {
			return fmt.Errorf("get: %w", err)
		}
		return unix.SchedSetaffinity(pid, &set)
	})
	var param [8]byte // struct sched_param: priority 0, for SCHED_OTHER
	try("sched_setscheduler", label, func() error {
		return raw(unix.SYS_SCHED_SETSCHEDULER, uintptr(pid), 0, uintptr(unsafe.Pointer(&param)))
	})
	try("sched_setparam", label, func() error {
		return raw(unix.SYS_SCHED_SETPARAM, uintptr(pid), uintptr(unsafe.Pointer(&param)))
	})
	try("sched_setattr", label, func() error {
		attr, err := unix.SchedGetAttr(pid, 0)
		if err != nil {
			return fmt.Errorf("get: %w", err)
		}
		return unix.SchedSetAttr(pid, attr, 0)
	})
	try("kcmp", label, func() error { return raw(unix.SYS_KCMP, uintptr(os.Getpid()), uintptr(real), 1 /* KCMP_FILES */, 0, 0) })
	pidfd, err := unix.PidfdOpen(real, 0)
	if err != nil {
		fmt.Printf("pidfd_open %s: %v\n", label, err)
		return
	}
	defer unix.Close(pidfd)
	try("pidfd_getfd", label, func() error {
		fd, err := unix.PidfdGetfd(pidfd, 0, 0)
		if err == nil {
			unix.Close(fd)
		}
		return err
	})
	try("process_madvise", label, func() error {
		page := make([]byte, os.Getpagesize())
		iov := unix.Iovec{Base: &page[0]}
		iov.SetLen(len(page))
		_, _, e := unix.Syscall6(unix.SYS_PROCESS_MADVISE, uintptr(pidfd), uintptr(unsafe.Pointer(&iov)), 1, unix.MADV_COLD, 0, 0)
		if e != 0 {
			return e
		}
		return nil
	})
}
